#include "controller/fleet/throttle.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

// Calls whose callbacks run on other threads, as gRPC's do: never more than the limit in
// flight, and the destructor waits for the last Release.
TEST(Throttle, AcquireWaitsForRoomAndTheDestructorForTheLastRelease) {
  std::vector<std::thread> callbacks;
  std::atomic<int> in_flight{0}, most{0}, released{0};
  {
    Throttle throttle(2);
    for (int i = 0; i < 50; ++i) {
      throttle.Acquire();
      const int now = in_flight.fetch_add(1) + 1;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      callbacks.emplace_back([&] {
        in_flight.fetch_sub(1);
        released.fetch_add(1);
        throttle.Release();
      });
    }
    EXPECT_LE(throttle.peak(), 2u);
  }
  EXPECT_EQ(released.load(), 50);
  EXPECT_LE(most.load(), 2);
  for (std::thread& t : callbacks) t.join();
}

// A call that fails at once gives its room back inside its own start.
TEST(Throttle, AReleaseInsideTheStartFreesTheRoomAtOnce) {
  Throttle throttle(1);
  for (int i = 0; i < 1000; ++i) {
    throttle.Acquire();
    throttle.Release();
  }
  throttle.WaitIdle();
  EXPECT_EQ(throttle.peak(), 1u);
}

}  // namespace
}  // namespace stormark::controller
