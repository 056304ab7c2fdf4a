#include "controller/report/report_table.h"

#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;

using test_runs::kBase;
using test_runs::WritePlan;

HostOutcome Succeeded(const std::string& host, uint64_t mib_per_second,
                      std::vector<std::string> warnings = {}) {
  HostOutcome h = test_runs::SucceededHost(host, mib_per_second);
  for (auto& w : warnings) h.result->add_warnings(w);
  return h;
}

HostOutcome Unreachable(const std::string& host) { return test_runs::UnreachableHost(host); }

std::string Table(const std::vector<HostOutcome>& hosts, size_t index = 0, size_t count = 1) {
  PhaseOutcome outcome;
  outcome.plan = WritePlan();
  outcome.start_at_unix_nanos = kBase;
  outcome.hosts = hosts;
  if (hosts.size() > 1) outcome.start_skew_nanos = 0;
  return FormatPhaseTable(outcome, Summarize(outcome), index, count);
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The line of the table whose first cell is `host`, or "".
std::string RowOf(const std::string& text, const std::string& host) {
  for (const std::string& line : Lines(text)) {
    if (line.starts_with("  " + host + " ")) return line;
  }
  return "";
}

TEST(FormatPhaseTable, HeadingNamesThePhaseAndItsPlaceInTheRun) {
  const std::string text = Table({Succeeded("db1", 100)}, 1, 3);
  EXPECT_THAT(text, StartsWith("Phase 2/3  seq-write: stream write 1 GiB, bs 1 MiB\n"));
}

TEST(FormatPhaseTable, OneRowPerHost) {
  const std::string text = Table({Succeeded("db1", 100), Succeeded("db2", 200)});
  const std::string db1 = RowOf(text, "db1");
  const std::string db2 = RowOf(text, "db2");
  EXPECT_THAT(db1, HasSubstr("100.0"));
  EXPECT_THAT(db1, HasSubstr("scratch"));
  EXPECT_THAT(db1, HasSubstr("ok"));
  EXPECT_THAT(db2, HasSubstr("200.0"));
  EXPECT_THAT(Lines(text), Contains(HasSubstr("MiB/s")));
}

TEST(FormatPhaseTable, AllHostsRowOnlyWithSeveralHosts) {
  const std::string one = Table({Succeeded("db1", 100)});
  EXPECT_THAT(one, Not(HasSubstr("all hosts")));

  const std::string two = Table({Succeeded("db1", 100), Succeeded("db2", 200)});
  const std::string all = RowOf(two, "all hosts");
  EXPECT_THAT(all, HasSubstr("300.0"));
  EXPECT_THAT(all, HasSubstr("2 hosts"));
}

TEST(FormatPhaseTable, WarningMarksTheFigureAndIsListedAsANote) {
  const std::string text =
      Table({Succeeded("db1", 100, {"size is under 2x RAM"}), Succeeded("db2", 200)});
  EXPECT_THAT(RowOf(text, "db1"), HasSubstr("100.0 *"));
  EXPECT_THAT(RowOf(text, "db2"), Not(HasSubstr(" *")));
  // The aggregate holds db1's qualified figure: it carries the mark too.
  EXPECT_THAT(RowOf(text, "all hosts"), HasSubstr("300.0 *"));
  EXPECT_THAT(Lines(text), Contains("  * db1: size is under 2x RAM"));
}

TEST(FormatPhaseTable, AnAbortedRowShowsItsFiguresSoFarMarkedPartial) {
  HostOutcome aborted = Succeeded("db1", 100);
  aborted.result->set_state(stormark::v1::PhaseResult::ABORTED);
  aborted.error = "aborted: --fail-fast after db2 failed";
  const std::string text = Table({aborted, Unreachable("db2:7420")});
  const std::string row = RowOf(text, "db1");
  EXPECT_THAT(row, HasSubstr("100.0 ~"));
  EXPECT_THAT(row, HasSubstr("1.00 s"));
  EXPECT_THAT(row, HasSubstr("ABORTED"));
  EXPECT_THAT(Lines(text),
              Contains("  ~ db1: partial: its figures cover the 1.00 s until it was aborted"));
  // Without figures, the row has none to show.
  HostOutcome empty = aborted;
  empty.result->set_ops(0);
  empty.result->set_bytes(0);
  EXPECT_THAT(RowOf(Table({empty}), "db1"), HasSubstr("-"));
  EXPECT_THAT(Table({empty}), Not(HasSubstr("partial")));
}

TEST(FormatPhaseTable, TheAggregateIsMarkedWhenEveryHostIs) {
  const std::string text = Table(
      {Succeeded("db1", 100, {"too fast to time"}), Succeeded("db2", 200, {"too fast to time"})});
  EXPECT_THAT(RowOf(text, "all hosts"), HasSubstr("300.0 *"));
  const std::string clean = Table({Succeeded("db1", 100), Succeeded("db2", 200)});
  EXPECT_THAT(RowOf(clean, "all hosts"), Not(HasSubstr(" *")));
}

TEST(FormatPhaseTable, ErrorIsANoteWithoutRepeatingTheHost) {
  const std::string text = Table({Succeeded("db1", 100), Unreachable("db2:7420")});
  EXPECT_THAT(RowOf(text, "db2:7420"), HasSubstr("ERROR"));
  EXPECT_THAT(Lines(text), Contains("  x db2:7420: unreachable: connection refused"));
  EXPECT_THAT(text, Not(HasSubstr("host db2:7420:")));
}

TEST(FormatPhaseTable, NoNotesWithoutWarningsOrErrors) {
  const std::string text = Table({Succeeded("db1", 100), Succeeded("db2", 200)});
  for (const std::string& line : Lines(text)) {
    EXPECT_THAT(line, Not(StartsWith("  * ")));
    EXPECT_THAT(line, Not(StartsWith("  x ")));
  }
  EXPECT_THAT(Lines(text), Not(IsEmpty()));
}

HostOutcome WithTarget(const std::string& host, const std::string& transport,
                       const std::string& read_ahead) {
  HostOutcome h = Succeeded(host, 100);
  h.transport = transport;
  auto& env = *h.result->mutable_target_environment();
  env["transport"] = transport;
  env["read_ahead_kb"] = read_ahead;
  env["scheduler"] = "none";
  return h;
}

TEST(FormatPhaseTable, ViaColumnLabelsEachRowWithItsTransport) {
  const std::string text =
      Table({WithTarget("db1", "local", "128"), WithTarget("db2", "AoE", "128")});
  EXPECT_THAT(text, HasSubstr("  host       via    target"));
  EXPECT_THAT(RowOf(text, "db1"), HasSubstr("db1        local  scratch"));
  EXPECT_THAT(RowOf(text, "db2"), HasSubstr("db2 !      AoE    scratch"));
  // The agents detected different transports: that is a difference like any other.
  EXPECT_THAT(text, HasSubstr("  ! differs: transport (db1: local, db2: AoE)\n"));
}

TEST(FormatPhaseTable, NoViaColumnWhenNoTransportIsKnown) {
  EXPECT_THAT(Table({Succeeded("db1", 100)}), Not(HasSubstr(" via ")));
}

TEST(FormatPhaseTable, SettingsThatDifferAreMarkedAndNoted) {
  const std::string text =
      Table({WithTarget("db1", "local", "128"), WithTarget("db2", "local", "4096")});
  EXPECT_THAT(RowOf(text, "db2 !"), Not(IsEmpty()));
  EXPECT_THAT(RowOf(text, "db1 "), Not(HasSubstr("!")));
  EXPECT_THAT(text, HasSubstr("\n  ! differs: read_ahead_kb (db1: 128, db2: 4096)\n"));
}

TEST(FormatPhaseTable, TransportLabelThatDisagreesIsANote) {
  HostOutcome aoe = WithTarget("db1", "local", "128");
  aoe.transport = "AoE";
  aoe.transport_note = "labelled 'AoE' in the plan, but the agent detected local";
  const std::string text = Table({aoe});
  EXPECT_THAT(text,
              HasSubstr("  ! db1: labelled 'AoE' in the plan, but the agent detected local\n"));
}

}  // namespace
}  // namespace stormark::controller
