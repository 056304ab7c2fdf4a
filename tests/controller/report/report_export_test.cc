#include "controller/report/report_export.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

RunRecord TwoHosts() {
  return MakeRun("r1", {"db,1", "db2"},
                 {Phase(WritePlan(), {SucceededHost("db,1", 100), UnreachableHost("db2")}, 0,
                        {{"chunk", "64k"}})});
}

TEST(RunCsv, ARowPerHostPhaseAndMetricWithQuoting) {
  const std::string csv = RunCsv(TwoHosts());
  EXPECT_TRUE(
      csv.starts_with("run_id,started,phase_index,phase,repetition,sweep_point,host,"
                      "target,status,metric,value,unit,marks\r\n"));
  EXPECT_THAT(csv, HasSubstr(",0,seq-write,0,chunk=64k,\"db,1\",scratch,succeeded,bytes,"
                             "104857600,B,\r\n"));
  EXPECT_THAT(csv, HasSubstr(",succeeded,throughput,104857600,B/s,\r\n"));
  EXPECT_THAT(csv, HasSubstr(",succeeded,latency_p50,1000000,ns,\r\n"));
  EXPECT_THAT(csv, HasSubstr(",db2,,error,error,host db2: unreachable: connection refused,,\r\n"));
  // 11 metrics for the host that succeeded, one error row for the other, and the header.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 13);
}

TEST(RunPrometheus, GaugesAndASummaryWithEscapedLabels) {
  const std::string text = RunPrometheus(TwoHosts(), "night \"ly\"\\");
  EXPECT_THAT(text, HasSubstr("# TYPE stormark_throughput_bytes_per_second gauge\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE stormark_latency_seconds summary\n"));
  const std::string labels =
      "label=\"night \\\"ly\\\"\\\\\",phase=\"seq-write\",sweep=\"chunk=64k\","
      "repetition=\"1\",host=\"db,1\",target=\"scratch\"";
  EXPECT_THAT(text, HasSubstr("stormark_bytes{" + labels + "} 104857600\n"));
  EXPECT_THAT(text, HasSubstr("stormark_latency_seconds{" + labels + ",quantile=\"0.99\"} "));
  EXPECT_THAT(text, HasSubstr("stormark_latency_seconds_count{" + labels + "} 100\n"));
  EXPECT_THAT(text, HasSubstr("stormark_phase_succeeded{label=\"night \\\"ly\\\"\\\\\","
                              "phase=\"seq-write\",sweep=\"chunk=64k\",repetition=\"1\","
                              "host=\"db2\",target=\"\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("stormark_run_start_time_seconds{run_id=\"r1\","));
  EXPECT_THAT(text, Not(HasSubstr("stormark_bytes{label=\"night \\\"ly\\\"\\\\\","
                                  "phase=\"seq-write\",sweep=\"chunk=64k\",repetition=\"1\","
                                  "host=\"db2\"")));
}

TEST(RunBonnieCsv, OnlyBonniePhases) { EXPECT_EQ(RunBonnieCsv(TwoHosts()), ""); }

}  // namespace
}  // namespace stormark::controller
