#include "common/recorder.h"

#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace stormark::common {
namespace {

using Series = google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>;

constexpr int64_t kStart = 1'000'000'000'000;
constexpr int64_t kSecond = 1'000'000'000;

TEST(Recorder, CountsBytesOpsAndLatency) {
  Recorder r(kStart);
  r.Record(kStart + 10, 100, 4096);
  r.Record(kStart + 20, 300, 4096);
  r.Record(kStart + 30, 200, 0);
  EXPECT_EQ(r.bytes(), 8192u);
  EXPECT_EQ(r.ops(), 3u);
  EXPECT_EQ(r.latency().count(), 3u);
  EXPECT_EQ(r.latency().min(), 100u);
  EXPECT_EQ(r.latency().max(), 300u);
  EXPECT_EQ(r.latency().sum(), 600u);
}

TEST(Recorder, SeriesPutsOpsInTheirIntervals) {
  Recorder r(kStart, kSecond);
  r.Record(kStart + kSecond / 2, 1, 10);
  r.Record(kStart + kSecond + 1, 1, 20);
  r.Record(kStart + kSecond + 2, 1, 30);
  r.Record(kStart + 2 * kSecond + 5, 1, 40);
  Series series;
  r.SeriesToProto(kStart + 3 * kSecond, &series);
  ASSERT_EQ(series.size(), 3);
  EXPECT_EQ(series[0].bytes(), 10u);
  EXPECT_EQ(series[0].ops(), 1u);
  EXPECT_EQ(series[1].bytes(), 50u);
  EXPECT_EQ(series[1].ops(), 2u);
  EXPECT_EQ(series[2].bytes(), 40u);
  EXPECT_EQ(series[2].ops(), 1u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(series[i].offset_nanos(), i * kSecond);
    EXPECT_EQ(series[i].length_nanos(), kSecond);
  }
}

TEST(Recorder, SeriesLastIntervalIsCutAtTheEnd) {
  Recorder r(kStart, kSecond);
  r.Record(kStart + kSecond + 100, 1, 7);
  Series series;
  r.SeriesToProto(kStart + kSecond + kSecond / 4, &series);
  ASSERT_EQ(series.size(), 2);
  EXPECT_EQ(series[0].length_nanos(), kSecond);
  EXPECT_EQ(series[1].offset_nanos(), kSecond);
  EXPECT_EQ(series[1].length_nanos(), kSecond / 4);
  EXPECT_EQ(series[1].bytes(), 7u);
}

TEST(Recorder, OpEndingExactlyAtTheEndBelongsToTheLastInterval) {
  Recorder r(kStart, kSecond);
  r.Record(kStart + 2 * kSecond, 1, 9);
  Series series;
  r.SeriesToProto(kStart + 2 * kSecond, &series);
  ASSERT_EQ(series.size(), 2);
  EXPECT_EQ(series[1].bytes(), 9u);
  EXPECT_EQ(series[1].ops(), 1u);
  EXPECT_EQ(series[1].length_nanos(), kSecond);
}

TEST(Recorder, SeriesSumsToTheTotals) {
  Recorder r(kStart, 100);
  uint64_t bytes = 0;
  for (int i = 0; i < 1000; ++i) {
    r.Record(kStart + i * 7, 1, static_cast<uint64_t>(i));
    bytes += static_cast<uint64_t>(i);
  }
  Series series;
  // Cut before the last ops: they fold into the last interval rather than vanish.
  r.SeriesToProto(kStart + 5000, &series);
  ASSERT_EQ(series.size(), 50);
  uint64_t series_bytes = 0;
  uint64_t series_ops = 0;
  int64_t series_length = 0;
  for (const auto& s : series) {
    series_bytes += s.bytes();
    series_ops += s.ops();
    series_length += s.length_nanos();
  }
  EXPECT_EQ(series_bytes, bytes);
  EXPECT_EQ(series_ops, 1000u);
  EXPECT_EQ(series_length, 5000);
}

TEST(Recorder, EmptyRunHasOneEmptyInterval) {
  Recorder r(kStart, kSecond);
  Series series;
  r.SeriesToProto(kStart, &series);
  ASSERT_EQ(series.size(), 1);
  EXPECT_EQ(series[0].ops(), 0u);
  EXPECT_EQ(series[0].length_nanos(), 0);
}

TEST(Recorder, OpBeforeTheStartCountsInTheFirstInterval) {
  Recorder r(kStart, kSecond);
  r.Record(kStart - 5, 1, 3);
  Series series;
  r.SeriesToProto(kStart + kSecond, &series);
  ASSERT_EQ(series.size(), 1);
  EXPECT_EQ(series[0].bytes(), 3u);
}

TEST(Recorder, MergeAddsCountsHistogramAndSeries) {
  Recorder a(kStart, kSecond);
  Recorder b(kStart, kSecond);
  a.Record(kStart + 1, 100, 10);
  b.Record(kStart + 2, 50, 20);
  b.Record(kStart + 2 * kSecond + 1, 5000, 30);
  a.Merge(b);
  EXPECT_EQ(a.bytes(), 60u);
  EXPECT_EQ(a.ops(), 3u);
  EXPECT_EQ(a.latency().count(), 3u);
  EXPECT_EQ(a.latency().min(), 50u);
  EXPECT_EQ(a.latency().max(), 5000u);
  Series series;
  a.SeriesToProto(kStart + 3 * kSecond, &series);
  ASSERT_EQ(series.size(), 3);
  EXPECT_EQ(series[0].bytes(), 30u);
  EXPECT_EQ(series[0].ops(), 2u);
  EXPECT_EQ(series[1].ops(), 0u);
  EXPECT_EQ(series[2].bytes(), 30u);
}

TEST(Recorder, SeriesSumsLatenciesPerIntervalAndMergeKeepsThem) {
  Recorder a(kStart, kSecond), b(kStart, kSecond);
  a.Record(kStart + 10, 100, 1);
  a.Record(kStart + kSecond + 10, 700, 1);
  b.Record(kStart + 20, 300, 1);
  a.Merge(b);
  Series series;
  a.SeriesToProto(kStart + 2 * kSecond, &series);
  ASSERT_EQ(series.size(), 2);
  EXPECT_EQ(series[0].latency_sum_nanos(), 400u);
  EXPECT_EQ(series[0].ops(), 2u);
  EXPECT_EQ(series[1].latency_sum_nanos(), 700u);
}

// A run longer than kMaxIntervals puts the rest in the last interval, which then lasts the
// rest of the run: nothing is lost and the memory stays bounded.
TEST(Recorder, SeriesOfAVeryLongRunEndsInOneLongInterval) {
  constexpr int64_t kMs = 1'000'000;
  Recorder r(kStart, kMs);
  const int64_t far = static_cast<int64_t>(Recorder::kMaxIntervals) * 3 * kMs;
  r.Record(kStart + 5, 1, 10);
  r.Record(kStart + far, 1, 20);
  Series series;
  r.SeriesToProto(kStart + far + kMs, &series);
  ASSERT_EQ(series.size(), static_cast<int>(Recorder::kMaxIntervals));
  EXPECT_EQ(series[0].bytes(), 10u);
  const auto& last = series[series.size() - 1];
  EXPECT_EQ(last.bytes(), 20u);
  EXPECT_EQ(last.offset_nanos() + last.length_nanos(), far + kMs);
}

TEST(RecorderSet, TotalsAddUpEveryRecorder) {
  RecorderSet set(kStart);
  Recorder* a = set.Add();
  Recorder* b = set.Add();
  EXPECT_NE(a, b);
  a->Record(kStart + 1, 1, 100);
  b->Record(kStart + 1, 1, 200);
  b->Record(kStart + 2, 1, 300);
  EXPECT_EQ(set.TotalBytes(), 600u);
  EXPECT_EQ(set.TotalOps(), 3u);
}

TEST(RecorderSet, EmptySetHasZeroTotals) {
  RecorderSet set(kStart);
  EXPECT_EQ(set.TotalBytes(), 0u);
  EXPECT_EQ(set.TotalOps(), 0u);
  std::unique_ptr<Recorder> merged = set.Merged();
  ASSERT_NE(merged, nullptr);
  EXPECT_EQ(merged->ops(), 0u);
}

TEST(RecorderSet, MergedUsesTheSetsStartAndInterval) {
  RecorderSet set(kStart, 100);
  set.Add()->Record(kStart + 50, 1, 1);
  set.Add()->Record(kStart + 150, 1, 2);
  set.Add()->Record(kStart + 160, 1, 4);
  std::unique_ptr<Recorder> merged = set.Merged();
  EXPECT_EQ(merged->bytes(), 7u);
  EXPECT_EQ(merged->ops(), 3u);
  Series series;
  merged->SeriesToProto(kStart + 200, &series);
  ASSERT_EQ(series.size(), 2);
  EXPECT_EQ(series[0].bytes(), 1u);
  EXPECT_EQ(series[1].bytes(), 6u);
}

TEST(RecorderSet, TotalsCanBeReadWhileWorkersRecord) {
  RecorderSet set(kStart);
  constexpr int kThreads = 4;
  constexpr int kOps = 20000;
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&set] {
      Recorder* r = set.Add();
      for (int i = 0; i < kOps; ++i) r->Record(kStart + i, 1, 2);
    });
  }
  uint64_t last = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t now = set.TotalOps();
    EXPECT_GE(now, last);
    last = now;
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(set.TotalOps(), uint64_t{kThreads} * kOps);
  EXPECT_EQ(set.TotalBytes(), uint64_t{kThreads} * kOps * 2);
  EXPECT_EQ(set.Merged()->latency().count(), uint64_t{kThreads} * kOps);
}

}  // namespace
}  // namespace stormark::common
