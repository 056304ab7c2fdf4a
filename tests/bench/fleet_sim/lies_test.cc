#include "bench/fleet_sim/lies.h"

#include <cstdint>
#include <limits>

#include "gtest/gtest.h"

namespace stormark::fleet_sim {
namespace {

stormark::v1::PhaseResult Honest() {
  stormark::v1::PhaseResult r;
  r.set_elapsed_nanos(1'000'000'000);
  r.set_start_unix_nanos(1'796'650'000'000'000'000);
  r.set_bytes(4096);
  r.add_series()->set_offset_nanos(0);
  return r;
}

TEST(Lies, EachWordNamesItsLieAndOthersAreRefused) {
  for (const std::string& word : LieWords()) EXPECT_TRUE(ParseLie(word).has_value()) << word;
  EXPECT_EQ(ParseLie("elapsed"), Lie::kElapsed);
  EXPECT_EQ(ParseLie("progress-elapsed"), Lie::kProgressElapsed);
  EXPECT_FALSE(ParseLie("none").has_value());
  EXPECT_FALSE(ParseLie("").has_value());
}

TEST(Lies, EachLieChangesOneFigureAndAnHonestAgentNone) {
  const stormark::v1::PhaseResult honest = Honest();
  stormark::v1::PhaseResult r = honest;
  Tell(Lie::kNone, &r);
  Tell(Lie::kProgressElapsed, &r);  // A lie of progress leaves the result alone.
  EXPECT_EQ(r.SerializeAsString(), honest.SerializeAsString());

  r = honest;
  Tell(Lie::kElapsed, &r);
  EXPECT_EQ(r.elapsed_nanos(), std::numeric_limits<int64_t>::max());
  r = honest;
  Tell(Lie::kStart, &r);
  EXPECT_EQ(r.start_unix_nanos(), std::numeric_limits<int64_t>::min());
  r = honest;
  Tell(Lie::kSeriesOffset, &r);
  EXPECT_EQ(r.series(0).offset_nanos(), std::numeric_limits<int64_t>::max() - 5);
  r = honest;
  Tell(Lie::kBytes, &r);
  EXPECT_EQ(r.bytes(), std::numeric_limits<uint64_t>::max());

  stormark::v1::RunUpdate::Progress p;
  p.set_elapsed_nanos(1000);
  Tell(Lie::kElapsed, &p);
  EXPECT_EQ(p.elapsed_nanos(), 1000);
  Tell(Lie::kProgressElapsed, &p);
  EXPECT_EQ(p.elapsed_nanos(), std::numeric_limits<int64_t>::max());
}

}  // namespace
}  // namespace stormark::fleet_sim
