#include "controller/fio/fio_json.h"

#include <string>

#include "common/histogram.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/test_runs.h"

namespace stormark::controller::fio {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using namespace stormark::controller::test_runs;  // NOLINT: the test run builders.

// A randio-like result: `reads` and `writes` 4 KiB operations of 100 us each, apart.
HostOutcome MixedHost(const std::string& host, uint64_t reads, uint64_t writes) {
  HostOutcome h = SucceededHost(host, 1);
  auto add = [&](const char* name, uint64_t ops, uint64_t ns) {
    stormark::v1::Measurement* m = h.result->add_measurements();
    m->set_name(name);
    m->set_ops(ops);
    m->set_bytes(ops * 4096);
    m->set_elapsed_nanos(kSecond);
    common::LatencyHistogram latency;
    for (uint64_t i = 0; i < ops; ++i) latency.Record(ns);
    latency.ToProto(m->mutable_latency());
  };
  add("read", reads, 100'000);
  add("write", writes, 200'000);
  add("flush", 1, 1'000'000);  // Not one of fio's directions.
  return h;
}

RunRecord ARun() {
  PhasePlan command;
  command.name = "untar";
  command.spec.mutable_command()->set_shell("tar xf x.tar");
  PhasePlan mixed = WritePlan("mixed");
  mixed.spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDRW);
  return MakeRun("r1", {"db1", "db2"},
                 {Phase(WritePlan(), {SucceededHost("db1", 100), SucceededHost("db2", 200)}),
                  Phase(mixed, {MixedHost("db1", 300, 100), MixedHost("db2", 500, 200)}),
                  Phase(command, {SucceededHost("db1", 1), SucceededHost("db2", 1)})});
}

// A trim phase (a job file's rw=trim) fills fio's trim block.
TEST(FioJson, ATrimPhaseFillsTheTrimBlock) {
  PhasePlan trim;
  trim.name = "trim";
  trim.spec.mutable_trim()->set_bs(1 << 20);
  const json out =
      FioJson(MakeRun("r1", {"db1"}, {Phase(trim, {SucceededHost("db1", 24)})}), false);
  ASSERT_EQ(out["jobs"].size(), 1u);
  EXPECT_EQ(out["jobs"][0]["trim"]["io_bytes"], 24u << 20);
  EXPECT_EQ(out["jobs"][0]["trim"]["total_ios"], 24u);
  EXPECT_EQ(out["jobs"][0]["read"]["io_bytes"], 0u);
  EXPECT_EQ(out["stormark"]["omitted"], json::array());
}

// A run group of unlike jobs: one fio job per job and host, named as in the job file; the
// All clients entry adds up the phase's totals.
TEST(FioJson, EachJobOfARunGroupIsAFioJob) {
  HostOutcome h = MixedHost("db1", 300, 100);
  auto add_job = [&](const char* name, const char* direction, uint64_t ops) {
    auto* job = h.result->add_jobs();
    job->set_name(name);
    auto* m = job->add_measurements();
    m->set_name(direction);
    m->set_ops(ops);
    m->set_bytes(ops * 4096);
    common::LatencyHistogram latency;
    for (uint64_t i = 0; i < ops; ++i) latency.Record(50'000);
    latency.ToProto(m->mutable_latency());
  };
  add_job("read_iops", "read", 300);
  add_job("write_iops", "write", 100);
  PhasePlan group = WritePlan("read_iops..write_iops");
  group.spec.mutable_randio()->set_rw(stormark::v1::RandioSpec::RANDREAD);
  const json out = FioJson(MakeRun("r1", {"db1"}, {Phase(group, {h})}), false);
  ASSERT_EQ(out["jobs"].size(), 2u);
  EXPECT_EQ(out["jobs"][0]["jobname"], "read_iops");
  EXPECT_EQ(out["jobs"][0]["read"]["total_ios"], 300u);
  EXPECT_EQ(out["jobs"][0]["write"]["total_ios"], 0u);
  EXPECT_EQ(out["jobs"][1]["jobname"], "write_iops");
  EXPECT_EQ(out["jobs"][1]["write"]["total_ios"], 100u);
  EXPECT_EQ(out["jobs"][1]["hostname"], "db1");
  ASSERT_EQ(out["client_stats"].size(), 3u);
  EXPECT_EQ(out["client_stats"][2]["hostname"], "All clients");
  EXPECT_EQ(out["client_stats"][2]["read"]["total_ios"], 300u);
  EXPECT_EQ(out["client_stats"][2]["write"]["total_ios"], 100u);
}

TEST(FioJson, AJobPerPhaseAndHostWithItsHostname) {
  const json out = FioJson(ARun(), false);
  const json& jobs = out["jobs"];
  ASSERT_EQ(jobs.size(), 4u);  // Two phases of two hosts; the command is left out.
  EXPECT_EQ(jobs[0]["jobname"], "seq-write");
  EXPECT_EQ(jobs[0]["hostname"], "db1");
  EXPECT_EQ(jobs[1]["hostname"], "db2");
  // stream write: the write block holds the phase; read and trim are empty.
  EXPECT_EQ(jobs[0]["write"]["io_bytes"], 100u << 20);
  EXPECT_EQ(jobs[0]["write"]["total_ios"], 100u);
  EXPECT_DOUBLE_EQ(jobs[0]["write"]["iops"].get<double>(), 100.0);
  EXPECT_EQ(jobs[0]["write"]["bw"], 100u * 1024);  // KiB/s, as fio's.
  EXPECT_EQ(jobs[0]["write"]["runtime"], 1000u);   // ms
  EXPECT_EQ(jobs[0]["read"]["io_bytes"], 0u);
  EXPECT_EQ(jobs[0]["write"]["clat_ns"]["N"], 100u);
  EXPECT_EQ(jobs[0]["write"]["clat_ns"]["percentile"].size(), 17u);  // fio's default list.
  EXPECT_TRUE(jobs[0]["write"]["clat_ns"]["percentile"].contains("99.990000"));
  EXPECT_EQ(jobs[0]["write"]["slat_ns"]["N"], 0u);
  EXPECT_FALSE(jobs[0]["write"]["clat_ns"].contains("bins"));  // Only in json+.
  // randio: reads and writes apart, from its measurements; its flushes are not a direction.
  EXPECT_EQ(jobs[2]["jobname"], "mixed");
  EXPECT_EQ(jobs[2]["read"]["total_ios"], 300u);
  EXPECT_EQ(jobs[2]["write"]["total_ios"], 100u);
  EXPECT_EQ(jobs[2]["read"]["lat_ns"]["min"], 100'000u);
  EXPECT_EQ(out["stormark"]["omitted"], json::array({"untar (command: no read/write split)"}));
}

TEST(FioJson, AllClientsIsComputedFromTheMergedHistograms) {
  const json out = FioJson(ARun(), false);
  const json& clients = out["client_stats"];
  ASSERT_EQ(clients.size(), 6u);  // Each phase's hosts, then its All clients entry.
  EXPECT_EQ(clients[2]["hostname"], "All clients");
  EXPECT_EQ(clients[2]["write"]["io_bytes"], 300u << 20);
  EXPECT_EQ(clients[2]["write"]["clat_ns"]["N"], 300u);
  const json& mixed = clients[5];
  EXPECT_EQ(mixed["jobname"], "mixed");
  EXPECT_EQ(mixed["read"]["total_ios"], 800u);
  EXPECT_EQ(mixed["write"]["total_ios"], 300u);
  // 800 reads at 100 us: every percentile of the merged reads is that, within the histogram's
  // 1%, and none is the writes' 200 us.
  const double p99 = mixed["read"]["clat_ns"]["percentile"]["99.000000"].get<double>();
  EXPECT_NEAR(p99, 100'000, 1'000);
  EXPECT_EQ(mixed["read"]["lat_ns"]["max"], 100'000u);
}

TEST(FioJson, JsonPlusCarriesBinsThatAddUpToTheCount) {
  const json out = FioJson(ARun(), true);
  for (const json& job : out["jobs"]) {
    for (const char* d : {"read", "write"}) {
      const json& clat = job[d]["clat_ns"];
      if (clat["N"] == 0) {
        EXPECT_FALSE(clat.contains("bins"));  // fio_jsonplus_clat2csv needs one bin or none.
        continue;
      }
      uint64_t total = 0;
      for (const auto& [at, n] : clat["bins"].items()) {
        EXPECT_LE(std::stoull(at), clat["max"].get<uint64_t>());
        total += n.get<uint64_t>();
      }
      EXPECT_EQ(total, clat["N"].get<uint64_t>());
    }
  }
  EXPECT_EQ(out["fio version"].get<std::string>().rfind("stormark-", 0), 0u);
}

}  // namespace
}  // namespace stormark::controller::fio
