#include "controller/fleet/timer_heap.h"

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(TimerHeap, DueTimersComeEarliestFirstAndOnlyOnce) {
  TimerHeap timers(4);
  timers.Set(0, 30);
  timers.Set(1, 10);
  timers.Set(2, 20);
  EXPECT_EQ(timers.Next(), 10);
  EXPECT_THAT(timers.TakeDue(5), IsEmpty());
  EXPECT_THAT(timers.TakeDue(20), ElementsAre(1, 2));
  EXPECT_THAT(timers.TakeDue(20), IsEmpty());
  EXPECT_EQ(timers.when(1), std::nullopt);
  EXPECT_EQ(timers.when(0), 30);
  EXPECT_THAT(timers.TakeDue(1000), ElementsAre(0));
  EXPECT_EQ(timers.Next(), std::nullopt);
  EXPECT_EQ(timers.live(), 0u);
}

TEST(TimerHeap, SetMovesAKeysTimerEarlierOrLaterAndCancelDropsIt) {
  TimerHeap timers(3);
  timers.Set(0, 100);
  timers.Set(0, 10);  // Earlier.
  timers.Set(1, 20);
  timers.Set(1, 500);  // Later: its old entry must not fire.
  timers.Set(2, 30);
  timers.Cancel(2);
  timers.Cancel(2);  // Twice is harmless.
  EXPECT_EQ(timers.live(), 2u);
  EXPECT_THAT(timers.TakeDue(100), ElementsAre(0));
  EXPECT_EQ(timers.Next(), 500);
  EXPECT_THAT(timers.TakeDue(499), IsEmpty());
  EXPECT_THAT(timers.TakeDue(500), ElementsAre(1));
}

// A host's deadline moved on every progress update must not grow the heap without bound.
TEST(TimerHeap, MovedTimersDoNotPileUp) {
  TimerHeap timers(100);
  for (int round = 0; round < 10'000; ++round) {
    for (size_t key = 0; key < 100; ++key) timers.Set(key, 1'000'000 - round);
  }
  EXPECT_EQ(timers.live(), 100u);
  EXPECT_LE(timers.entries(), 201u);
  EXPECT_EQ(timers.TakeDue(1'000'000).size(), 100u);
}

// Against a plain map of key to instant, over random sets, cancels and takes.
TEST(TimerHeap, AgreesWithAPlainMapOverRandomOperations) {
  constexpr size_t kKeys = 50;
  TimerHeap timers(kKeys);
  std::map<size_t, int64_t> model;
  std::mt19937_64 random(42);
  int64_t now = 0;
  for (int step = 0; step < 200'000; ++step) {
    const size_t key = random() % kKeys;
    switch (random() % 4) {
      case 0:
      case 1: {
        const int64_t when = now + static_cast<int64_t>(random() % 1000);
        timers.Set(key, when);
        model[key] = when;
        break;
      }
      case 2:
        timers.Cancel(key);
        model.erase(key);
        break;
      default: {
        now += static_cast<int64_t>(random() % 50);
        std::vector<std::pair<int64_t, size_t>> expected;
        for (auto it = model.begin(); it != model.end();) {
          if (it->second <= now) {
            expected.emplace_back(it->second, it->first);
            it = model.erase(it);
          } else {
            ++it;
          }
        }
        const std::vector<size_t> due = timers.TakeDue(now);
        ASSERT_EQ(due.size(), expected.size()) << "step " << step;
        // Earliest first; keys due at the same instant in any order.
        std::set<std::pair<int64_t, size_t>> got;
        int64_t last = INT64_MIN;
        for (size_t k : due) {
          const int64_t when = std::find_if(expected.begin(), expected.end(), [k](const auto& e) {
                                 return e.second == k;
                               })->first;
          EXPECT_GE(when, last) << "step " << step;
          last = when;
          got.emplace(when, k);
        }
        EXPECT_EQ(got, std::set(expected.begin(), expected.end())) << "step " << step;
        break;
      }
    }
    ASSERT_EQ(timers.live(), model.size());
    ASSERT_LE(timers.entries(), std::max<size_t>(64, 2 * model.size()) + 1);
  }
}

}  // namespace
}  // namespace stormark::controller
