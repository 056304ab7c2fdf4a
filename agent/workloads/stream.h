// `stream`: a dd-like sequential pass over one file. WRITE writes size bytes in block_size
// calls; READ reads a file that Prepare laid out and evicted from the page cache. With
// `fdatasync`, one fdatasync closes the timed region (dd conv=fdatasync); with `direct`, the
// file is opened with O_DIRECT.
//
// Data is random (incompressible) and every 4 KiB carries its own offset, so that
// deduplicating or compressing storage cannot shortcut the work.
#ifndef STORMARK_AGENT_WORKLOADS_STREAM_H_
#define STORMARK_AGENT_WORKLOADS_STREAM_H_

#include <memory>

#include "agent/targets/dir_target.h"
#include "agent/workloads/workload.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class StreamWorkload final : public Workload {
 public:
  // `filesystem` is the target's filesystem type, for the tmpfs warning. The page cache is
  // handled without the 2xRAM rule: writes are flushed inside the timed region (fdatasync or
  // direct, else a warning), and reads start from a file evicted from the cache.
  StreamWorkload(const stormark::v1::StreamSpec& spec, std::unique_ptr<DirTarget> target,
                 std::string filesystem);
  ~StreamWorkload() override;

  // Checks the parameters (without touching the target) and returns the first problem.
  static common::Status Validate(const stormark::v1::StreamSpec& spec);

  common::Status Prepare(const std::atomic<bool>& cancelled,
                         std::vector<std::string>* warnings) override;
  common::Status Run(RunContext& ctx) override;
  int Cleanup() override;

 private:
  // Fills buf_ for the block at `offset`: random data with the offset stamped per 4 KiB.
  void StampBlock(uint64_t offset);
  common::Status LayOutFile(const std::atomic<bool>& cancelled,
                            std::vector<std::string>* warnings);

  const stormark::v1::StreamSpec spec_;
  std::unique_ptr<DirTarget> target_;
  const std::string filesystem_;
  // Page-aligned, block_size bytes; owned.
  char* buf_ = nullptr;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_STREAM_H_
