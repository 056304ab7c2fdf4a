#include "controller/report/html/report_html.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

size_t Count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The host's one-second sample as two halves: a time series with a line to draw.
HostOutcome TwoSamples(HostOutcome host) {
  auto* series = host.result->mutable_series();
  const stormark::v1::IntervalSample whole = series->Get(0);
  series->Clear();
  for (int half = 0; half < 2; ++half) {
    stormark::v1::IntervalSample* s = series->Add();
    s->set_offset_nanos(half * whole.length_nanos() / 2);
    s->set_length_nanos(whole.length_nanos() / 2);
    s->set_bytes(whole.bytes() / 2);
    s->set_ops(whole.ops() / 2);
  }
  return host;
}

StoredRun Stored(RunRecord record) {
  StoredRun run;
  run.record = std::move(record);
  run.listing.run_id = run.record.run_id;
  run.listing.status = "completed";
  run.listing.planned_phases = run.listing.recorded_phases = run.record.phases.size();
  return run;
}

// Two hosts, a sweep of chunk over three values, two repetitions each.
StoredRun SweptRun() {
  std::vector<PhaseOutcome> phases;
  const std::vector<std::string> chunks = {"64k", "256k", "1M"};
  for (size_t c = 0; c < chunks.size(); ++c) {
    for (int rep = 0; rep < 2; ++rep) {
      phases.push_back(Phase(WritePlan(),
                             {TwoSamples(SucceededHost("db1", 100 + 10 * c + rep)),
                              TwoSamples(SucceededHost("db2", 200 + 10 * c + rep, 2'000'000))},
                             rep, {{"chunk", chunks[c]}}));
    }
  }
  StoredRun run;
  run.record = MakeRun("r20261130-081500-abcd", {"db1", "db2"}, std::move(phases));
  run.listing.run_id = run.record.run_id;
  run.listing.label = "nightly";
  run.listing.status = "completed";
  run.listing.started_unix_nanos = kBase;
  run.listing.planned_phases = run.listing.recorded_phases = 6;
  run.listing.hosts = {"db1", "db2"};
  run.listing.stormark_version = "0.1.0";
  return run;
}

TEST(HtmlReport, IsOneSelfContainedDocument) {
  const std::string html = HtmlReport(SweptRun());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_THAT(html, HasSubstr("<meta charset=\"utf-8\">"));
  EXPECT_THAT(html, HasSubstr("Content-Security-Policy\" content=\"default-src 'none'"));
  // Nothing to fetch and nothing to run.
  for (const char* outside : {"<script", "src=", "href=", "@import", "url("}) {
    EXPECT_THAT(html, Not(HasSubstr(outside))) << outside;
  }
  EXPECT_EQ(Count(html, "<html"), 1u);
  EXPECT_EQ(Count(html, "<section "), Count(html, "</section>"));
  EXPECT_EQ(Count(html, "<table"), Count(html, "</table>"));
  EXPECT_EQ(Count(html, "<svg "), Count(html, "</svg>"));
}

TEST(HtmlReport, HoldsEverySection) {
  const std::string html = HtmlReport(SweptRun());
  for (const char* id : {"results", "throughput", "sweeps", "latency", "series", "environment"}) {
    EXPECT_THAT(html, HasSubstr(std::string("<section id=\"") + id + "\">")) << id;
  }
  EXPECT_THAT(html, HasSubstr("<title>stormark report r20261130-081500-abcd: nightly</title>"));
  // Throughput: MiB/s and IOPS bars, 2 hosts x 3 points.
  EXPECT_EQ(Count(html, "data-kind=\"bar\" data-series=\"2\" data-points=\"6\""), 2u);
  // Sweep: one line per host over the three chunk sizes.
  EXPECT_THAT(html, HasSubstr("seq-write: MiB/s against chunk"));
  // Latency: percentiles and CDF, a line per host and point.
  EXPECT_THAT(html, HasSubstr("seq-write: latency by percentile"));
  EXPECT_THAT(html, HasSubstr("seq-write: latency CDF"));
  // A time series per phase run.
  EXPECT_EQ(Count(html, "seconds into the timed region"), 6u);
}

TEST(HtmlReport, APhaseOverInOneSampleHasNoTimeSeries) {
  const StoredRun run =
      Stored(MakeRun("r1", {"db1"}, {Phase(WritePlan(), {SucceededHost("db1", 100)})}));
  EXPECT_EQ(Count(HtmlReport(run), "seconds into the timed region"), 0u);
}

