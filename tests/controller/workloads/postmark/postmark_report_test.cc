#include "controller/workloads/postmark/postmark_report.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/histogram.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::Measurement;
using stormark::v1::PhaseResult;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kSecond = 1'000'000'000;

void Add(PhaseResult* result, const std::string& name, uint64_t ops, uint64_t bytes,
         int64_t elapsed, uint64_t latency_nanos = 0) {
  Measurement* m = result->add_measurements();
  m->set_name(name);
  m->set_ops(ops);
  m->set_bytes(bytes);
  m->set_elapsed_nanos(elapsed);
  m->set_too_fast(elapsed < kSecond / 2);
  if (latency_nanos != 0) {
    common::LatencyHistogram h;
    for (uint64_t i = 0; i < ops; ++i) h.Record(latency_nanos);
    h.ToProto(m->mutable_latency());
  }
}

// The reference post's first local run, in our measurements: PostMark's counts and bytes,
// timed in fractions of a second.
PhaseResult ReferenceRun(double scale = 1.0) {
  auto ns = [scale](double seconds) { return static_cast<int64_t>(seconds * scale * kSecond); };
  PhaseResult r;
  const uint64_t read_bytes = 156791000;  // 149.53 MiB
  const uint64_t alone_bytes = 10000000, mixed_bytes = 125000000, append_bytes = 34711000;
  Add(&r, "total", 27170 + 24986 + 24697 + 27170,
      read_bytes + alone_bytes + mixed_bytes + append_bytes, ns(21.5));
  Add(&r, "create_alone", 2000, alone_bytes, ns(0.8), 40000);
  Add(&r, "transactions", 50000, read_bytes + mixed_bytes + append_bytes, ns(20.0));
  Add(&r, "create_mixed", 25170, mixed_bytes, ns(20.0), 100000);
  Add(&r, "read", 24986, read_bytes, ns(20.0), 20000);
  Add(&r, "append", 24697, append_bytes, ns(20.0), 30000);
  Add(&r, "delete_mixed", 24830, 0, ns(20.0), 50000);
  Add(&r, "delete_alone", 2340, 0, ns(0.7), 10000);
  return r;
}

TEST(PostmarkVerboseReport, HasPostmarksLayoutWithSubSecondFigures) {
  EXPECT_EQ(PostmarkVerboseReport(ReferenceRun()),
            "Time:\n"
            "\t21.50 seconds total\n"
            "\t20.00 seconds of transactions (2500 per second)\n"
            "\n"
            "Files:\n"
            "\t27170 created (1264 per second)\n"
            "\t\tCreation alone: 2000 files (2500 per second)\n"
            "\t\tMixed with transactions: 25170 files (1258 per second)\n"
            "\t24986 read (1249 per second)\n"
            "\t24697 appended (1235 per second)\n"
            "\t27170 deleted (1264 per second)\n"
            "\t\tDeletion alone: 2340 files (3343 per second)\n"
            "\t\tMixed with transactions: 24830 files (1242 per second)\n"
            "\n"
            "Data:\n"
            "\t149.53 megabytes read (6.95 megabytes per second)\n"
            "\t161.85 megabytes written (7.53 megabytes per second)\n"
            "\n"
            "Latency per file operation:\n"
            "\t        files     mean      p50      p99      max\n"
            "\tcreate  27170  95.6 us   100 us   100 us   100 us\n"
            "\tread    24986  20.0 us  20.0 us  20.0 us  20.0 us\n"
            "\tappend  24697  30.0 us  30.0 us  30.0 us  30.0 us\n"
            "\tdelete  27170  46.6 us  50.0 us  50.0 us  50.0 us\n"
            "\n"
            "under 1 s: creation alone 800 ms, deletion alone 700 ms. PostMark's clock counts "
            "whole seconds and times such a part as 1 s, so its rate for it reads at most the "
            "part's file count; these rates use the exact times\n");
}

TEST(PostmarkVerboseReport, SaysNothingOfWholeSecondsWhenEveryPartTookOne) {
  EXPECT_THAT(PostmarkVerboseReport(ReferenceRun(2.0)), Not(HasSubstr("under 1 s")));
}

TEST(PostmarkVerboseReport, MarksFiguresTimedOverLessThanHalfASecond) {
  const std::string report = PostmarkVerboseReport(ReferenceRun(0.02));
  EXPECT_THAT(report, HasSubstr("\t0.43 seconds total *\n"));
  EXPECT_THAT(report, HasSubstr("Creation alone: 2000 files (125000 per second) *\n"));
  EXPECT_THAT(report, HasSubstr("megabytes per second) *\n"));
  EXPECT_THAT(report, HasSubstr("\n* timed over less than 0.5 s"));
  // Everything was short: the note says to raise both.
  EXPECT_THAT(report, HasSubstr("too short to be a stable figure; raise number (files) and "
                                "transactions\n"));
  EXPECT_THAT(PostmarkVerboseReport(ReferenceRun()), Not(HasSubstr("*")));
}

TEST(PostmarkVerboseReport, TheTooFastNoteNamesWhatToRaise) {
  // Only the pool's creation and deletion (0.8 s and 0.7 s at scale 1) were short.
  const std::string report = PostmarkVerboseReport(ReferenceRun(0.5));
  EXPECT_THAT(report, HasSubstr("stable figure; raise number (files in the pool)\n"));
  EXPECT_THAT(report, Not(HasSubstr("transactions\n")));
}

