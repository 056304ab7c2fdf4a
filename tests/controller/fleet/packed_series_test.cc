#include "controller/fleet/packed_series.h"

#include <google/protobuf/util/message_differencer.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using google::protobuf::util::MessageDifferencer;
using stormark::v1::PhaseResult;

void AddSamples(google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>* series, int count,
                uint64_t bytes) {
  for (int k = 0; k < count; ++k) {
    auto* s = series->Add();
    s->set_offset_nanos(k * 1'000'000'000LL);
    s->set_length_nanos(1'000'000'000);
    s->set_bytes(bytes + k);
    s->set_ops(k);
  }
}

// A result with a series everywhere one can be: its own, two measurements', a job's
// measurements' and two threads'; and what is not a series: totals, a histogram, a note.
PhaseResult Full() {
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_bytes(1 << 20);
  r.set_ops(256);
  r.add_warnings("size is under 2x RAM");
  (*r.mutable_host_environment())["kernel"] = "6.1.0";
  AddSamples(r.mutable_series(), 30, 100);
  for (const char* name : {"read", "write"}) {
    auto* m = r.add_measurements();
    m->set_name(name);
    m->set_ops(128);
    AddSamples(m->mutable_series(), 30, 200);
  }
  auto* job = r.add_jobs();
  job->set_name("mix");
  AddSamples(job->add_measurements()->mutable_series(), 30, 300);
  job->add_measurements()->set_name("no series");
  for (int t = 0; t < 2; ++t) {
    auto* thread = r.add_threads();
    thread->set_name("thread");
    AddSamples(thread->add_measurements()->mutable_series(), 30, 400);
  }
  return r;
}

TEST(PackSeries, TakesEverySeriesOutAndPutsThemBackWhereTheyWere) {
  const PhaseResult full = Full();
  PhaseResult r = full;
  const std::string packed = PackSeries(&r);
  EXPECT_EQ(r.series_size(), 0);
  for (const auto& m : r.measurements()) EXPECT_EQ(m.series_size(), 0);
  for (const auto& m : r.jobs(0).measurements()) EXPECT_EQ(m.series_size(), 0);
  EXPECT_EQ(r.threads_size(), 0);
  // What is not a series stays.
  EXPECT_EQ(r.measurements_size(), 2);
  EXPECT_EQ(r.measurements(1).name(), "write");
  EXPECT_EQ(r.host_environment().at("kernel"), "6.1.0");
  // Packed, the series take a fraction of their parsed size.
  EXPECT_LT(packed.size(), full.SpaceUsedLong() / 3);
  // A note added meanwhile (the cleanup's) stays when they come back.
  r.add_warnings("cleanup left 1 entry on the target: x");
  ASSERT_TRUE(UnpackSeries(packed, &r));
  PhaseResult want = full;
  want.add_warnings("cleanup left 1 entry on the target: x");
  EXPECT_TRUE(MessageDifferencer::Equals(r, want));
}

TEST(PackSeries, SeriesThatDoNotFitAreRefusedAndTheResultLeftAlone) {
  PhaseResult r = Full();
  const std::string packed = PackSeries(&r);
  PhaseResult fewer = r;
  fewer.mutable_measurements()->RemoveLast();
  const PhaseResult before = fewer;
  EXPECT_FALSE(UnpackSeries(packed, &fewer));
  EXPECT_TRUE(MessageDifferencer::Equals(fewer, before));
  PhaseResult other_job = r;
  other_job.mutable_jobs(0)->mutable_measurements()->RemoveLast();
  EXPECT_FALSE(UnpackSeries(packed, &other_job));
  EXPECT_FALSE(UnpackSeries("\xff\xff not a message", &r));
  EXPECT_TRUE(UnpackSeries(packed, &r));
}

TEST(PackSeries, AResultWithoutSeriesPacksToNothingMuch) {
  PhaseResult r;
  r.set_state(PhaseResult::FAILED);
  const std::string packed = PackSeries(&r);
  EXPECT_TRUE(packed.empty());
  EXPECT_TRUE(UnpackSeries(packed, &r));
  EXPECT_EQ(r.state(), PhaseResult::FAILED);
}

}  // namespace
}  // namespace stormark::controller
