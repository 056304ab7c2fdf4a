#include "controller/report/sweep_table.h"

#include "controller/workloads/workload_kinds.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

TEST(CellMetric, AStreamCellIsItsMiBPerSecond) {
  const HostOutcome host = test_runs::SucceededHost("db1", 100);
  EXPECT_DOUBLE_EQ(*CellMetric(test_runs::WritePlan(), host), 100.0);
}

TEST(CellMetric, ABonnieCellIsItsWallTimeNotABlendedRate) {
  // Bytes over a bonnie run's whole time would mix block writes, seeks and file creates.
  PhasePlan plan;
  plan.name = "bonnie";
  FindWorkloadKind("bonnie")->init(&plan.spec);
  const HostOutcome host = test_runs::SucceededHost("db1", 100);
  EXPECT_DOUBLE_EQ(*CellMetric(plan, host), 1.0);  // SucceededHost ran for one second.
}

TEST(CellMetric, AHostThatFailedHasNoCell) {
  EXPECT_FALSE(CellMetric(test_runs::WritePlan(), test_runs::UnreachableHost("db1")).has_value());
}

}  // namespace
}  // namespace stormark::controller
