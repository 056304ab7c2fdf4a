#include "controller/fio/fio_hosts.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "controller/fio/fio_import.h"
#include "controller/workloads/workload_kinds.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller::fio {
namespace {

using ::testing::HasSubstr;

class FioHostsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/stormark-fio-hosts-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& Write(const std::string& text) {
    path_ = dir_ + "/job.fio";
    std::ofstream(path_) << text;
    return path_;
  }
  // A plan as `stormark run` builds it from the file: read as its first host, then --set.
  Plan PlanFor(const std::vector<HostPlan>& hosts) {
    Plan plan;
    plan.hosts = hosts;
    auto imported = ImportJobFile(path_, {}, {hosts.front().name, hosts.front().labels, {}});
    EXPECT_TRUE(imported.ok()) << imported.status();
    KeepOrigins(path_, {}, &*imported);
    plan.phases = imported->phases;
    return plan;
  }

  std::string dir_, path_;
};

TEST(HostVariables, NameTheHostAndEveryLabel) {
  const auto vars = HostVariables({"db1", {{"rack-row", "b2"}, {"disk", "nvme"}}, {}});
  EXPECT_EQ(vars.at("STORMARK_HOST"), "db1");
  EXPECT_EQ(vars.at("STORMARK_LABEL_RACK_ROW"), "b2");
  EXPECT_EQ(vars.at("STORMARK_LABEL_DISK"), "nvme");
  // Before the agents are reached, the target's facts are unknown: values every check takes.
  EXPECT_EQ(vars.at("STORMARK_TARGET_SIZE"), "1073741824");
  EXPECT_EQ(vars.at("STORMARK_TARGET_BLOCK_SIZE"), "4096");
  EXPECT_EQ(vars.at("STORMARK_TARGET_MODEL"), "unknown");
}

// The target's facts, as its agent describes it, are the file's STORMARK_TARGET_* variables:
// each host sizes the job to its own device.
TEST_F(FioHostsTest, EachHostReadsItsTargetsFacts) {
  Write(
      "[j]\nrw=randread\nsize=(${STORMARK_TARGET_SIZE_MIB}/2)m\n"
      "description=${STORMARK_TARGET_MODEL} ${STORMARK_TARGET_KIND}\n");
  Plan plan = PlanFor(
      {{"a", "a:7420", {}, "", ""}, {"b", "b:7420", {}, "", ""}, {"gone", "c:7420", {}, "", ""}});
  stormark::v1::TargetInfo small, large;
  small.set_name("disk");
  small.set_kind("block");
  small.set_size_bytes(uint64_t{64} << 20);
  (*small.mutable_environment())["model"] = "QEMU HARDDISK";
  large = small;
  large.set_size_bytes(uint64_t{2} << 30);
  const std::vector<const stormark::v1::TargetInfo*> targets{&small, &large, nullptr};
  const common::Status resolved =
      ResolveHostSpecs(&plan, [&](size_t i, const std::string&) { return targets[i]; });
  ASSERT_TRUE(resolved.ok()) << resolved;
  const PhasePlan& phase = plan.phases[0];
  ASSERT_EQ(phase.host_specs.size(), 2u);  // the unreached host is left out
  EXPECT_EQ(phase.host_specs.at(0).randio().size_bytes(), uint64_t{32} << 20);
  EXPECT_EQ(phase.host_specs.at(1).randio().size_bytes(), uint64_t{1} << 30);
  const auto facts = TargetFacts(small);
  EXPECT_EQ(facts.at("NAME"), "disk");
  EXPECT_EQ(facts.at("MODEL"), "QEMU HARDDISK");
  EXPECT_EQ(facts.at("SIZE"), std::to_string(uint64_t{64} << 20));
  EXPECT_EQ(facts.at("SIZE_MIB"), "64");
}

