// What the stream workload's unit tests share: a spec in one call, and the flags they pass.
#ifndef STORMARK_TESTS_AGENT_WORKLOADS_STREAM_STREAM_TEST_UTIL_H_
#define STORMARK_TESTS_AGENT_WORKLOADS_STREAM_STREAM_TEST_UTIL_H_

#include <atomic>
#include <cstdint>

#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Prepare is never cancelled in these tests, except where a test makes its own flag.
inline const std::atomic<bool> kNotCancelled{false};

inline constexpr uint64_t kMiB = 1 << 20;

inline stormark::v1::StreamSpec Spec(stormark::v1::StreamSpec::Direction direction, uint64_t size,
                                     uint32_t bs) {
  stormark::v1::StreamSpec spec;
  spec.set_direction(direction);
  spec.set_size_bytes(size);
  spec.set_block_size(bs);
  return spec;
}

}  // namespace stormark::agent

#endif  // STORMARK_TESTS_AGENT_WORKLOADS_STREAM_STREAM_TEST_UTIL_H_
