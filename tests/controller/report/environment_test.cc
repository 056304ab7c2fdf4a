#include "controller/report/environment.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A host whose phase snapshot has these target settings and a 20% dirty ratio.
HostOutcome WithSettings(const std::string& host, const Environment& target) {
  HostOutcome h = test_runs::SucceededHost(host, 100);
  (*h.result->mutable_host_environment())["vm.dirty_ratio"] = "20";
  for (const auto& [key, value] : target) (*h.result->mutable_target_environment())[key] = value;
  return h;
}

TEST(DifferingKeys, ListsTheSettingsThatDifferInReportOrder) {
  const std::vector<Environment> rows = {
      {{"read_ahead_kb", "128"},
       {"scheduler", "mq-deadline"},
       {"kernel", "6.1"},
       {"device", "sda"}},
      {{"read_ahead_kb", "4096"}, {"scheduler", "none"}, {"kernel", "6.1"}, {"device", "sdb"}}};
  EXPECT_THAT(DifferingKeys(rows), ElementsAre("scheduler", "read_ahead_kb"));
  EXPECT_THAT(DifferingKeys(rows, {"read_ahead_kb"}), ElementsAre("scheduler"));
}

TEST(DifferingKeys, ANetworkTargetsServerIsIdentityNotASetting) {
  // Two iSCSI LUNs on different portals: not a difference worth a `!`.
  const std::vector<Environment> iscsi = {
      {{"transport", "iSCSI"}, {"transport_detail", "initiator to 10.0.0.1:3260 LUN 0"}},
      {{"transport", "iSCSI"}, {"transport_detail", "initiator to 10.0.0.2:3260 LUN 1"}}};
  EXPECT_THAT(DifferingKeys(iscsi), IsEmpty());
  // Local against AoE: the transport differs, and says so once.
  const std::vector<Environment> mixed = {
      {{"transport", "local"}, {"transport_detail", "virtio"}},
      {{"transport", "AoE"}, {"transport_detail", "initiator on veth0, shelf 1 slot 0"}}};
  EXPECT_THAT(DifferingKeys(mixed), ElementsAre("transport"));
  // Two local disks on different buses do differ, also next to a network row.
  const std::vector<Environment> local = {{{"transport", "local"}, {"transport_detail", "virtio"}},
                                          {{"transport", "local"}, {"transport_detail", "NVMe"}}};
  EXPECT_THAT(DifferingKeys(local), ElementsAre("transport_detail"));
  std::vector<Environment> with_nbd = local;
  with_nbd.push_back({{"transport", "NBD"}, {"transport_detail", "client to 10.0.0.1:10809"}});
  EXPECT_THAT(DifferingKeys(with_nbd), ElementsAre("transport", "transport_detail"));
}

TEST(DifferingKeys, AKeyOnlySomeRowsReportIsNotADifference) {
  const std::vector<Environment> rows = {{{"model", "X"}}, {}, {{"model", "X"}}};
  EXPECT_THAT(DifferingKeys(rows), IsEmpty());
  EXPECT_THAT(DifferingKeys({{{"model", "X"}}, {{"model", "Y"}}}), ElementsAre("model"));
}

TEST(FormatDiffers, NamesEachRowsValue) {
  const std::vector<Environment> rows = {{{"scheduler", "mq-deadline"}, {"read_ahead_kb", "128"}},
                                         {{"scheduler", "none"}, {"read_ahead_kb", "4096"}}};
  EXPECT_EQ(FormatDiffers({"a", "b"}, rows, DifferingKeys(rows)),
            "differs: scheduler (a: mq-deadline, b: none); read_ahead_kb (a: "
            "128, b: 4096)");
  EXPECT_EQ(FormatDiffers({"a", "b"}, rows, {}), "");
}

TEST(FormatDiffers, ManyRowsAreGroupedByValue) {
  std::vector<Environment> rows(5, Environment{{"read_ahead_kb", "128"}});
  rows[3]["read_ahead_kb"] = "4096";
  EXPECT_EQ(FormatDiffers({"a", "b", "c", "d", "e"}, rows, {"read_ahead_kb"}),
            "differs: read_ahead_kb (128: a, b, c, e; 4096: d)");
}

TEST(RowDiffers, MarksTheRowsThatDifferFromTheFirst) {
  const std::vector<Environment> rows = {
      {{"scheduler", "none"}}, {{"scheduler", "none"}}, {{"scheduler", "kyber"}}};
  const auto keys = DifferingKeys(rows);
  EXPECT_FALSE(RowDiffers(0, rows, keys));
  EXPECT_FALSE(RowDiffers(1, rows, keys));
  EXPECT_TRUE(RowDiffers(2, rows, keys));
}