TEST(PostmarkVerboseReport, SmallDataIsInKilobytesAsPostmarkScales) {
  PhaseResult r;
  Add(&r, "total", 10, 3000, kSecond);
  Add(&r, "create_alone", 1, 2048, kSecond / 4);
  Add(&r, "transactions", 2, 1024, kSecond / 2);
  for (const char* name : {"create_mixed", "append", "delete_mixed"}) {
    Add(&r, name, 0, 0, kSecond / 2);
  }
  Add(&r, "read", 1, 1024, kSecond / 2);
  Add(&r, "delete_alone", 1, 0, kSecond / 4);
  const std::string report = PostmarkVerboseReport(r);
  EXPECT_THAT(report, HasSubstr("\t1.00 kilobytes read (1.00 kilobytes per second)\n"));
  EXPECT_THAT(report, HasSubstr("\t2.00 kilobytes written"));
  EXPECT_THAT(report, HasSubstr("\t0 appended (0.00 per second)\n"));
  EXPECT_THAT(report, HasSubstr("\tappend      0     -    -    -    -\n"));
}

TEST(PostmarkVerboseReport, IsEmptyWithoutPostmarkMeasurements) {
  PhaseResult r = ReferenceRun();
  r.mutable_measurements()->RemoveLast();
  EXPECT_EQ(PostmarkVerboseReport(r), "");
  EXPECT_EQ(PostmarkTerseLine(r), "");
  EXPECT_EQ(PostmarkComparisonTable({{"a", r}}), "");
}

TEST(PostmarkTerseLine, HasPostmarksThirteenFiguresInItsOrder) {
  EXPECT_EQ(PostmarkTerseLine(ReferenceRun()),
            "22 20 2500.00 1263.72 2500.00 1258.50 1249.30 1234.85 1263.72 3342.86 "
            "1241.50 7292604.65 7893534.88");
  // A time under a second is 1, as PostMark's clock makes it; never 0.
  EXPECT_THAT(PostmarkTerseLine(ReferenceRun(0.01)), ::testing::StartsWith("1 1 "));
}

TEST(PostmarkTerseReport, OneHostIsPostmarksLineAloneSeveralATableWithAHostColumn) {
  const PhaseResult r = ReferenceRun(2.0);  // Every part over a second: no note.
  EXPECT_EQ(PostmarkTerseReport({{"local", r}}), PostmarkTerseLine(r) + "\n");
  const std::string table = PostmarkTerseReport({{"local", r}, {"aoe", ReferenceRun(2.5)}});
  const std::vector<std::string> lines = absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 3u) << table;
  const std::vector<std::string> header = absl::StrSplit(lines[0], ' ', absl::SkipEmpty());
  ASSERT_EQ(header.size(), 14u) << lines[0];
  EXPECT_EQ(header[0], "host");
  EXPECT_EQ(header[10], "delete_alone/s");
  const std::vector<std::string> local = absl::StrSplit(lines[1], ' ', absl::SkipEmpty());
  ASSERT_EQ(local.size(), 14u);
  EXPECT_EQ(local[0], "local");
  const std::vector<std::string> line = absl::StrSplit(PostmarkTerseLine(r), ' ');
  EXPECT_EQ(std::vector<std::string>(local.begin() + 1, local.end()), line);
}

TEST(PostmarkTerseReport, ANoteOnPartsUnderASecondComesFirstSoTheLastLineIsPostmarks) {
  const PhaseResult r = ReferenceRun();  // Creation and deletion alone under 1 s.
  const std::string report = PostmarkTerseReport({{"local", r}});
  EXPECT_THAT(report, ::testing::StartsWith("# under 1 s: creation alone 800 ms, deletion alone "
                                            "700 ms."));
  EXPECT_THAT(report, ::testing::EndsWith(absl::StrCat("\n", PostmarkTerseLine(r), "\n")));
}

TEST(PostmarkComparisonTable, PutsHostsSideBySide) {
  const std::string table =
      PostmarkComparisonTable({{"local", ReferenceRun()}, {"aoe-host:7420", ReferenceRun(1.25)}});
  EXPECT_THAT(table, HasSubstr("  PostMark                                          local      "
                               "aoe-host:7420\n"
                               "  seconds total                                     21.50      "
                               "        26.88\n"
                               "  seconds of transactions                           20.00      "
                               "        25.00\n"
                               "  transactions per second                            2500      "
                               "         2000\n"
                               "  files created                                     27170      "
                               "        27170\n"
                               "    per second                                       1264      "
                               "         1011\n"
                               "    creation alone per second                        2500      "
                               "         2000\n"));
  EXPECT_THAT(table, HasSubstr("  megabytes read                                   149.53      "
                               "       149.53\n"));
  EXPECT_THAT(table, HasSubstr("  read latency p50 / p99                20.0 us / 20.0 us  "
                               "20.0 us / 20.0 us\n"));
  EXPECT_THAT(table, Not(HasSubstr("*")));
}

TEST(PostmarkPhaseReport, OneHostVerboseSeveralATableTerseOneLineEach) {
  const PhaseResult r = ReferenceRun();
  EXPECT_EQ(PostmarkPhaseReport({{"local", r}}, false), PostmarkVerboseReport(r));
  EXPECT_EQ(PostmarkPhaseReport({{"a", r}, {"b", r}}, false),
            PostmarkComparisonTable({{"a", r}, {"b", r}}));
  EXPECT_EQ(PostmarkPhaseReport({{"a", r}, {"b", r}}, true),
            PostmarkTerseReport({{"a", r}, {"b", r}}));
  EXPECT_THAT(PostmarkPhaseReport({{"a", r}, {"b", r}}, true), Not(HasSubstr("a: ")));
  EXPECT_EQ(PostmarkPhaseReport({}, false), "");
}

}  // namespace
}  // namespace stormark::controller
