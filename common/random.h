// Small, fast pseudo-random generators for offsets and filler data. Not for cryptography.
// Each object belongs to one thread.
#ifndef STORMARK_COMMON_RANDOM_H_
#define STORMARK_COMMON_RANDOM_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace stormark::common {

// splitmix64: one 64-bit state; also the seeder of Xoshiro256.
inline uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna): the generator of offsets and data.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& word : s_) word = SplitMix64(&seed);
  }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, n), without modulo bias worth mentioning (Lemire's multiply-shift).
  uint64_t Below(uint64_t n) {
    __extension__ using Wide = unsigned __int128;  // GCC and Clang both have it.
    return static_cast<uint64_t>((static_cast<Wide>(Next()) * n) >> 64);
  }

  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Fills `n` bytes with random data.
  void Fill(char* buf, size_t n) {
    size_t at = 0;
    for (; at + 8 <= n; at += 8) {
      const uint64_t r = Next();
      std::memcpy(buf + at, &r, 8);
    }
    if (at < n) {
      const uint64_t r = Next();
      std::memcpy(buf + at, &r, n - at);
    }
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

}  // namespace stormark::common

#endif  // STORMARK_COMMON_RANDOM_H_
