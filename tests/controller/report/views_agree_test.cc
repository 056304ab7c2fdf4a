// One run, every view: the phase table (as `run` and `results show` print it), the JSON, the
// CSV export and the HTML report carry the same figure for each host, and the same marks: "*"
// for a figure with notes, "~" for the figures of a host aborted after it had done work, and
// the error of a host that has no figure.
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "controller/report/html/report_html.h"
#include "controller/report/report_export.h"
#include "controller/report/report_json.h"
#include "controller/report/report_table.h"
#include "controller/report/summary.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

constexpr double kMiB = 1024.0 * 1024.0;

// What every view must say of one host.
struct Expected {
  std::string host;
  std::string figure;  // MiB/s with one decimal, "" for none
  std::string mark;    // "", "*" or "~"
  std::string note;    // a note or error that must be shown with it
};

RunRecord ThreeKindsOfHost() {
  HostOutcome noted = SucceededHost("fast", 100);
  noted.result->add_warnings("too fast to time: the phase took 12 ms (use a larger size)");
  HostOutcome aborted = SucceededHost("cut", 50);
  aborted.result->set_state(stormark::v1::PhaseResult::ABORTED);
  aborted.result->set_error("aborted by the controller: --fail-fast after a failure on dead");
  HostOutcome dead = UnreachableHost("dead");
  return MakeRun("r20261201-230000-abcd", {"fast", "cut", "dead"},
                 {Phase(WritePlan(), {noted, aborted, dead})});
}

const std::vector<Expected>& Expectations() {
  static const std::vector<Expected> kExpected = {
      {"fast", "100.0", "*", "too fast to time"},
      {"cut", "50.0", "~", "partial: its figures cover the 1.00 s until it was aborted"},
      {"dead", "", "", "unreachable: connection refused"},
  };
  return kExpected;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ViewsAgree, ThePhaseTable) {
  const RunRecord run = ThreeKindsOfHost();
  const PhaseOutcome& phase = run.phases[0];
  const std::string table = FormatPhaseTable(phase, Summarize(phase), 0, 1, 1);
  for (const Expected& e : Expectations()) {
    SCOPED_TRACE(e.host);
    std::string row;
    for (const std::string& line : Lines(table)) {
      if (line.starts_with("  " + e.host + " ")) row = line;
    }
    ASSERT_FALSE(row.empty()) << table;
    if (e.figure.empty()) {
      EXPECT_THAT(row, HasSubstr(" - ")) << table;
    } else {
      EXPECT_THAT(row, HasSubstr(" " + e.figure + " " + e.mark + " ")) << table;
    }
    EXPECT_THAT(table, HasSubstr(e.host + ": ")) << table;
    EXPECT_THAT(table, HasSubstr(e.note)) << table;
  }
  // The all-hosts row carries the mark of the host figure in it that has notes.
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(all hosts .* [0-9.]+ \*)"))) << table;
}

TEST(ViewsAgree, TheJson) {
  const nlohmann::json report = RunToJson(ThreeKindsOfHost());
  const nlohmann::json& results = report["phases"][0]["results"];
  ASSERT_EQ(results.size(), Expectations().size());
  for (size_t i = 0; i < results.size(); ++i) {
    const Expected& e = Expectations()[i];
    const nlohmann::json& row = results[i];
    SCOPED_TRACE(e.host);
    EXPECT_EQ(row["host"], e.host);
    if (!e.figure.empty()) {
      EXPECT_EQ(fmt::format("{:.1f}", row["bytes_per_second"].get<double>() / kMiB), e.figure);
    } else {
      EXPECT_EQ(row["bytes_per_second"].get<double>(), 0.0);
    }
    EXPECT_EQ(!row["warnings"].empty(), e.mark == "*") << row.dump();
    EXPECT_EQ(row["partial"].get<bool>(), e.mark == "~") << row.dump();
    const std::string words = row["error"].get<std::string>() + row["warnings"].dump();
    if (e.mark != "~") {
      EXPECT_THAT(words, HasSubstr(e.note)) << row.dump();
    }
  }
}

TEST(ViewsAgree, TheCsv) {
  const std::vector<std::string> csv = Lines(RunCsv(ThreeKindsOfHost()));
  ASSERT_FALSE(csv.empty());
  EXPECT_TRUE(csv[0].ends_with(",metric,value,unit,marks\r")) << csv[0];
  for (const Expected& e : Expectations()) {
    SCOPED_TRACE(e.host);
    std::vector<std::string> rows;
    for (const std::string& line : csv) {
      if (line.find("," + e.host + ",") != std::string::npos) rows.push_back(line);
    }
    ASSERT_FALSE(rows.empty());
    for (const std::string& row : rows) EXPECT_TRUE(row.ends_with("," + e.mark + "\r")) << row;
    std::string throughput, notes;
    for (const std::string& row : rows) {
      if (row.find(",throughput,") != std::string::npos) throughput = row;
      if (row.find(",note,") != std::string::npos || row.find(",error,") != std::string::npos) {
        notes += row;
      }
    }
    if (e.figure.empty()) {
      EXPECT_EQ(throughput, "");
    } else {
      std::smatch value;
      ASSERT_TRUE(std::regex_search(throughput, value, std::regex(",throughput,([0-9.]+),B/s,")))
          << throughput;
      EXPECT_EQ(fmt::format("{:.1f}", std::stod(value[1]) / kMiB), e.figure);
    }
    EXPECT_THAT(notes, HasSubstr(e.note));
  }
}

