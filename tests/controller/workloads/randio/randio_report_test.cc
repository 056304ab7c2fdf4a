#include "controller/workloads/randio/randio_report.h"

#include <string>
#include <vector>

#include "common/histogram.h"
#include "controller/fleet/fleet.h"
#include "controller/report/summary.h"
#include "common/units.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using stormark::v1::PhaseResult;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kSecond = 1'000'000'000;

// One operation type: `ops` operations of `bs` bytes, latencies 1..ops microseconds.
void AddOp(PhaseResult* r, const std::string& name, uint64_t ops, uint64_t bs) {
  common::LatencyHistogram h;
  for (uint64_t i = 1; i <= ops; ++i) h.Record(i * 1000);
  auto* m = r->add_measurements();
  m->set_name(name);
  m->set_ops(ops);
  m->set_bytes(ops * bs);
  h.ToProto(m->mutable_latency());
  r->set_ops(r->ops() + ops);
  r->set_bytes(r->bytes() + ops * bs);
}

HostOutcome Host(const std::string& name, int64_t start) {
  HostOutcome h;
  h.host = name;
  h.target = "disk";
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_start_unix_nanos(start);
  r.set_elapsed_nanos(10 * kSecond);
  r.set_cpu_user_nanos(kSecond);
  h.result = r;
  return h;
}

std::string Table(const std::vector<HostOutcome>& hosts) {
  PhaseOutcome outcome;
  outcome.hosts = hosts;
  return RandioTable(outcome, Summarize(outcome));
}

TEST(RandioTable, OneRowPerOperationWithFioPercentiles) {
  HostOutcome a = Host("a", 0);
  AddOp(&*a.result, "read", 10000, 4096);
  AddOp(&*a.result, "write", 1000, 4096);
  const std::string table = Table({a});
  for (const char* column : {"IOPS", "MiB/s", "p50", "p90", "p99", "p99.9", "p99.99", "max"}) {
    EXPECT_THAT(table, HasSubstr(column));
  }
  // 10000 reads in 10 s: 1000 IOPS, 3.9 MiB/s; p50 of 1..10000 us is 5 ms, p90 9 ms, p99
  // 9.9 ms (each within the histogram's 0.4%).
  EXPECT_THAT(table, HasSubstr("read   1000    3.9  5.00 ms  9.01 ms  9.93 ms  9.99 ms  9.99 ms  "
                               "10.0 ms  10.0  ok"));
  EXPECT_THAT(table, HasSubstr("write   100    0.4   501 us   899 us   989 us   997 us  1.00 ms"));
  EXPECT_THAT(table, Not(HasSubstr("stonewall")));  // One host, one job: nothing to add.
}

TEST(RandioTable, AllHostsRowsMergeHistogramsAndShowTheStonewall) {
  HostOutcome a = Host("a", 0), b = Host("b", kSecond / 2);
  AddOp(&*a.result, "read", 10000, 4096);
  AddOp(&*b.result, "read", 20000, 4096);
  b.result->set_first_done_nanos(8 * kSecond);
  b.result->set_first_done_ops(16000);
  b.result->set_last_done_nanos(10 * kSecond);
  const std::string table = Table({a, b});
  EXPECT_THAT(table, HasSubstr("all hosts"));
  // 30000 reads over the 10.5 s from a's start to b's end.
  EXPECT_THAT(table, HasSubstr("all hosts          read  2857   11.2"));
  EXPECT_THAT(table, HasSubstr("stonewall"));
  // b's first job finished 8 s in, having done 16000 reads: 2000 IOPS.
  EXPECT_THAT(table, HasSubstr("b              8.00 s       2000    10.00 s"));
  // Across hosts: a finished first (10 s after the start), b last (10.5 s).
  EXPECT_THAT(table, HasSubstr("all hosts      8.50 s"));
  EXPECT_THAT(table, HasSubstr("10.50 s"));
}

