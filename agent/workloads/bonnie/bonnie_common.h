// What the bonnie tests (bonnie_io.h, bonnie_files.h) share: the parameters the workload
// resolved, a seeded generator, an aligned buffer, and TestMeter, which turns one test's timed
// region into a Measurement.
#ifndef STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_COMMON_H_
#define STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_COMMON_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/dir/dir.h"
#include "common/clock.h"
#include "common/cpu_times.h"
#include "common/histogram.h"
#include "common/recorder.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// bonnie++'s constants.
inline constexpr uint32_t kBonnieChunkSize = 8192;           // DefaultChunkSize
inline constexpr uint64_t kBonnieCharSize = 20ull << 20;     // -f default, per its man page
inline constexpr uint32_t kBonnieSeeks = 8192;               // DefaultSeeks
inline constexpr uint32_t kBonnieSeekers = 5;                // DefaultSeekProcCount
inline constexpr uint32_t kBonnieUpdateEvery = 10;           // UpdateSeek: 1 seek in 10 writes
inline constexpr uint32_t kBonnieDirectoryUnit = 1024;       // -n counts files in 1024s
inline constexpr int64_t kBonnieMinTimeNanos = 500'000'000;  // MinTime: 0.5 s
// Per-character tests time one value per this many characters.
inline constexpr uint64_t kBonnieCharPiece = 1 << 20;

// The parameters a bonnie phase runs with, after defaults and the 2 x RAM rule.
struct BonnieParams {
  bool run_io = true;
  uint64_t size_bytes = 0;  // The data file; a multiple of chunk_size.
  uint64_t ram_bytes = 0;   // What the 2 x rule used; 0 when unknown.
  uint32_t chunk_size = kBonnieChunkSize;
  uint64_t char_size_bytes = 0;  // 0 skips putc and getc; never above size_bytes.
  bool direct = false;
  bool fsync_every_write = false;
  uint32_t seeks = kBonnieSeeks;
  uint32_t seekers = kBonnieSeekers;
  uint64_t files = 0;  // files_k x 1024; 0 skips the file tests.
  uint32_t files_k = 0;
  uint64_t file_min_bytes = 0;
  uint64_t file_max_bytes = 0;
  uint32_t file_dirs = 1;
  // The file tests write and read in pieces of bonnie++'s default file chunk (-n's fifth
  // field, which BonnieSpec does not carry).
  uint32_t file_chunk_size = kBonnieChunkSize;
  uint64_t seed = 0;
};

// splitmix64: small, fast, and the same sequence for the same seed on every host.
class BonnieRandom {
 public:
  explicit BonnieRandom(uint64_t seed) : state_(seed) {}
  uint64_t Next() { return Mix(state_ += kGamma); }
  // Uniform enough in [0, n) for benchmark choices; n > 0.
  uint64_t Below(uint64_t n) { return Next() % n; }
  // The index-th value of the sequence that `seed` starts, without the ones before it, so
  // that concurrent workers can share one sequence through an atomic index.
  static uint64_t At(uint64_t seed, uint64_t index) { return Mix(seed + (index + 1) * kGamma); }

 private:
  static constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;
  static uint64_t Mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

// A page-aligned buffer (O_DIRECT needs one) filled with incompressible bytes from `seed`.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  ~AlignedBuffer();
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  common::Status Allocate(size_t size, uint64_t seed);
  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_ = nullptr;
  size_t size_ = 0;
};

// Times one test: wall time and process CPU between Start and Stop, and one latency value per
// operation. Each operation also goes to the phase's Recorder, for live progress and totals.
// Used by one thread; values from other threads come in through Absorb.
class TestMeter {
 public:
  TestMeter(std::string_view name, const common::Clock& clock, common::Recorder* recorder);

  // Starts the timed region.
  void Start();
  int64_t Now() const { return clock_.MonotonicNanos(); }
  // One operation that began at `start_mono` and ended now, moving `bytes`.
  void Op(int64_t start_mono, uint64_t bytes);
  // Operations that another thread measured (and recorded into its own Recorder).
  void Absorb(const common::LatencyHistogram& latency, uint64_t bytes, uint64_t ops);
  // Ends the timed region: the Measurement of everything since Start.
  stormark::v1::Measurement Stop();

 private:
  const std::string name_;
  const common::Clock& clock_;
  common::Recorder* const recorder_;
  int64_t start_mono_ = 0;
  common::CpuTimes cpu_start_;
  common::LatencyHistogram latency_;
  uint64_t bytes_ = 0;
  uint64_t ops_ = 0;
};

// The Measurement of a test the spec skipped.
stormark::v1::Measurement SkippedTest(std::string_view name);

// write() of exactly n bytes at the current offset, retrying short writes. Errors name the
// bonnie test.
common::Status WriteChunk(File& file, const char* buf, size_t n, const char* test);
// read() of exactly n bytes at the current offset; the end of the file is DATA_LOSS.
common::Status ReadChunk(File& file, char* buf, size_t n, const char* test);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_BONNIE_BONNIE_COMMON_H_
