#include "agent/workloads/bonnie/bonnie_common.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/strings.h"

namespace stormark::agent {

AlignedBuffer::~AlignedBuffer() { free(data_); }

common::Status AlignedBuffer::Allocate(size_t size, uint64_t seed) {
  constexpr size_t kAlignment = 4096;
  free(data_);
  data_ = nullptr;
  size_ = 0;
  void* p = nullptr;
  if (posix_memalign(&p, kAlignment, size == 0 ? kAlignment : size) != 0) {
    return absl::ResourceExhaustedError("bonnie: cannot allocate an I/O buffer");
  }
  data_ = static_cast<char*>(p);
  size_ = size;
  BonnieRandom random(seed);
  for (size_t at = 0; at < size; at += sizeof(uint64_t)) {
    const uint64_t r = random.Next();
    std::memcpy(data_ + at, &r, std::min(sizeof(r), size - at));
  }
  return absl::OkStatus();
}

TestMeter::TestMeter(std::string_view name, const common::Clock& clock, common::Recorder* recorder)
    : name_(name), clock_(clock), recorder_(recorder) {}

void TestMeter::Start() {
  cpu_start_ = common::ProcessCpuTimes();
  start_mono_ = clock_.MonotonicNanos();
}

void TestMeter::Op(int64_t start_mono, uint64_t bytes) {
  const int64_t end = clock_.MonotonicNanos();
  const uint64_t latency = static_cast<uint64_t>(end - start_mono);
  latency_.Record(latency);
  recorder_->Record(end, latency, bytes);
  bytes_ += bytes;
  ++ops_;
}

void TestMeter::Absorb(const common::LatencyHistogram& latency, uint64_t bytes, uint64_t ops) {
  latency_.Merge(latency);
  bytes_ += bytes;
  ops_ += ops;
}

stormark::v1::Measurement TestMeter::Stop() {
  const int64_t elapsed = clock_.MonotonicNanos() - start_mono_;
  const common::CpuTimes cpu = common::ProcessCpuTimes();
  stormark::v1::Measurement m;
  m.set_name(name_);
  m.set_bytes(bytes_);
  m.set_ops(ops_);
  m.set_elapsed_nanos(elapsed);
  m.set_cpu_user_nanos(cpu.user_nanos - cpu_start_.user_nanos);
  m.set_cpu_system_nanos(cpu.system_nanos - cpu_start_.system_nanos);
  latency_.ToProto(m.mutable_latency());
  m.set_too_fast(elapsed < kBonnieMinTimeNanos);
  return m;
}

stormark::v1::Measurement SkippedTest(std::string_view name) {
  stormark::v1::Measurement m;
  m.set_name(std::string(name));
  m.set_skipped(true);
  return m;
}

// One write() call of exactly n bytes at the current offset; a short write is retried.
common::Status WriteChunk(File& file, const char* buf, size_t n, const char* test) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = file.Write(buf + done, n - done);
    if (r == -EINTR) continue;
    if (r < 0) {
      return common::ErrnoError(common::StrCat("bonnie ", test, ": write"), static_cast<int>(-r));
    }
    if (r == 0)
      return absl::DataLossError(common::StrCat("bonnie ", test, ": write wrote 0 bytes"));
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

// One read() call of exactly n bytes at the current offset; the end of the file is DATA_LOSS.
common::Status ReadChunk(File& file, char* buf, size_t n, const char* test) {
  size_t done = 0;
  while (done < n) {
    const ssize_t r = file.Read(buf + done, n - done);
    if (r == -EINTR) continue;
    if (r < 0) {
      return common::ErrnoError(common::StrCat("bonnie ", test, ": read"), static_cast<int>(-r));
    }
    if (r == 0) {
      return absl::DataLossError(
          common::StrCat("bonnie ", test, ": the data file ended before the expected size"));
    }
    done += static_cast<size_t>(r);
  }
  return absl::OkStatus();
}

}  // namespace stormark::agent
