#include "agent/workloads/workload_registry.h"

#include <algorithm>

#include "agent/config/policy.h"
#include "common/spec_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseSpec;

// A spec holding the workload of `module`, through the oneof field its name says.
PhaseSpec SpecOf(const WorkloadModule& module) {
  PhaseSpec spec;
  const google::protobuf::FieldDescriptor* field =
      PhaseSpec::GetDescriptor()->FindFieldByName(std::string(module.name));
  if (field != nullptr) spec.GetReflection()->MutableMessage(&spec, field);
  return spec;
}

TEST(WorkloadRegistry, EveryModuleIsNamedAfterItsSpecField) {
  ASSERT_FALSE(WorkloadModules().empty());
  for (const WorkloadModule* module : WorkloadModules()) {
    const PhaseSpec spec = SpecOf(*module);
    EXPECT_EQ(spec.workload_case(), module->spec_case) << module->name;
    EXPECT_EQ(common::WorkloadName(spec), module->name);
    EXPECT_EQ(FindWorkload(spec), module) << module->name;
    EXPECT_EQ(FindWorkload(module->name), module) << module->name;
    EXPECT_NE(module->check, nullptr) << module->name;
    EXPECT_NE(module->make, nullptr) << module->name;
    EXPECT_NE(module->memory, nullptr) << module->name << " states no memory estimate";
  }
}

TEST(WorkloadRegistry, EveryWorkloadOfTheProtocolHasAModule) {
  const google::protobuf::OneofDescriptor* oneof =
      PhaseSpec::GetDescriptor()->FindOneofByName("workload");
  ASSERT_NE(oneof, nullptr);
  for (int i = 0; i < oneof->field_count(); ++i) {
    EXPECT_NE(FindWorkload(oneof->field(i)->name()), nullptr) << oneof->field(i)->name();
  }
  EXPECT_EQ(static_cast<size_t>(oneof->field_count()), WorkloadModules().size());
}

TEST(WorkloadRegistry, NamesAreSortedAndUnique) {
  const std::vector<std::string> names = KnownWorkloads();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_EQ(FindWorkload(PhaseSpec()), nullptr);
  EXPECT_EQ(FindWorkload("fio"), nullptr);
}

TEST(WorkloadRegistry, PolicyAsksTheModuleForItsMemory) {
  TargetConfig dir{.name = "scratch", .kind = "dir", .path = "/tmp"};
  for (const WorkloadModule* module : WorkloadModules()) {
    const PhaseSpec spec = SpecOf(*module);
    EXPECT_EQ(PhaseMemory(spec, dir).workload, module->name);
  }
  EXPECT_TRUE(PhaseMemory(PhaseSpec(), dir).parts.empty());
}

TEST(WorkloadRegistry, OnlyTheCommandWorkloadRunsAProgram) {
  for (const WorkloadModule* module : WorkloadModules()) {
    const PhaseSpec spec = SpecOf(*module);
    if (module->spec_case == PhaseSpec::kCommand) {
      EXPECT_EQ(ProgramOf(spec), &spec.command());
    } else {
      EXPECT_EQ(ProgramOf(spec), nullptr) << module->name;
    }
  }
  EXPECT_EQ(ProgramOf(PhaseSpec()), nullptr);
}

TEST(WorkloadRegistry, WritesUnlessTheModuleSaysOtherwise) {
  TargetConfig dir{.name = "scratch", .kind = "dir", .path = "/tmp"};
  PhaseSpec read;
  read.mutable_stream()->set_direction(stormark::v1::StreamSpec::READ);
  EXPECT_FALSE(WorkloadWrites(read, dir));
  PhaseSpec randread;
  randread.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  EXPECT_FALSE(WorkloadWrites(randread, dir));
  PhaseSpec trim;
  trim.mutable_trim();
  EXPECT_TRUE(WorkloadWrites(trim, dir));
  EXPECT_TRUE(WorkloadWrites(PhaseSpec(), dir)) << "an unknown workload is assumed to write";
}

TEST(WorkloadRegistry, TheTooFastHintFitsTheWorkload) {
  PhaseSpec timed;
  timed.mutable_randio()->set_runtime_nanos(1'000'000'000);
  EXPECT_EQ(TooFastHint(timed), "use a longer runtime");
  PhaseSpec sized;
  sized.mutable_randio();
  EXPECT_EQ(TooFastHint(sized), "use a larger size");
  PhaseSpec command;
  command.mutable_command()->set_timeout_ms(60'000);
  EXPECT_THAT(TooFastHint(command), ::testing::HasSubstr("longer job"));
  PhaseSpec postmark;
  postmark.mutable_postmark();
  EXPECT_EQ(TooFastHint(postmark), "use more transactions");
  PhaseSpec stream;
  stream.mutable_stream();
  EXPECT_EQ(TooFastHint(stream), "use a larger size");
}

}  // namespace
}  // namespace stormark::agent
