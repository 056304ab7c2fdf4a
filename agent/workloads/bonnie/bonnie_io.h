// bonnie++'s I/O tests on one data file, in the order bonnie++ runs them:
//
//   putc       writes char_size bytes, one write(2) each, as bonnie++ 2.00 does (one value
//              per MiB in the histogram)
//   put_block  writes the file from scratch, size bytes in write() calls of one chunk
//   rewrite    for every chunk: read it, dirty one byte, lseek back, write it
//   getc       reads the first char_size bytes, one read(2) each
//   get_block  reads the file in read() calls of one chunk
//   seeks      `seekers` threads share `seeks` lseek+read of one chunk at random chunk offsets,
//              each taking its next chunk as a ticket read from a pipe that the test writes,
//              as bonnie++ 2.00's seekers do (the read(2) per seek is part of the figure);
//              the first of every ten seeks of each seeker also dirties the chunk and writes
//              it back (fsync'd with fsync_every_write)
//
// As in bonnie++, every test ends with fsync and close inside its timed region, and opening
// the file is outside it. With `direct`, the block tests (put_block, rewrite, get_block,
// seeks) use O_DIRECT; the per-character tests never do.
//
// Memory is O(chunk) per thread; the file is never buffered. Each test checks `cancelled`
// between operations and returns CANCELLED. Not thread-safe: one caller runs the tests in turn.
#ifndef STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_IO_H_
#define STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_IO_H_

#include <atomic>

#include "agent/dir/dir.h"
#include "agent/workloads/bonnie/bonnie_common.h"
#include "agent/workloads/workload.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// The data file's name in the phase directory.
inline constexpr char kBonnieDataFile[] = "bonnie.data";

class BonnieIoTests {
 public:
  // `target` and `ctx` must outlive this object; `recorder` belongs to the calling thread.
  BonnieIoTests(const BonnieParams& params, Dir* target, RunContext& ctx,
                common::Recorder* recorder);

  common::StatusOr<stormark::v1::Measurement> Putc();
  common::StatusOr<stormark::v1::Measurement> PutBlock();
  common::StatusOr<stormark::v1::Measurement> Rewrite();
  common::StatusOr<stormark::v1::Measurement> Getc();
  common::StatusOr<stormark::v1::Measurement> GetBlock();
  common::StatusOr<stormark::v1::Measurement> Seeks();

  // Removes the data file, as bonnie++ does before its file tests.
  common::Status RemoveDataFile();

 private:
  int BlockFlags() const;
  common::Status CheckCancelled(const char* test) const;

  const BonnieParams& params_;
  Dir* const target_;
  RunContext& ctx_;
  common::Recorder* const recorder_;
  AlignedBuffer buf_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_IO_H_
