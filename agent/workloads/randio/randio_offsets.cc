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

namespace {

uint32_t Smallest(const std::vector<BlockSizeShare>& split, uint32_t otherwise) {
  if (split.empty()) return otherwise;
  uint32_t smallest = split.front().bs;
  for (const BlockSizeShare& share : split) smallest = std::min(smallest, share.bs);
  return smallest;
}

}  // namespace

OffsetSource::OffsetSource(const OffsetPlan& plan)
    : plan_(plan),
      random_(plan.seed),
      align_{plan.align != 0 ? plan.align : Smallest(plan.read_split, plan.bs_min),
             plan.align != 0
                 ? plan.align
                 : Smallest(plan.write_split.empty() ? plan.read_split : plan.write_split,
                            plan.bs_min)},
      units_(std::max<uint64_t>(1, plan.size / align_[0])),
      random_map_(!plan.zipf && !plan.norandommap && plan.bs_min == plan.bs_max &&
                  plan.read_split.empty() && plan.write_split.empty() && align_[0] == plan.bs_min),
      permutation_(random_map_ || plan.zipf ? units_ : 1, plan.seed ^ 0x5eed),
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

uint32_t OffsetSource::Length(bool write) {
  const std::vector<BlockSizeShare>& split =
      write && !plan_.write_split.empty() ? plan_.write_split : plan_.read_split;
  if (!split.empty()) {
    // fio's bssplit: a draw in [0, 100) falls in one size's share.
    uint64_t draw = random_.Below(100);
    for (const BlockSizeShare& share : split) {
      if (draw < share.percent) return share.bs;
      draw -= share.percent;
    }
    return split.back().bs;
  }
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
  uint32_t length = Length(io->write);
  uint64_t offset = 0;
  if (!IsRandom()) {
    uint64_t& position = position_[io->write ? 1 : 0];
    if (position >= plan_.size) position = 0;  // A new pass (time_based only).
    // A larger size may overshoot the region's end: the last I/O of a pass is cut there.
    length = static_cast<uint32_t>(std::min<uint64_t>(length, plan_.size - position));
    offset = position;
    position += length;
  } else {
    // The aligned starts at which the I/O fits in the region.
    const uint64_t align = align_[io->write ? 1 : 0];
    const uint64_t starts = (plan_.size - std::min<uint64_t>(length, plan_.size)) / align + 1;
    if (plan_.zipf) {
      // Ranks are blocks of the reads' alignment; a write's start is rounded down to its own.
      const uint64_t at = permutation_(zipf_.Next(random_)) * align_[0] / align * align;
      offset = std::min(at, (starts - 1) * align);
    } else if (random_map_) {
      if (pass_index_ >= units_) NewPass();
      offset = permutation_(pass_index_++) * align;
    } else {
      offset = random_.Below(starts) * align;
    }
  }
  // A size-bound random job ends once it has moved its size, its last I/O whole, as fio's
  // does (so it may move up to one block more); a sequential pass ends at the region's end.
  io->offset = plan_.base + offset;
  io->length = length;
  issued_bytes_ += length;
  return true;
}

}  // namespace stormark::agent