// axboe/fio#1688: one file, each host its own target and depth, by its labels.
TEST_F(FioHostsTest, EachHostRunsWhatTheFileSaysForIt) {
  Write(
      "[global]\nfilename=${STORMARK_LABEL_DISK}\nioengine=io_uring\n"
      "[j]\nrw=randread\niodepth=${STORMARK_LABEL_DEPTH}\n");
  const std::vector<HostPlan> hosts = {
      {"a", "a:7420", {{"disk", "nvme"}, {"depth", "32"}}, "", ""},
      {"b", "b:7420", {{"disk", "sata"}, {"depth", "4"}}, "", ""},
      {"c", "c:7420", {{"disk", "nvme"}, {"depth", "32"}}, "", ""},
  };
  Plan plan = PlanFor(hosts);
  ASSERT_EQ(plan.phases.size(), 1u);
  ASSERT_NE(plan.phases[0].fio_origin, nullptr);
  // --set on the plan reaches every host.
  ASSERT_TRUE(SetPhaseParameter("bs", "8k", &plan.phases[0].spec).ok());
  ASSERT_TRUE(ResolveHostSpecs(&plan).ok());
  const PhasePlan& phase = plan.phases[0];
  EXPECT_EQ(phase.target, "nvme");
  EXPECT_EQ(phase.spec.randio().iodepth(), 32u);
  // Only b differs from the first host's reading.
  ASSERT_EQ(phase.host_specs.size(), 1u);
  const auto& b = phase.host_specs.at(1);
  EXPECT_EQ(b.randio().iodepth(), 4u);
  EXPECT_EQ(b.randio().bs_min(), 8192u);
  EXPECT_EQ(b.randio().engine(), stormark::v1::RandioSpec::IO_URING);
  ASSERT_EQ(phase.host_targets.size(), 1u);
  EXPECT_EQ(phase.host_targets.at(1), "sata");
}

TEST_F(FioHostsTest, AFileThatDoesNotDependOnTheHostIsReadOnce) {
  Write("[j]\nrw=randread\niodepth=8\n");
  Plan plan = PlanFor({{"a", "a:7420", {}, "", ""}, {"b", "b:7420", {}, "", ""}});
  EXPECT_EQ(plan.phases[0].fio_origin, nullptr);
  ASSERT_TRUE(ResolveHostSpecs(&plan).ok());
  EXPECT_TRUE(plan.phases[0].host_specs.empty());
}

TEST_F(FioHostsTest, HostsMustGetTheSamePhases) {
  Write("[one]\nrw=read\n[two]\nstonewall\nrw=write\nname=${STORMARK_HOST}\n");
  Plan plan = PlanFor({{"a", "a:7420", {}, "", ""}, {"b", "b:7420", {}, "", ""}});
  const common::Status s = ResolveHostSpecs(&plan);
  EXPECT_THAT(s.message(), HasSubstr("job.fio on host 'b': the job file gives this host other "
                                     "phases than the first host"));
}

TEST_F(FioHostsTest, AHostWithoutTheLabelIsNamed) {
  Write("[j]\nrw=randread\niodepth=${STORMARK_LABEL_DEPTH}\n");
  Plan plan = PlanFor({{"a", "a:7420", {{"depth", "8"}}, "", ""}, {"b", "b:7420", {}, "", ""}});
  const common::Status s = ResolveHostSpecs(&plan);
  EXPECT_THAT(s.message(), HasSubstr("on host 'b'"));
  EXPECT_THAT(s.message(), HasSubstr("${STORMARK_LABEL_DEPTH} is not set"));
}

// A label is a value, never job-file text: a hostile one cannot add an option (a path, say),
// and the host's reading fails on it, naming the host.
TEST_F(FioHostsTest, ALabelCannotInjectAnOption) {
  Write("[j]\nrw=randread\niodepth=${STORMARK_LABEL_DEPTH}\n");
  Plan plan = PlanFor({{"a", "a:7420", {{"depth", "8"}}, "", ""},
                       {"b", "b:7420", {{"depth", "4\nfilename=/dev/sda"}}, "", ""}});
  const common::Status s = ResolveHostSpecs(&plan);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("on host 'b'"));
  EXPECT_THAT(s.message(), HasSubstr("iodepth"));
  EXPECT_TRUE(plan.phases[0].host_targets.empty());
  // A name given as a target is checked as one: a path is refused.
  Write("[j]\nrw=randread\nfilename=${STORMARK_LABEL_DISK}\n");
  Plan paths = PlanFor({{"a", "a:7420", {{"disk", "nvme"}}, "", ""},
                        {"b", "b:7420", {{"disk", "/dev/sda"}}, "", ""}});
  EXPECT_THAT(ResolveHostSpecs(&paths).message(),
              HasSubstr("stormark reaches storage only through the agent's targets"));
}

}  // namespace
}  // namespace stormark::controller::fio
