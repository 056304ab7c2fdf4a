#include "controller/run/live_progress.h"

#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller {

LiveProgress::LiveProgress(std::FILE* out, bool enabled, size_t hosts, const common::Clock& clock)
    : out_(out), enabled_(enabled), clock_(clock), latest_(hosts) {}

void LiveProgress::Begin(const std::string& label, uint64_t expected_bytes) {
  absl::MutexLock lock(&mu_);
  label_ = label;
  expected_bytes_ = expected_bytes;
  for (auto& p : latest_) p.Clear();
  last_draw_ = 0;
}

void LiveProgress::Update(size_t host, const stormark::v1::RunUpdate::Progress& progress) {
  absl::MutexLock lock(&mu_);
  if (host < latest_.size()) latest_[host] = progress;
  const int64_t now = clock_.MonotonicNanos();
  if (now - last_draw_ < 200'000'000) return;
  last_draw_ = now;
  DrawLocked();
}

void LiveProgress::DrawLocked() {
  if (!enabled_) return;
  uint64_t bytes = 0;
  int64_t elapsed = 0;
  double rate = 0;
  size_t reporting = 0;
  for (const auto& p : latest_) {
    if (p.elapsed_nanos() <= 0) continue;
    ++reporting;
    bytes += p.bytes();
    elapsed = std::max(elapsed, p.elapsed_nanos());
    rate += static_cast<double>(p.bytes()) / (static_cast<double>(p.elapsed_nanos()) / 1e9);
  }
  std::string line = fmt::format("  {}  {:.1f} s  {}", label_, static_cast<double>(elapsed) / 1e9,
                                 common::FormatBytes(bytes));
  if (expected_bytes_ > 0) {
    line += fmt::format(" ({:.0f}%)",
                        100.0 * static_cast<double>(bytes) / static_cast<double>(expected_bytes_));
  }
  line += fmt::format("  {}  {} of {} hosts reporting", common::FormatRate(rate), reporting,
                      latest_.size());
  std::fprintf(out_, "\r\033[K%s", line.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void LiveProgress::End() {
  absl::MutexLock lock(&mu_);
  if (enabled_ && drawn_) {
    std::fprintf(out_, "\r\033[K");
    std::fflush(out_);
  }
  drawn_ = false;
}

}  // namespace stormark::controller