TEST(ViewsAgree, TheHtml) {
  StoredRun stored;
  stored.record = ThreeKindsOfHost();
  stored.listing.run_id = stored.record.run_id;
  stored.listing.status = "completed";
  stored.listing.planned_phases = stored.listing.recorded_phases = 1;
  const std::string html = HtmlReport(stored);
  for (const Expected& e : Expectations()) {
    SCOPED_TRACE(e.host);
    // The host's row in the results table: its first figure cell is MiB/s.
    std::smatch cell;
    ASSERT_TRUE(std::regex_search(
        html, cell,
        std::regex(
            "<tr><td>" + e.host +
            R"(</td><td>[^<]*</td><td class="num">[^<]*</td><td class="num"[^>]*>([^<]*)</td>)")))
        << html.substr(html.find("<table class=\"results\""), 2000);
    EXPECT_EQ(cell[1], e.figure.empty() ? "-" : e.figure + " " + e.mark);
    if (e.mark == "~") {
      EXPECT_THAT(cell[0].str(), HasSubstr("0 (1 aborted ~)"));
    }
    EXPECT_THAT(html, HasSubstr(e.note));
  }
}

// Two hosts, the second stopped until the first had finished: each host's figure stands, their
// aggregate is no fleet's, and every view says so.
RunRecord HostsThatNeverRanTogether() {
  HostOutcome late = SucceededHost("late", 100);
  late.result->set_start_unix_nanos(kBase + 5 * kSecond);
  late.result->set_end_unix_nanos(kBase + 6 * kSecond);
  return MakeRun("r20261201-230000-beef", {"early", "late"},
                 {Phase(WritePlan(), {SucceededHost("early", 100), late})});
}

constexpr char kNeverTogether[] =
    "late started 4.00 s after early had finished: the hosts never ran together";

TEST(ViewsAgree, AnInvalidAggregateIsMarkedInEveryView) {
  const RunRecord run = HostsThatNeverRanTogether();
  const PhaseOutcome& phase = run.phases[0];

  const std::string table = FormatPhaseTable(phase, Summarize(phase), 0, 1, 1);
  EXPECT_THAT(table, HasSubstr(std::string("  validity: INVALID: ") + kNeverTogether)) << table;
  EXPECT_TRUE(std::regex_search(table, std::regex(R"(\n  all hosts INVALID +33\.3 \*)"))) << table;

  const nlohmann::json json = RunToJson(run);
  const nlohmann::json& validity = json["phases"][0]["validity"];
  EXPECT_EQ(validity["verdict"], "invalid") << validity.dump();
  EXPECT_EQ(validity["why"], kNeverTogether);
  EXPECT_EQ(validity["all_running"]["seconds"], 0.0);
  EXPECT_TRUE(json["phases"][0]["all_hosts"]["invalid"].get<bool>());
  EXPECT_EQ(json["phases"][0]["all_hosts"]["warnings"][0],
            std::string("INVALID: ") + kNeverTogether);

  const std::string csv = RunCsv(run);
  EXPECT_THAT(csv, HasSubstr(std::string(",all hosts,,invalid,note,INVALID: ") + kNeverTogether));
  EXPECT_THAT(csv, HasSubstr(",all hosts,,invalid,start_spread_limit,0.01,share,*"));

  StoredRun stored;
  stored.record = run;
  stored.listing.run_id = run.run_id;
  stored.listing.status = "completed";
  stored.listing.planned_phases = stored.listing.recorded_phases = 1;
  const std::string html = HtmlReport(stored);
  EXPECT_THAT(html, HasSubstr("<td>all hosts <span class=\"status-invalid\">INVALID</span></td>"));
  EXPECT_THAT(html, HasSubstr(std::string("<li class=\"error\">all hosts run 1: validity: "
                                          "INVALID: ") +
                              kNeverTogether));
}

TEST(ViewsAgree, AValidAggregateSaysSoWithItsWindow) {
  const RunRecord run =
      MakeRun("r20261201-230000-cafe", {"a", "b"},
              {Phase(WritePlan(), {SucceededHost("a", 100), SucceededHost("b", 50)})});
  const PhaseOutcome& phase = run.phases[0];
  const std::string table = FormatPhaseTable(phase, Summarize(phase), 0, 1, 1);
  EXPECT_THAT(table, HasSubstr("  validity: valid: start spread 0 ns +-100 us is 0.01% of the "
                               "shortest host's 1.00 s (limit 1%)\n"
                               "  all 2 hosts ran together for 1.00 s: 150 MiB/s, 150 ops/s in "
                               "that window\n"))
      << table;
  EXPECT_THAT(table, Not(HasSubstr("INVALID")));
  const nlohmann::json json = RunToJson(run);
  EXPECT_EQ(json["phases"][0]["validity"]["verdict"], "valid");
  EXPECT_DOUBLE_EQ(json["phases"][0]["validity"]["all_running"]["bytes_per_second"].get<double>(),
                   150 * kMiB);
}

}  // namespace
}  // namespace stormark::controller
