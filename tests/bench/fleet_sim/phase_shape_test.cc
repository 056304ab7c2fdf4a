#include "bench/fleet_sim/phase_shape.h"

#include "common/histogram.h"
#include "gtest/gtest.h"

namespace stormark::fleet_sim {
namespace {

stormark::v1::PhaseSpec RandioSpec(stormark::v1::RandioSpec::Pattern rw, uint64_t rate_iops,
                                   int64_t runtime_nanos) {
  stormark::v1::PhaseSpec spec;
  spec.set_phase_id("run-1");
  spec.set_target("sink");
  spec.mutable_randio()->set_rw(rw);
  spec.mutable_randio()->set_rate_iops(rate_iops);
  spec.mutable_randio()->set_runtime_nanos(runtime_nanos);
  spec.mutable_randio()->set_time_based(true);
  return spec;
}

TEST(PhaseShape, OperationsAreTheRateTimesTheRuntime) {
  auto shape = ShapeOf(RandioSpec(stormark::v1::RandioSpec::RANDREAD, 200, 3'000'000'000));
  ASSERT_TRUE(shape.ok()) << shape.status();
  EXPECT_EQ((*shape)->duration_nanos, 3'000'000'000);
  EXPECT_EQ((*shape)->progress_interval_nanos, 1'000'000'000);
  EXPECT_EQ((*shape)->ops, 600u);
  EXPECT_EQ((*shape)->bytes, 600u * 4096);
  const stormark::v1::PhaseResult& r = (*shape)->result;
  ASSERT_EQ(r.measurements_size(), 1);
  EXPECT_EQ(r.measurements(0).name(), "read");
  EXPECT_EQ(r.measurements(0).series_size(), 3);
  auto latency = common::LatencyHistogram::FromProto(r.measurements(0).latency());
  ASSERT_TRUE(latency.ok()) << latency.status();
  EXPECT_EQ(latency->count(), 600u);
  EXPECT_GE(latency->min(), 1000u);
  EXPECT_LT(latency->max(), 3000u);
}

TEST(PhaseShape, MixedPatternsSplitByRwmixread) {
  stormark::v1::PhaseSpec spec = RandioSpec(stormark::v1::RandioSpec::RANDRW, 100, 1'000'000'000);
  spec.mutable_randio()->set_rwmixread(70);
  spec.mutable_randio()->set_numjobs(2);
  auto shape = ShapeOf(spec);
  ASSERT_TRUE(shape.ok()) << shape.status();
  const stormark::v1::PhaseResult& r = (*shape)->result;
  ASSERT_EQ(r.measurements_size(), 2);
  EXPECT_EQ(r.measurements(0).name(), "read");
  EXPECT_EQ(r.measurements(0).ops(), 140u);
  EXPECT_EQ(r.measurements(1).name(), "write");
  EXPECT_EQ(r.measurements(1).ops(), 60u);
}

TEST(PhaseShape, RefusesWhatItCannotPlay) {
  stormark::v1::PhaseSpec stream;
  stream.set_target("sink");
  stream.mutable_stream();
  EXPECT_EQ(ShapeOf(stream).status().code(), absl::StatusCode::kInvalidArgument);
  stormark::v1::PhaseSpec elsewhere = RandioSpec(stormark::v1::RandioSpec::READ, 1, 1);
  elsewhere.set_target("scratch");
  EXPECT_EQ(ShapeOf(elsewhere).status().code(), absl::StatusCode::kNotFound);
}

TEST(PhaseShape, ResultAndProgressCarryTheAgentsTimes) {
  auto shape = ShapeOf(RandioSpec(stormark::v1::RandioSpec::RANDREAD, 200, 2'000'000'000));
  ASSERT_TRUE(shape.ok());
  const stormark::v1::PhaseResult r = ResultOf(**shape, 100, 2'000'000'200, 2'000'000'100, 7);
  EXPECT_EQ(r.state(), stormark::v1::PhaseResult::SUCCEEDED);
  EXPECT_EQ(r.start_unix_nanos(), 100);
  EXPECT_EQ(r.end_unix_nanos(), 2'000'000'200);
  EXPECT_EQ(r.start_late_nanos(), 7);
  const auto p = ProgressAt(**shape, 1'000'000'000);
  EXPECT_EQ(p.ops(), 200u);
  EXPECT_EQ(ProgressAt(**shape, 5'000'000'000).ops(), 400u);  // Never past the total.
}

TEST(PhaseShapes, OneShapePerSpec) {
  PhaseShapes shapes;
  const auto spec = RandioSpec(stormark::v1::RandioSpec::RANDREAD, 200, 1'000'000'000);
  auto a = shapes.For(spec);
  auto b = shapes.For(spec);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  auto other = spec;
  other.set_phase_id("run-2");
  auto c = shapes.For(other);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(*a, *c);
}

}  // namespace
}  // namespace stormark::fleet_sim
