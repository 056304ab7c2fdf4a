#include "controller/workloads/workload_kinds.h"

#include <string>

#include "common/spec_check.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

TEST(WorkloadKinds, EachKindSelectsItsOwnOneofField) {
  for (const WorkloadKind* kind_ptr : WorkloadKinds()) {
    const WorkloadKind& kind = *kind_ptr;
    SCOPED_TRACE(std::string(kind.name));
    stormark::v1::PhaseSpec spec;
    kind.init(&spec);
    EXPECT_EQ(common::WorkloadName(spec), kind.name);
    EXPECT_EQ(KindOf(spec), &kind);
    EXPECT_FALSE(kind.describe(spec).empty());
  }
}

TEST(WorkloadKinds, UnknownParametersAreRefusedNamingTheKnownOnes) {
  for (const WorkloadKind* kind_ptr : WorkloadKinds()) {
    const WorkloadKind& kind = *kind_ptr;
    SCOPED_TRACE(std::string(kind.name));
    stormark::v1::PhaseSpec spec;
    kind.init(&spec);
    const common::Status status = kind.options().Set("no_such_parameter", "1", &spec);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(std::string(status.message()).find(kind.options().Names()), std::string::npos)
        << status.message();
  }
}

TEST(WorkloadKinds, FindsByNameAndListsAll) {
  EXPECT_NE(FindWorkloadKind("stream"), nullptr);
  EXPECT_NE(FindWorkloadKind("bonnie"), nullptr);
  EXPECT_EQ(FindWorkloadKind("fio"), nullptr);
  EXPECT_EQ(KindOf(stormark::v1::PhaseSpec()), nullptr);
  EXPECT_EQ(WorkloadNames().substr(0, 15), "bonnie, command");
}

}  // namespace
}  // namespace stormark::controller
