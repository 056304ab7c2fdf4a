#include "agent/runner/detached_worker.h"

#include <atomic>
#include <chrono>
#include <future>
#include <new>
#include <thread>

#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using std::chrono::milliseconds;

TEST(DetachedWorker, WorkThatEndsInTimeIsWaitedFor) {
  auto worker = DetachedWorker::Start([] { return absl::OkStatus(); }, [] { FAIL(); });
  EXPECT_TRUE(worker->WaitFor(10'000'000'000));
  EXPECT_TRUE(worker->done());
  EXPECT_TRUE(worker->status().ok());
  EXPECT_FALSE(worker->Abandon()) << "nothing is left behind";
}

TEST(DetachedWorker, AnAllocationFailureInTheWorkIsItsStatusNotTheProcesssEnd) {
  auto worker =
      DetachedWorker::Start([]() -> common::Status { throw std::bad_alloc(); }, [] { FAIL(); });
  ASSERT_TRUE(worker->WaitFor(10'000'000'000));
  EXPECT_EQ(worker->status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(worker->status().message(), "a phase's worker: out of memory (std::bad_alloc)");
}

TEST(DetachedWorker, AnAbandonedWorkerCallsBackWhenItReturns) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> called;
  auto worker = DetachedWorker::Start(
      [released] {
        released.wait();
        return absl::OkStatus();
      },
      [&called] { called.set_value(); });
  EXPECT_FALSE(worker->WaitFor(1'000'000));
  ASSERT_TRUE(worker->Abandon());
  release.set_value();
  EXPECT_EQ(called.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
}

TEST(DetachedWorker, DisownWaitsForACallBackAlreadyUnderWay) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> calling;
  std::atomic<bool> finished{false};
  auto worker = DetachedWorker::Start(
      [released] {
        released.wait();
        return absl::OkStatus();
      },
      [&] {
        calling.set_value();
        std::this_thread::sleep_for(milliseconds(200));
        finished = true;
      });
  ASSERT_TRUE(worker->Abandon());
  release.set_value();
  calling.get_future().wait();
  // The caller is going away: it must not return while its callback still runs.
  worker->Disown();
  EXPECT_TRUE(finished);
}

TEST(DetachedWorker, ADisownedWorkerCallsNothing) {
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  auto worker = DetachedWorker::Start(
      [released] {
        released.wait();
        return absl::OkStatus();
      },
      [] { FAIL() << "called back after Disown"; });
  ASSERT_TRUE(worker->Abandon());
  worker->Disown();
  release.set_value();
  EXPECT_TRUE(worker->WaitFor(10'000'000'000));
}

}  // namespace
}  // namespace stormark::agent
