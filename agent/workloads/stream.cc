#include "agent/workloads/stream.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "agent/devices/page_cache.h"
#include "agent/workloads/fd.h"
#include "common/strings.h"
#include "common/random.h"
#include "common/spec_check.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using stormark::v1::StreamSpec;

constexpr char kFileName[] = "stream.dat";
constexpr uint64_t kDirectAlignment = 4096;
constexpr uint64_t kStampEvery = 4096;

Status WriteFull(int fd, const char* buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = pwrite(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return common::ErrnoError(common::StrCat("write at offset ", offset + done), errno);
    if (r == 0) return absl::DataLossError(common::StrCat("write at offset ", offset, " wrote 0 bytes"));
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

Status ReadFull(int fd, char* buf, size_t n, uint64_t offset) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return common::ErrnoError(common::StrCat("read at offset ", offset + done), errno);
    if (r == 0) {
      return absl::DataLossError(
          common::StrCat("file ended at offset ", offset + done, ", before the expected size"));
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace

StreamWorkload::StreamWorkload(const StreamSpec& spec, std::unique_ptr<DirTarget> target,
                               std::string filesystem)
    : spec_(spec),
      target_(std::move(target)),
      filesystem_(std::move(filesystem)) {}

StreamWorkload::~StreamWorkload() {
  Cleanup();
  free(buf_);
}

Status StreamWorkload::Validate(const StreamSpec& spec) { return common::CheckStreamSpec(spec); }

void StreamWorkload::StampBlock(uint64_t offset) {
  for (uint64_t at = 0; at + sizeof(uint64_t) <= spec_.block_size(); at += kStampEvery) {
    const uint64_t stamp = offset + at;
    std::memcpy(buf_ + at, &stamp, sizeof(stamp));
  }
}

Status StreamWorkload::Prepare(const std::atomic<bool>& cancelled,
                               std::vector<std::string>* warnings) {
  RETURN_IF_ERROR(Validate(spec_));
  const TargetConfig& target = target_->config();

  struct statvfs vfs{};
  if (statvfs(target.path.c_str(), &vfs) == 0) {
    const uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    if (spec_.size_bytes() > free_bytes) {
      return absl::ResourceExhaustedError(common::StrCat(
          "target '", target.name, "' has ", common::FormatBytes(free_bytes),
          " free; the phase needs ", common::FormatBytes(spec_.size_bytes())));
    }
  }

  if (posix_memalign(reinterpret_cast<void**>(&buf_), kDirectAlignment, spec_.block_size()) != 0) {
    return absl::ResourceExhaustedError("stream: cannot allocate the I/O buffer");
  }
  uint64_t seed = 0x5eed5eed ^ spec_.size_bytes();
  for (uint32_t at = 0; at < spec_.block_size(); at += sizeof(uint64_t)) {
    const uint64_t r = common::SplitMix64(&seed);
    std::memcpy(buf_ + at, &r, std::min<size_t>(sizeof(r), spec_.block_size() - at));
  }

  if (filesystem_ == "tmpfs" || filesystem_ == "ramfs") {
    warnings->push_back(common::StrCat("target '", target.name, "' is on ", filesystem_,
                                     ": this measures memory, not storage"));
  }

  if (spec_.direction() == StreamSpec::WRITE) {
    ASSIGN_OR_RETURN(int fd, target_->CreateFile(kFileName, O_WRONLY));
    Fd file(fd);
    RETURN_IF_ERROR(file.Close("stream: close"));
    if (!spec_.direct() && !spec_.fdatasync()) {
      warnings->push_back(
          "possibly cache-dominated: write without fdatasync or direct, so data may still be "
          "in the page cache when the clock stops (add fdatasync: true)");
    }
    return absl::OkStatus();
  }
  return LayOutFile(cancelled, warnings);
}

// Writes the file a READ phase will read, flushes it, and evicts it from the page cache.
Status StreamWorkload::LayOutFile(const std::atomic<bool>& cancelled,
                                  std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(int fd, target_->CreateFile(kFileName, O_RDWR));
  Fd file(fd);
  for (uint64_t offset = 0; offset < spec_.size_bytes(); offset += spec_.block_size()) {
    if (cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("stream: aborted while laying out the file");
    }
    StampBlock(offset);
    RETURN_IF_ERROR(WriteFull(file.get(), buf_, spec_.block_size(), offset));
  }
  if (fdatasync(file.get()) != 0) return common::ErrnoError("stream: fdatasync", errno);
  if (spec_.direct()) return file.Close("stream: close");

  const double resident = EvictFromPageCache(file.get(), spec_.size_bytes());
  if (resident > 0.05) {
    warnings->push_back(fmt::format(
        "possibly cache-dominated: {:.0f}% of the file is still in the page cache after "
        "eviction (use direct: true)",
        resident < 0 ? 100.0 : resident * 100));
  } else if (resident < 0) {
    warnings->push_back(
        "could not check that the file left the page cache; reads may be cache-dominated");
  }
  return file.Close("stream: close");
}

Status StreamWorkload::Run(RunContext& ctx) {
  const bool writing = spec_.direction() == StreamSpec::WRITE;
  const int flags = (writing ? O_WRONLY : O_RDONLY) | (spec_.direct() ? O_DIRECT : 0);
  common::Recorder* recorder = ctx.recorders.Add();
  ASSIGN_OR_RETURN(int fd, target_->OpenFile(kFileName, flags));
  Fd file(fd);

  const uint32_t bs = spec_.block_size();
  for (uint64_t offset = 0; offset < spec_.size_bytes(); offset += bs) {
    if (ctx.cancelled.load(std::memory_order_relaxed)) {
      return absl::CancelledError("stream: aborted");
    }
    if (writing) StampBlock(offset);
    const int64_t start = ctx.clock.MonotonicNanos();
    RETURN_IF_ERROR(writing ? WriteFull(file.get(), buf_, bs, offset)
                            : ReadFull(file.get(), buf_, bs, offset));
    const int64_t end = ctx.clock.MonotonicNanos();
    recorder->Record(end, static_cast<uint64_t>(end - start), bs);
  }
  if (spec_.fdatasync()) {
    const int64_t start = ctx.clock.MonotonicNanos();
    if (fdatasync(file.get()) != 0) return common::ErrnoError("stream: fdatasync", errno);
    const int64_t end = ctx.clock.MonotonicNanos();
    recorder->Record(end, static_cast<uint64_t>(end - start), 0);
  }
  return file.Close("stream: close");
}

int StreamWorkload::Cleanup() { return target_ ? target_->Cleanup() : 0; }

}  // namespace stormark::agent