TEST(HtmlReport, ACommandIsItsWallTimeAndCpuNeverIops) {
  PhasePlan untar;
  untar.name = "untar";
  untar.spec.mutable_command()->set_shell("tar xf x.tar");
  HostOutcome host = TwoSamples(SucceededHost("db1", 1));
  host.result->set_bytes(0);
  const StoredRun run = Stored(MakeRun("r1", {"db1"}, {Phase(untar, {host})}));
  const std::string html = HtmlReport(run);
  const std::string results = html.substr(html.find("<section id=\"results\">"));
  const std::string table = results.substr(0, results.find("</table>"));
  EXPECT_THAT(table, HasSubstr("<th>elapsed</th>"));
  EXPECT_THAT(table, HasSubstr("<th>CPU%</th>"));
  for (const char* iops : {"<th>ops/s</th>", "<th>p50 lat</th>", "<th>MiB/s</th>"}) {
    EXPECT_THAT(table, Not(HasSubstr(iops))) << iops;
  }
  EXPECT_EQ(Count(html, "seconds into the timed region"), 0u);
}

TEST(HtmlReport, BonnieIsShownAsBonniesOwnTable) {
  PhasePlan bonnie;
  bonnie.name = "bonnie";
  bonnie.spec.mutable_bonnie();
  const StoredRun run =
      Stored(MakeRun("r1", {"db1"}, {Phase(bonnie, {SucceededHost("db1", 100)})}));
  const std::string html = HtmlReport(run);
  const std::string results = html.substr(html.find("<section id=\"results\">"));
  EXPECT_THAT(results, HasSubstr("<pre>"));
  EXPECT_THAT(results.substr(0, results.find("</section>")),
              Not(HasSubstr("<table class=\"results\">")))
      << "no row blending bonnie's tests";
}

TEST(HtmlReport, RangesThatOverlapAreNotShaded) {
  // db1 100 and 120, db2 110 and 130 MiB/s: the medians differ, the ranges overlap.
  std::vector<PhaseOutcome> phases;
  for (int rep = 0; rep < 2; ++rep) {
    phases.push_back(
        Phase(WritePlan(),
              {SucceededHost("db1", 100 + 20 * rep), SucceededHost("db2", 110 + 20 * rep)}, rep));
  }
  const std::string html = HtmlReport(Stored(MakeRun("r1", {"db1", "db2"}, std::move(phases))));
  const std::string results = html.substr(html.find("<section id=\"results\">"));
  const std::string table = results.substr(0, results.find("</table>"));
  EXPECT_THAT(table, HasSubstr(">110.0<span class=\"range\">[100.0-120.0]</span></td>"));
  EXPECT_THAT(table, HasSubstr("<td class=\"num\">110.0<span")) << "unshaded";
}

TEST(HtmlReport, BarsAreLabelledByTheSweptValuesAndTheAxisByTheKeys) {
  const std::string html = HtmlReport(SweptRun());
  const std::string throughput = html.substr(html.find("<section id=\"throughput\">"));
  EXPECT_THAT(throughput, HasSubstr(">sweep point: chunk</text>"));
  for (const char* value : {">64k</text>", ">256k</text>", ">1M</text>"}) {
    EXPECT_THAT(throughput, HasSubstr(value)) << value;
  }
  EXPECT_THAT(throughput.substr(0, throughput.find("</section>")),
              Not(HasSubstr(">chunk=64k</text>")));
}

TEST(HtmlReport, ResultsTableShowsMediansAndRangesShadedByRank) {
  const std::string html = HtmlReport(SweptRun());
  // db1 at chunk=64k ran at 100 and 101 MiB/s.
  EXPECT_THAT(html, HasSubstr(">100.5<span class=\"range\">[100.0-101.0]</span></td>"));
  // db2 is faster at every point: its MiB/s cells are the greener ones.
  EXPECT_THAT(html, HasSubstr("style=\"background:#"));
  EXPECT_THAT(html, HasSubstr("<tr class=\"aggregate\">"));
}

TEST(HtmlReport, EscapesHostsLabelsAndErrors) {
  StoredRun run = SweptRun();
  const std::string evil = "<img src=x onerror=alert(1)>";
  run.listing.label = evil;
  run.record.agents[0].host = evil;
  for (PhaseOutcome& p : run.record.phases) {
    p.hosts[0].host = evil;
    p.hosts[1] = UnreachableHost("db2");
    p.hosts[1].error = "refused: </td><script>x</script>";
  }
  const std::string html = HtmlReport(run);
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
  EXPECT_THAT(html, HasSubstr("refused: &lt;/td&gt;&lt;script&gt;"));
}

TEST(HtmlReport, ARunWithoutPhasesSaysSo) {
  StoredRun run = SweptRun();
  run.record.phases.clear();
  const std::string html = HtmlReport(run);
  EXPECT_THAT(html, HasSubstr("No phase was recorded."));
  EXPECT_THAT(html, Not(HasSubstr("<svg ")));
}

}  // namespace
}  // namespace stormark::controller
