#include "agent/workloads/randio/randio_offsets.h"

#include <algorithm>
#include <cmath>

namespace stormark::agent {
namespace {

using stormark::v1::RandioSpec;

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// zeta(n, theta) = sum of 1/i^theta for i in 1..n. Exact up to 10 million terms (fio's
// limit too); beyond, the rest is the integral of x^-theta, good to a few parts per million.
double Zeta(uint64_t n, double theta) {
  constexpr uint64_t kExact = 10'000'000;
  const uint64_t m = std::min(n, kExact);
  double sum = 0;
  for (uint64_t i = m; i >= 1; --i) sum += std::pow(static_cast<double>(i), -theta);
  if (n > m) {
    const double a = static_cast<double>(m) + 0.5, b = static_cast<double>(n) + 0.5;
    sum += (std::pow(b, 1 - theta) - std::pow(a, 1 - theta)) / (1 - theta);
  }
  return sum;
}

}  // namespace

RandomPermutation::RandomPermutation(uint64_t n, uint64_t key) : n_(std::max<uint64_t>(1, n)) {
  int bits = 1;
  while (bits < 64 && (uint64_t{1} << bits) < n_) ++bits;
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  for (int r = 0; r < 4; ++r) keys_[r] = Mix(key + 0x9e3779b97f4a7c15ULL * (r + 1));
}

uint64_t RandomPermutation::operator()(uint64_t i) const {
  // Each round is a bijection of [0, 2^(2 half_bits)); walking the cycle until the value is
  // below n keeps it a bijection of [0, n). The domain is under 4n, so few walks are needed.
  uint64_t x = i;
  do {
    uint64_t left = x >> half_bits_, right = x & half_mask_;
    for (uint64_t k : keys_) {
      const uint64_t next = left ^ (Mix(right ^ k) & half_mask_);
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= n_);
  return x;
}

ZipfGenerator::ZipfGenerator(uint64_t n, double theta)
    : n_(std::max<uint64_t>(1, n)), theta_(theta) {
  if (theta <= 0 || theta == 1) return;  // Unused unless the plan asks for zipf.
  zetan_ = Zeta(n_, theta_);
  zeta2_ = 1 + std::pow(0.5, theta_);
  alpha_ = 1 / (1 - theta_);
  eta_ = (1 - std::pow(2.0 / static_cast<double>(n_), 1 - theta_)) / (1 - zeta2_ / zetan_);
}

uint64_t ZipfGenerator::Next(common::Xoshiro256& random) const {
  const double u = random.Unit();
  const double uz = u * zetan_;
  if (uz < 1) return 0;
  if (uz < zeta2_) return std::min<uint64_t>(1, n_ - 1);
  const double rank = static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_);
  return std::min<uint64_t>(static_cast<uint64_t>(rank), n_ - 1);
}

OffsetSource::OffsetSource(const OffsetPlan& plan)
    : plan_(plan),
      random_(plan.seed),
      units_(std::max<uint64_t>(1, plan.size / plan.bs_min)),
      permutation_(plan.bs_min == plan.bs_max || plan.zipf ? units_ : 1, plan.seed ^ 0x5eed),
      zipf_(units_, plan.zipf ? plan.zipf_theta : 0) {}

bool OffsetSource::IsRandom() const {
  return plan_.rw == RandioSpec::RANDREAD || plan_.rw == RandioSpec::RANDWRITE ||
         plan_.rw == RandioSpec::RANDRW;
}

bool OffsetSource::IsWrite() {
  switch (plan_.rw) {
    case RandioSpec::WRITE:
    case RandioSpec::RANDWRITE:
      return true;
    case RandioSpec::RANDRW:
    case RandioSpec::READWRITE:
      return random_.Below(100) >= plan_.rwmixread;
    default:
      return false;
  }
}

uint32_t OffsetSource::Length() {
  if (plan_.bs_max <= plan_.bs_min) return plan_.bs_min;
  const uint64_t choices = plan_.bs_max / plan_.bs_min;
  return static_cast<uint32_t>(plan_.bs_min * (1 + random_.Below(choices)));
}

void OffsetSource::NewPass() {
  pass_index_ = 0;
  permutation_ = RandomPermutation(permutation_.size(), random_.Next());
}

bool OffsetSource::Next(RandioIo* io) {
  if (!plan_.time_based && issued_bytes_ >= plan_.size) return false;
  io->write = IsWrite();
  uint32_t length = Length();
  uint64_t length_units = length / plan_.bs_min;
  uint64_t unit = 0;
  if (!IsRandom()) {
    uint64_t& position = position_[io->write ? 1 : 0];
    if (position >= units_) position = 0;  // A new pass (time_based only).
    // A bs range may overshoot the region's end: the last I/O of a pass is cut there.
    length_units = std::min(length_units, units_ - position);
    length = static_cast<uint32_t>(length_units * plan_.bs_min);
    unit = position;
    position += length_units;
  } else if (plan_.zipf) {
    unit = permutation_(zipf_.Next(random_));
    unit = std::min(unit, units_ - length_units);
  } else if (plan_.bs_min == plan_.bs_max) {
    if (pass_index_ >= units_) NewPass();
    unit = permutation_(pass_index_++);
  } else {
    unit = random_.Below(units_ - length_units + 1);
  }
  // The last I/O of a size-bound job moves only what is left of the size.
  if (!plan_.time_based) {
    length = static_cast<uint32_t>(std::min<uint64_t>(length, plan_.size - issued_bytes_));
  }
  io->offset = plan_.base + unit * plan_.bs_min;
  io->length = length;
  issued_bytes_ += length;
  return true;
}

}  // namespace stormark::agent