TEST(RandioTable, ASequentialPhasesLastRowIsTheMeanOfTheHostsNotTheirSum) {
  // One host after the other (vm.kernel_aoe's kernel and user-space initiators): 1000 and
  // 3000 IOPS. The row is labelled a mean, and it showed the sum, 4000.
  PhaseOutcome outcome;
  outcome.mode = RunMode::kSequential;
  outcome.hosts = {Host("a", 0), Host("b", 20 * kSecond)};
  AddOp(&*outcome.hosts[0].result, "read", 10000, 4096);
  AddOp(&*outcome.hosts[1].result, "read", 30000, 4096);
  const std::string table = RandioTable(outcome, Summarize(outcome));
  EXPECT_THAT(table, HasSubstr("mean of hosts          read  2000    7.8"));
  EXPECT_THAT(table, Not(HasSubstr("4000")));
}

TEST(RandioTable, VerifyOutcomeIsListed) {
  HostOutcome a = Host("a", 0);
  AddOp(&*a.result, "write", 100, 4096);
  auto* v = a.result->mutable_verify();
  v->set_unit_bytes(4096);
  v->set_units_checked(256);
  v->set_mismatches(1);
  auto* m = v->add_first_mismatches();
  m->set_offset(8192);
  m->set_kind("stale");
  m->set_field("generation");
  m->set_expected("generation 7");
  m->set_actual("generation 1");
  m->set_during("read-back");
  const std::string table = Table({a});
  EXPECT_THAT(table, HasSubstr("verify a: 256 units of 4 KiB checked, 1 mismatch\n"));
  EXPECT_THAT(table, HasSubstr("offset 8192 (read-back): stale, generation: expected generation "
                               "7, found generation 1"));
}

TEST(RandioTable, FailedVerificationStillListsItsMismatches) {
  HostOutcome a = Host("a", 0);
  a.result->set_state(PhaseResult::FAILED);
  a.result->set_error("verify: 1 of 256 units differ");
  auto* v = a.result->mutable_verify();
  v->set_unit_bytes(4096);
  v->set_units_checked(256);
  v->set_mismatches(1);
  auto* m = v->add_first_mismatches();
  m->set_offset(4096);
  m->set_kind("corrupt");
  const std::string table = Table({a});
  EXPECT_THAT(table, HasSubstr("FAILED"));
  EXPECT_THAT(table, HasSubstr("offset 4096 (): corrupt"));
}

// A run group: each verifying job's lines, named as the plan names it, and not the sum.
TEST(RandioTable, ARunGroupListsEachVerifyingJobOnItsOwn) {
  HostOutcome a = Host("a", 0);
  a.result->set_state(PhaseResult::FAILED);
  a.result->set_error("job 'writer': verify: 1 of 256 units differ");
  a.result->mutable_verify()->set_units_checked(768);
  a.result->mutable_verify()->set_mismatches(1);
  auto add_job = [&](const std::string& name, uint64_t checked, uint64_t mismatches) {
    auto* job = a.result->add_jobs();
    job->set_name(name);
    if (checked == 0) return;
    job->mutable_verify()->set_unit_bytes(4096);
    job->mutable_verify()->set_units_checked(checked);
    job->mutable_verify()->set_mismatches(mismatches);
  };
  add_job("check", 512, 0);
  add_job("reads", 0, 0);
  add_job("writer", 256, 1);
  PhaseOutcome outcome;
  outcome.plan.spec.mutable_randio()->set_name("check");
  outcome.plan.spec.mutable_randio()->add_group()->set_name("reads");
  outcome.plan.spec.mutable_randio()->add_group()->set_name("writer");
  outcome.hosts = {a};
  const std::string table = RandioTable(outcome, Summarize(outcome));
  EXPECT_THAT(table, HasSubstr("verify a job 'check': 512 units of 4 KiB checked, 0 mismatches\n"));
  EXPECT_THAT(table, HasSubstr("verify a job 'writer': 256 units of 4 KiB checked, 1 mismatch\n"));
  EXPECT_THAT(table, Not(HasSubstr("job 'reads'")));
  EXPECT_THAT(table, Not(HasSubstr("768 units")));
}

TEST(FormatIops, ThreeSignificantDigits) {
  EXPECT_EQ(common::FormatIops(41234), "41.2k");
  EXPECT_EQ(common::FormatIops(33000), "33.0k");
  EXPECT_EQ(common::FormatIops(412345), "412k");
  EXPECT_EQ(common::FormatIops(1234567), "1.23M");
  EXPECT_EQ(common::FormatIops(812.4), "812");
  EXPECT_EQ(common::FormatIops(12.34), "12.3");
}

}  // namespace
}  // namespace stormark::controller
