#include "controller/report/report_json.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/histogram.h"
#include "common/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::controller {
namespace {

using nlohmann::json;
using stormark::v1::PhaseResult;
using stormark::v1::StreamSpec;
using ::testing::HasSubstr;

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kBase = 1'700'000'000 * kSecond;

HostOutcome SucceededHost(const std::string& host, int64_t offset) {
  HostOutcome h;
  h.host = host;
  h.target = "scratch";
  h.clock.offset_nanos = offset;
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_bytes(4 << 20);
  r.set_ops(4);
  r.set_start_unix_nanos(kBase + offset);
  r.set_end_unix_nanos(kBase + offset + 2 * kSecond);
  r.set_elapsed_nanos(2 * kSecond);
  common::LatencyHistogram latency;
  for (uint64_t v : {1'000, 20'000, 300'000, 4'000'000}) latency.Record(v);
  latency.ToProto(r.mutable_latency());
  for (int64_t i = 0; i < 2; ++i) {
    stormark::v1::IntervalSample* s = r.add_series();
    s->set_offset_nanos(i * kSecond);
    s->set_length_nanos(kSecond);
    s->set_bytes(2 << 20);
    s->set_ops(2);
  }
  h.result = r;
  return h;
}

// Two agents, one phase: "a" succeeded, "b" could not be reached.
RunRecord SampleRun() {
  RunRecord run;
  run.run_id = "run-1";
  run.started_unix_nanos = kBase - kSecond;
  run.finished_unix_nanos = kBase + 3 * kSecond;

  AgentRecord a;
  a.host = "a:7420";
  a.info.set_hostname("alpha");
  *a.info.mutable_protocol() = common::OurProtocol();
  stormark::v1::TargetInfo* t = a.info.add_targets();
  t->set_name("scratch");
  t->set_kind("dir");
  a.clock.offset_nanos = 1'500;
  AgentRecord b;
  b.host = "b:7420";
  b.error = "host b:7420: unreachable";
  run.agents = {a, b};

  PhaseOutcome phase;
  phase.plan.name = "seq-write";
  StreamSpec* s = phase.plan.spec.mutable_stream();
  s->set_direction(StreamSpec::WRITE);
  s->set_size_bytes(4 << 20);
  s->set_block_size(1 << 20);
  phase.phase_id = "run-1-p1";
  phase.start_at_unix_nanos = kBase;
  phase.start_skew_nanos = 0;
  HostOutcome unreachable;
  unreachable.host = "b:7420";
  unreachable.error = b.error;
  phase.hosts = {SucceededHost("a:7420", 1'500), unreachable};
  run.phases = {phase};
  return run;
}

TEST(RunToJson, HasTheSchemaAndRunFields) {
  const json j = RunToJson(SampleRun());
  EXPECT_EQ(j.at("schema"), "stormark.run/1");
  EXPECT_EQ(j.at("schema"), kJsonSchema);
  EXPECT_EQ(j.at("run_id"), "run-1");
  EXPECT_EQ(j.at("interrupted"), false);
  EXPECT_EQ(j.at("stormark_version"), std::string(common::kSoftwareVersion));
  EXPECT_EQ(j.at("started_at"), "2023-11-14T22:13:19.000Z");
}

TEST(RunToJson, EveryRecordNamesItsHost) {
  const json j = RunToJson(SampleRun());
  ASSERT_EQ(j.at("agents").size(), 2u);
  EXPECT_EQ(j["agents"][0].at("host"), "a:7420");
  EXPECT_EQ(j["agents"][0].at("protocol"), common::FormatVersion(common::OurProtocol()));
  EXPECT_EQ(j["agents"][1].at("error"), "host b:7420: unreachable");
  for (const json& target : j["agents"][0].at("targets")) EXPECT_EQ(target.at("host"), "a:7420");

  ASSERT_EQ(j.at("phases").size(), 1u);
  const json& results = j["phases"][0].at("results");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("host"), "a:7420");
  EXPECT_EQ(results[0].at("status"), "succeeded");
  EXPECT_EQ(results[1].at("host"), "b:7420");
  EXPECT_EQ(results[1].at("status"), "error");
  ASSERT_EQ(results[0].at("series").size(), 2u);
  for (const json& result : results) {
    ASSERT_TRUE(result.contains("host"));
    if (!result.contains("series")) continue;
    for (const json& sample : result["series"]) EXPECT_EQ(sample.at("host"), result["host"]);
  }
}

TEST(RunToJson, ResultsCarryFiguresAndPercentiles) {
  const json j = RunToJson(SampleRun());
  const json& phase = j["phases"][0];
  EXPECT_EQ(phase.at("name"), "seq-write");
  EXPECT_EQ(phase.at("workload").at("rw"), "write");
  EXPECT_EQ(phase.at("workload").at("size_bytes"), 4 << 20);
  EXPECT_EQ(phase.at("start_skew_nanos"), 0);

  const json& a = phase["results"][0];
  EXPECT_EQ(a.at("bytes"), 4 << 20);
  EXPECT_EQ(a.at("clock_offset_nanos"), 1'500);
  EXPECT_EQ(a.at("start_unix_nanos"), kBase + 1'500);
  const json& latency = a.at("latency");
  EXPECT_EQ(latency.at("unit"), "ns");
  EXPECT_EQ(latency.at("count"), 4);
  EXPECT_EQ(latency.at("min"), 1'000);
  EXPECT_EQ(latency.at("max"), 4'000'000);
  for (const char* p : {"p50", "p90", "p99", "p99_9", "p99_99"}) {
    SCOPED_TRACE(p);
    ASSERT_TRUE(latency.contains(p));
    EXPECT_GE(latency[p].get<uint64_t>(), 1'000u);
    EXPECT_LE(latency[p].get<uint64_t>(), 4'000'000u);
  }
  EXPECT_EQ(latency.at("buckets").at("index").size(), 4u);

  const json& all = phase.at("all_hosts");
  EXPECT_EQ(all.at("host"), "all hosts");
  EXPECT_EQ(all.at("hosts"), 1);
  EXPECT_EQ(all.at("latency").at("p99"), latency.at("p99"));
}

TEST(RunToJson, WorkloadParametersOf64BitsAreNumbersNotStrings) {
  RunRecord run = SampleRun();
  stormark::v1::PostmarkSpec* p = run.phases[0].plan.spec.mutable_postmark();
  p->set_min_size_bytes(500);
  p->set_max_size_bytes(uint64_t{10} << 30);
  const json workload = RunToJson(run).at("phases").at(0).at("workload");
  EXPECT_EQ(workload.at("type"), "postmark");
  ASSERT_TRUE(workload.at("min_size_bytes").is_number()) << workload.dump();
  EXPECT_EQ(workload.at("min_size_bytes"), 500);
  EXPECT_EQ(workload.at("max_size_bytes"), uint64_t{10} << 30);
  // Beyond 2^53 a JSON reader would round it: such a value stays a string.
  stormark::v1::RandioSpec* r = run.phases[0].plan.spec.mutable_randio();
  r->set_seed(uint64_t{1} << 60);
  r->set_size_bytes(uint64_t{1} << 30);
  const json randio = RunToJson(run).at("phases").at(0).at("workload");
  EXPECT_EQ(randio.at("seed"), std::to_string(uint64_t{1} << 60));
  EXPECT_EQ(randio.at("size_bytes"), uint64_t{1} << 30);
}

TEST(RunToJson, PhaseWithoutSuccessHasNullAllHosts) {
  RunRecord run = SampleRun();
  run.phases[0].hosts.erase(run.phases[0].hosts.begin());
  run.phases[0].start_skew_nanos.reset();
  const json j = RunToJson(run);
  EXPECT_TRUE(j["phases"][0].at("all_hosts").is_null());
  EXPECT_TRUE(j["phases"][0].at("start_skew_nanos").is_null());
}

// The text written one row at a time is the tree's dump(2), byte for byte.
std::string TreeText(const RunRecord& run) {
  return RunToJson(run).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

TEST(RunJsonText, IsTheWholeTreesDumpByteForByte) {
  EXPECT_EQ(RunJsonText(SampleRun()), TreeText(SampleRun()));
}

TEST(RunJsonText, IsTheTreesDumpWithoutPhasesOrHostsToo) {
  RunRecord none = SampleRun();
  none.phases.clear();
  EXPECT_EQ(RunJsonText(none), TreeText(none));
  RunRecord empty = SampleRun();
  empty.phases[0].hosts.clear();
  EXPECT_EQ(RunJsonText(empty), TreeText(empty));
  EXPECT_EQ(RunJsonText(RunRecord{}), TreeText(RunRecord{}));
}

TEST(RunJsonText, IsTheTreesDumpForManyPhasesAndHostileText) {
  RunRecord run = SampleRun();
  // Names that sort around the keys the writer places itself, quotes, newlines, control
  // characters and bytes that are not UTF-8.
  run.phases[0].plan.name = "phases\"\n\x01 results";
  run.phases[0].hosts[0].host = "\"results\": [],\n  \"phases\": x";
  run.phases[0].hosts[0].result->mutable_host_environment()->insert({"k\xff\xfe", "v\t\x02"});
  run.agents[0].labels = {{"phases", "results"}, {"zz\n", "\xc3\x28"}};
  for (int i = 0; i < 3; ++i) run.phases.push_back(run.phases[0]);
  run.phases[2].hosts.clear();
  run.phases[3].hosts.push_back(run.phases[3].hosts[0]);
  EXPECT_EQ(RunJsonText(run), TreeText(run));
}

class WriteJsonReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = "/var/tmp/stormark-json-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string dir_;
};

TEST_F(WriteJsonReportTest, WritesJsonThatParsesBack) {
  const std::string path = dir_ + "/run.json";
  ASSERT_TRUE(WriteJsonReport(SampleRun(), path).ok());
  std::ifstream in(path);
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const json parsed = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(parsed.is_discarded()) << text.str();
  EXPECT_EQ(parsed, RunToJson(SampleRun()));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(WriteJsonReportTest, AReportWrittenInPiecesIsTheTreesDump) {
  RunRecord run = SampleRun();
  for (int i = 0; i < 1500; ++i) run.phases[0].hosts.push_back(run.phases[0].hosts[0]);
  run.phases.push_back(run.phases[0]);
  const std::string path = dir_ + "/big.json";
  ASSERT_TRUE(WriteJsonReport(run, path).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string expected = TreeText(run);
  ASSERT_GT(expected.size(), size_t{2} << 20);  // Several pieces of 1 MiB.
  EXPECT_TRUE(text.str() == expected);
}

TEST_F(WriteJsonReportTest, ReplacesAnExistingReport) {
  const std::string path = dir_ + "/run.json";
  std::ofstream(path) << "old";
  ASSERT_TRUE(WriteJsonReport(SampleRun(), path).ok());
  std::ifstream in(path);
  EXPECT_EQ(json::parse(in, nullptr, false).at("schema"), kJsonSchema);
}

TEST_F(WriteJsonReportTest, UnwritablePathFailsWithAStatus) {
  const std::string path = dir_ + "/no-such-dir/run.json";
  common::Status status = absl::OkStatus();
  EXPECT_NO_THROW(status = WriteJsonReport(SampleRun(), path));
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("no-such-dir"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST_F(WriteJsonReportTest, PathThatIsADirectoryFailsWithAStatus) {
  // The temporary file can be written, but it cannot be renamed over a directory.
  std::filesystem::create_directory(dir_ + "/taken");
  common::Status status = absl::OkStatus();
  EXPECT_NO_THROW(status = WriteJsonReport(SampleRun(), dir_ + "/taken"));
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(std::filesystem::is_directory(dir_ + "/taken"));
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/taken.tmp"));
}

}  // namespace
}  // namespace stormark::controller
