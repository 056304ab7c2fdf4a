// Where randio's next operation goes: the offset, length and direction of each I/O of one job,
// following fio's rules for rw, rwmixread, bs ranges and random_distribution.
//
//   sequential (read, write, readwrite): from the region's start, block after block; reads and
//     writes keep separate positions (fio's last_pos per direction).
//   uniform random with one bs: a random permutation of the region's blocks, so each block is
//     visited exactly once per pass (fio's random map), without a bitmap.
//   uniform random with a bs range or split, with a blockalign other than bs, or with
//     norandommap: each I/O at a random multiple of the alignment at which it fits (offsets
//     may repeat within a pass, as fio's norandommap).
//   zipf:THETA: block ranks drawn from a Zipf distribution (Gray et al., as fio's zipf.c); rank
//     r is placed at block permutation(r), so the hot blocks are scattered over the region.
//
// Sizes come from a bs range (a random multiple of bs_min) or from a split by shares (fio's
// bssplit), per direction.
//
// Without time_based, a job ends after `size` bytes (a random one once it has moved at least
// that much, its last I/O whole, as fio's); with it, passes repeat until the runtime
// is over (each random pass with a new permutation). Not thread-safe: one per job.
#ifndef STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_OFFSETS_H_
#define STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_OFFSETS_H_

#include <cstdint>
#include <vector>

#include "common/random.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// A keyed bijection of [0, n) (a 4-round Feistel network with cycle walking): the random
// permutation behind randio's random map and zipf scattering. Cheap to evaluate, no memory.
class RandomPermutation {
 public:
  RandomPermutation(uint64_t n, uint64_t key);
  uint64_t operator()(uint64_t i) const;
  uint64_t size() const { return n_; }

 private:
  uint64_t n_;
  int half_bits_;
  uint64_t half_mask_;
  uint64_t keys_[4];
};

// Zipf-distributed ranks in [0, n): rank 0 is the most popular, with probability about
// 1 / zeta(n, theta). theta > 0 and not 1.
class ZipfGenerator {
 public:
  ZipfGenerator(uint64_t n, double theta);
  uint64_t Next(common::Xoshiro256& random) const;

 private:
  uint64_t n_;
  double theta_, zetan_, zeta2_, alpha_, eta_;
};

struct RandioIo {
  bool write = false;
  uint64_t offset = 0;  // absolute, in the device
  uint32_t length = 0;
};

// One block size and its share of operations, in percent.
struct BlockSizeShare {
  uint32_t bs = 0;
  uint32_t percent = 0;
};

struct OffsetPlan {
  stormark::v1::RandioSpec::Pattern rw = stormark::v1::RandioSpec::READ;
  uint32_t rwmixread = 50;
  uint64_t base = 0;  // the job's region: [base, base + size)
  uint64_t size = 0;  // a multiple of bs_min
  // The smallest and largest sizes; without splits, each I/O a random multiple of bs_min.
  uint32_t bs_min = 4096;
  uint32_t bs_max = 4096;
  // Sizes by share for reads and for writes (each adding up to 100); empty: the range above.
  std::vector<BlockSizeShare> read_split;
  std::vector<BlockSizeShare> write_split;
  // Random offsets are multiples of this; 0 means, per direction, its smallest size (fio's
  // default blockalign: a direction's min_bs).
  uint32_t align = 0;
  bool norandommap = false;
  bool zipf = false;
  double zipf_theta = 0;
  bool time_based = false;
  uint64_t seed = 1;
};

class OffsetSource {
 public:
  explicit OffsetSource(const OffsetPlan& plan);

  // The next I/O, or false when the job has moved its size (never with time_based).
  bool Next(RandioIo* io);

 private:
  bool IsRandom() const;
  bool IsWrite();
  uint32_t Length(bool write);
  void NewPass();

  const OffsetPlan plan_;
  common::Xoshiro256 random_;
  const uint32_t align_[2];  // of random offsets: reads [0], writes [1]
  const uint64_t units_;     // align_[0] units in the region
  // Each I/O of a random pattern takes the next block of a permutation (fio's random map).
  const bool random_map_;
  RandomPermutation permutation_;
  ZipfGenerator zipf_;
  uint64_t issued_bytes_ = 0;
  uint64_t pass_index_ = 0;        // I/Os of the current random-map pass
  uint64_t position_[2] = {0, 0};  // sequential: next byte for reads [0] and writes [1]
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_RANDIO_RANDIO_OFFSETS_H_
