// `bonnie`: the bonnie++ 2.00 suite on a directory target, test for test, with bonnie++'s
// semantics (see bonnie_io.h and bonnie_files.h for each test).
//
// The result holds one Measurement per test, named by its bonnie++ CSV column and in the
// order bonnie++ runs them: putc, put_block, rewrite, getc, get_block, seeks, seq_create,
// seq_stat, seq_del, ran_create, ran_stat, ran_del. A test the spec skips is still listed,
// with `skipped` set, so that every report has every column. The phase totals (bytes, ops,
// latency, series) are the sum of the tests, except that the per-character tests count one
// operation per MiB there (their Measurement counts characters, as bonnie++ does).
//
// Sizes follow bonnie++: the data file is size_bytes, or 2 x RAM when that is 0 (rounded
// up to a whole GiB when over half a GiB above one, as bonnie++ rounds, then down to a whole
// chunk). `resolved` reports what ran: size_bytes, ram_bytes, chunk_size, char_size_bytes,
// seeks, seekers, files_k, file_max_bytes, file_min_bytes, file_dirs, file_chunk_size, seed.
#ifndef STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_H_
#define STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_H_

#include <memory>
#include <string>
#include <vector>

#include "agent/host/sysinfo.h"
#include "agent/dir/dir.h"
#include "agent/workloads/bonnie/bonnie_common.h"
#include "agent/workloads/workload.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class BonnieWorkload final : public Workload {
 public:
  // `host` gives the RAM for the 2 x rule when the spec names none; `filesystem` is the
  // target's filesystem type, for the tmpfs warning.
  BonnieWorkload(const stormark::v1::BonnieSpec& spec, std::unique_ptr<Dir> target,
                 const HostFacts& host, std::string filesystem);
  ~BonnieWorkload() override;

  // The parameters a spec runs with on a host with `host_ram_bytes` of memory: defaults
  // filled in, the 2 x RAM rule applied, char size capped at the file size. A seed of 0
  // stays 0 here (Prepare picks one). FAILED_PRECONDITION when the size needs the RAM and
  // it is unknown.
  static common::StatusOr<BonnieParams> Resolve(const stormark::v1::BonnieSpec& spec,
                                                uint64_t host_ram_bytes);

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  CleanupReport Cleanup() override;
  void AddToResult(stormark::v1::PhaseResult* result) const override;

 private:
  common::Status RunIoTests(RunContext& ctx, common::Recorder* recorder);
  common::Status RunFileTests(RunContext& ctx, common::Recorder* recorder);
  // Appends a finished test's Measurement, or passes its error on.
  common::Status Add(common::StatusOr<stormark::v1::Measurement> measurement);

  const stormark::v1::BonnieSpec spec_;
  std::unique_ptr<Dir> target_;
  const uint64_t host_ram_bytes_;
  const std::string filesystem_;
  BonnieParams params_;
  bool prepared_ = false;
  // Written by Run, read by AddToResult after Run returned.
  std::vector<stormark::v1::Measurement> measurements_;
  // How long removing the data file took after the seeks (freeing its cached pages); -1 when
  // it was not removed. bonnie++ 2.00 may count it in its seeks figure, and a note says so.
  int64_t data_file_delete_nanos_ = -1;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_H_
