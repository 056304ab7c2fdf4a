#include "controller/report/html/report_html.h"

#include <cstdint>
#include <utility>

#include "fmt/format.h"
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

// `n` hosts h000, h001, ... in racks r1 and r2 (label "rack"), each moving 100 MiB in one
// second in ten 100 ms samples at 1 ms per operation, but host `slow`: 20 MiB at 50 ms. Two
// repetitions of one phase.
StoredRun FleetRun(size_t n, size_t slow) {
  std::vector<std::string> names;
  for (size_t h = 0; h < n; ++h) names.push_back(fmt::format("h{:03}", h));
  std::vector<PhaseOutcome> phases;
  for (int rep = 0; rep < 2; ++rep) {
    std::vector<HostOutcome> hosts;
    for (size_t h = 0; h < n; ++h) {
      HostOutcome host = h == slow ? SucceededHost(names[h], 20, 50'000'000)
                                   : SucceededHost(names[h], 100, 1'000'000);
      auto* series = host.result->mutable_series();
      const stormark::v1::IntervalSample whole = series->Get(0);
      series->Clear();
      for (int k = 0; k < 10; ++k) {
        stormark::v1::IntervalSample* s = series->Add();
        s->set_offset_nanos(k * whole.length_nanos() / 10);
        s->set_length_nanos(whole.length_nanos() / 10);
        s->set_bytes(whole.bytes() / 10);
        s->set_ops(whole.ops() / 10);
      }
      hosts.push_back(std::move(host));
    }
    phases.push_back(Phase(WritePlan(), std::move(hosts), rep));
  }
  StoredRun run = Stored(MakeRun("r20261207-120000-f1ee", names, std::move(phases)));
  for (size_t h = 0; h < n; ++h)
    run.record.agents[h].labels.emplace_back("rack", h % 2 ? "r2" : "r1");
  run.listing.hosts = names;
  return run;
}

TableView View(const StoredRun& run, bool all_hosts = false, const std::string& by = "") {
  return MakeTableView(all_hosts, by, run.record.agents);
}

TEST(HtmlReport, AFleetIsShownByGroupAndItsSizeGrowsWithTheGroupsNotTheHosts) {
  const StoredRun forty = FleetRun(40, 13), four_hundred = FleetRun(400, 13);
  const std::string small = HtmlReport(forty, View(forty));
  const std::string large = HtmlReport(four_hundred, View(four_hundred));
  // The tables of `results show`, a chart line per group, a host drawn only when it stands out.
  EXPECT_THAT(small, HasSubstr("40 hosts in 1 group by via and target"));
  EXPECT_THAT(large, HasSubstr("400 hosts in 1 group by via and target"));
  EXPECT_THAT(large, HasSubstr("hosts</th><td>400: h000, h001, h002, h003, h004 and 395 more"));
  EXPECT_EQ(Count(large, "data-name=\"h0"), Count(small, "data-name=\"h0"));
  EXPECT_EQ(Count(large, "<tr><td>h"), 0u);  // No table row per host.
  EXPECT_LT(large.size(), small.size() * 5 / 4) << small.size() << " -> " << large.size();
  // The environment: each fact's values with how many hosts have each.
  EXPECT_THAT(large, HasSubstr("a value each: <b>"));
  // Every host's page is still available.
  const std::string every = HtmlReport(forty, View(forty, /*all_hosts=*/true));
  EXPECT_GE(Count(every, "data-name=\"h0"), 40u);
  EXPECT_GT(every.size(), small.size());
}

TEST(HtmlReport, AFleetsTimeSeriesSumsTheHostsAndNamesTheOneThatStandsOut) {
  const StoredRun run = FleetRun(40, 13);
  const std::string html = HtmlReport(run, View(run));
  // 39 hosts at 100 MiB/s and one at 20, in each 100 ms interval.
  EXPECT_THAT(html, HasSubstr("scratch (40 hosts), 0.2 s to 0.3 s: 3920 MiB/s together"));
  EXPECT_THAT(html, HasSubstr("scratch, 0.2 s to 0.3 s: median host 100 MiB/s, lowest 20, "
                              "highest 100, 40 hosts"));
  EXPECT_THAT(html, HasSubstr("class=\"band\""));
  // The slow host: in the table's outliers, as its own line in the time series and latency.
  EXPECT_THAT(html, HasSubstr("outliers in scratch: h013 (20.0 MiB/s, low; p99 lat"));
  EXPECT_THAT(html, HasSubstr("data-name=\"h013 (20.0 MiB/s, low; p99 lat"));
  EXPECT_GE(Count(html, "data-name=\"h013 ("), 4u);  // 2 time series, 2 latency charts.
  EXPECT_EQ(Count(html, "data-name=\"h012"), 0u);
}

TEST(HtmlReport, AFleetsSamplesOutsideThePhaseAreLeftOutOfItsCurves) {
  StoredRun run = FleetRun(40, 13);
  for (PhaseOutcome& p : run.record.phases) {
    auto* series = p.hosts[5].result->mutable_series();
    for (const auto& [offset, length] :
         {std::pair{INT64_MAX, int64_t{1}}, std::pair{int64_t{0}, INT64_MAX},
          std::pair{int64_t{-1}, int64_t{100}}, std::pair{int64_t{0}, int64_t{-5}}}) {
      stormark::v1::IntervalSample* s = series->Add();
      s->set_offset_nanos(offset);
      s->set_length_nanos(length);
      s->set_bytes(UINT64_MAX / 2);
    }
    // The first host's first sample, which sets the intervals' length, as long as can be.
    auto* first = p.hosts[0].result->mutable_series();
    first->Add()->set_length_nanos(INT64_MAX);
    for (int i = first->size() - 1; i > 0; --i) first->SwapElements(i, i - 1);
  }
  const std::string html = HtmlReport(run, View(run));
  // The intervals hold what the hosts did, as without the hostile samples.
  EXPECT_THAT(html, HasSubstr("scratch (40 hosts), 0.2 s to 0.3 s: 3920 MiB/s together"));
  EXPECT_THAT(html, HasSubstr("intervals of 0.1 s"));
}

TEST(HtmlReport, AFleetGroupedByALabelEscapesItsValues) {
  StoredRun run = FleetRun(40, 13);
  for (size_t h = 0; h < 40; ++h) {
    run.record.agents[h].labels = {{"rack", h % 2 ? "<script>r2</script>" : "r1\"><img src=x>"}};
  }
  const std::string html = HtmlReport(run, View(run, false, "label:rack"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, HasSubstr("40 hosts in 2 groups by label rack"));
  EXPECT_THAT(html, HasSubstr("rack=&lt;script&gt;r2&lt;/script&gt; (20 hosts)"));
}

}  // namespace
}  // namespace stormark::controller