TEST(RowEnvironment, PrefersThePhaseSnapshotOverTheRunStart) {
  RunRecord run = test_runs::MakeRun("r1", {"a"}, {});
  (*run.agents[0].info.mutable_environment())["vm.dirty_ratio"] = "10";
  (*run.agents[0].info.mutable_targets(0)->mutable_environment())["read_ahead_kb"] = "128";
  HostOutcome old_agent = test_runs::SucceededHost("a", 100);
  Environment env = RowEnvironment(old_agent, &run.agents[0]);
  EXPECT_EQ(env["vm.dirty_ratio"], "10");
  EXPECT_EQ(env["read_ahead_kb"], "128");
  env = RowEnvironment(WithSettings("a", {{"read_ahead_kb", "4096"}}), &run.agents[0]);
  EXPECT_EQ(env["vm.dirty_ratio"], "20");
  EXPECT_EQ(env["read_ahead_kb"], "4096");
}

TEST(LabelTransports, ThePlansLabelWinsAndADisagreementIsANote) {
  RunRecord run = test_runs::MakeRun("r1", {"local", "aoe", "plain", "loop"}, {});
  run.agents[1].labels = {{"transport", "aoe"}};
  run.agents[2].labels = {{"transport", "local"}};
  run.agents[3].labels = {{"transport", "loop"}};
  PhaseOutcome phase = test_runs::Phase(
      test_runs::WritePlan(),
      {WithSettings("local", {{"transport", "local"}, {"transport_detail", "virtio"}}),
       WithSettings("aoe", {{"transport", "local"}, {"transport_detail", "virtio"}}),
       WithSettings("plain", {{"transport", "local"}}),
       WithSettings("loop", {{"transport", "local"}, {"transport_detail", "loop"}})});
  LabelTransports(run.agents, &phase);
  EXPECT_EQ(phase.hosts[0].transport, "local");
  EXPECT_EQ(phase.hosts[0].transport_note, "");
  EXPECT_EQ(phase.hosts[1].transport, "AoE");
  EXPECT_EQ(phase.hosts[1].transport_note,
            "labelled 'AoE' in the plan, but the agent detected local "
            "(virtio); the label is shown");
  EXPECT_EQ(phase.hosts[2].transport, "local");
  EXPECT_EQ(phase.hosts[2].transport_note, "");
  EXPECT_EQ(phase.hosts[3].transport, "loop");   // The user's word is shown.
  EXPECT_EQ(phase.hosts[3].transport_note, "");  // It names the detected detail: no conflict.
}

TEST(CanonicalTransportLabel, SpellsKnownLabelsAsReportsDo) {
  EXPECT_EQ(CanonicalTransportLabel("aoe"), "AoE");
  EXPECT_EQ(CanonicalTransportLabel("ISCSI"), "iSCSI");
  EXPECT_EQ(CanonicalTransportLabel("nbd"), "NBD");
  EXPECT_EQ(CanonicalTransportLabel("fc"), "FC");
  EXPECT_EQ(CanonicalTransportLabel("san-7"), "san-7");
}

TEST(FormatEnvironmentNotes, DescribesEachMachineAndTargetAndWhatDiffers) {
  RunRecord run = test_runs::MakeRun("r1", {"db1", "db2"}, {});
  for (size_t i = 0; i < 2; ++i) {
    auto& env = *run.agents[i].info.mutable_environment();
    env["kernel"] = "Linux 6.1.0";
    env["cpu_count"] = "4";
    env["cpu_model"] = "Xeon";
    env["ram_bytes"] = "8589934592";
    env["cpu_governor"] = i == 0 ? "performance" : "powersave";
    env["vm.dirty_ratio"] = "20";
    auto& target = *run.agents[i].info.mutable_targets(0)->mutable_environment();
    target["transport"] = "local";
    target["transport_detail"] = "sata";
    target["device"] = i == 0 ? "sda" : "sdb";
    target["filesystem"] = "xfs";
    target["mount_options"] = "rw,noatime";
    target["scheduler"] = "mq-deadline";
    target["read_ahead_kb"] = i == 0 ? "128" : "4096";
  }
  const std::string notes = FormatEnvironmentNotes(run.agents);
  EXPECT_THAT(notes, HasSubstr("Environment\n  db1: Linux 6.1.0, 4 x Xeon, 8 GiB RAM, "
                               "cpu_governor performance\n    vm: dirty_ratio 20\n"));
  EXPECT_THAT(notes, HasSubstr("    scratch: local (sata) sda; xfs (rw,noatime); scheduler "
                               "mq-deadline, read_ahead_kb 128\n"));
  EXPECT_THAT(notes, HasSubstr("  ! hosts differs: cpu_governor (db1: "
                               "performance, db2: powersave)\n"));
  EXPECT_THAT(notes,
              HasSubstr("  ! target scratch differs: read_ahead_kb (db1: 128, db2: 4096)\n"));
  EXPECT_THAT(notes, Not(HasSubstr("device (")));
}

TEST(FormatEnvironmentNotes, NothingWithoutFacts) {
  EXPECT_EQ(FormatEnvironmentNotes(test_runs::MakeRun("r1", {"a"}, {}).agents), "");
}

}  // namespace
}  // namespace stormark::controller
