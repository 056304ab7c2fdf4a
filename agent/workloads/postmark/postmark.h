// `postmark`: PostMark 1.5's small-file benchmark (a mail or news server's files) on a
// directory target, with PostMark's parameters, choices (postmark_model.h) and file
// operations (postmark_files.h).
//
// Prepare does what PostMark does before its clock starts: it seeds the generator, draws
// the text files are written from, and makes the subdirectories. It also checks free space.
// Run is PostMark's timed "run": it creates the pool of `number` files ("creation alone"),
// runs the transactions ("mixed with transactions"), and deletes every file that is left
// ("deletion alone"). Cleanup removes the subdirectories, which PostMark also does after
// stopping its clock, and anything a cancelled run left.
//
// The result holds these Measurements, in this order (elapsed is the part's wall time, from
// the monotonic clock, so figures have sub-second precision where PostMark's time() has
// one-second steps):
//
//   total         the whole run: pool, transactions and teardown (PostMark's "N seconds
//                 total"). ops = every file operation; bytes = bytes read + written.
//   create_alone  the pool's files: ops = files, bytes = bytes written; latency per create.
//   transactions  ops = transactions run, bytes = bytes read + written by them; latency per
//                 transaction (both halves).
//   create_mixed, read, append, delete_mixed
//                 the operations of the transactions: ops = files, bytes = bytes written
//                 (create_mixed, append) or read (read); latency per operation. Their elapsed
//                 is the transactions' (the rates PostMark prints divide by it); their CPU is
//                 0 (the transactions' CPU is in `transactions`).
//   delete_alone  the teardown: ops = files deleted; latency per delete.
//
// A create is open + writes + close, a read open + reads + close, an append open + writes +
// close, a delete one unlink. A part timed over less than 0.5 s is marked too_fast.
//
// `resolved` holds the settings that ran (number, min_size_bytes, max_size_bytes,
// transactions, subdirectories, read_block_size, write_block_size, buffering "buffered" or
// "unbuffered", bias_read, bias_create, seed), and what happened: transactions_run,
// out_of_files ("true" when the run ran out of files and stopped early, as PostMark does),
// peak_files and peak_file_bytes (the most files, and bytes in files, that existed at once).
#ifndef STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_H_
#define STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/host/sysinfo.h"
#include "agent/dir/dir.h"
#include "agent/workloads/postmark/postmark_files.h"
#include "agent/workloads/postmark/postmark_model.h"
#include "agent/workloads/workload.h"
#include "common/cpu_times.h"
#include "common/histogram.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Parts timed over less than this are marked too_fast (bonnie++'s and the phase's rule).
inline constexpr int64_t kPostmarkMinTimeNanos = 500'000'000;

class PostmarkWorkload final : public Workload {
 public:
  // `host` gives the RAM for the page-cache warning; `filesystem` is the target's
  // filesystem type, for the tmpfs warning.
  PostmarkWorkload(const stormark::v1::PostmarkSpec& spec, std::unique_ptr<Dir> target,
                   const HostFacts& host, std::string filesystem);
  ~PostmarkWorkload() override;

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  CleanupReport Cleanup() override;
  void AddToResult(stormark::v1::PhaseResult* result) const override;

 private:
  // Operations of one kind within one part of the run.
  struct OpStats {
    common::LatencyHistogram latency;
    uint64_t ops = 0;
    uint64_t bytes = 0;
  };
  // Performs `op`, timing it into `stats` and the phase's recorder. Returns its latency.
  common::StatusOr<uint64_t> Timed(const PostmarkOp& op, OpStats* stats);
  OpStats* MixedStats(const PostmarkOp& op);
  common::Status CheckCancelled(const RunContext& ctx, const char* part) const;
  void NotePeak();

  const stormark::v1::PostmarkSpec spec_;
  std::unique_ptr<Dir> target_;
  const uint64_t host_ram_bytes_;
  const std::string filesystem_;
  PostmarkParams params_;
  std::unique_ptr<PostmarkModel> model_;
  std::unique_ptr<PostmarkFiles> files_;
  bool cache_warned_ = false;

  // Written by Run, read by AddToResult after Run returned.
  const common::Clock* clock_ = nullptr;
  common::Recorder* recorder_ = nullptr;
  OpStats create_alone_, create_mixed_, read_, append_, delete_mixed_, delete_alone_;
  OpStats transactions_;
  bool finished_ = false;
  // Part boundaries (monotonic ns) and CPU readings at them; a boundary not reached is unset.
  std::optional<int64_t> start_, transactions_start_, teardown_start_, end_;
  common::CpuTimes cpu_start_, cpu_transactions_, cpu_teardown_, cpu_end_;
  uint64_t peak_files_ = 0;
  uint64_t peak_bytes_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_POSTMARK_POSTMARK_H_
