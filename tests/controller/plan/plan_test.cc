#include "controller/plan/plan.h"

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::controller {
namespace {

using stormark::v1::StreamSpec;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;

// The error of parsing `yaml` as "plan.yaml"; fails the test if the plan parses.
std::string ParseError(const std::string& yaml) {
  auto plan = ParsePlan(yaml, "plan.yaml");
  EXPECT_FALSE(plan.ok()) << "parsed:\n" << yaml;
  if (plan.ok()) return "";
  EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(plan.status().message());
}

TEST(ParsePlan, ReadsAgentsAndTwoPhases) {
  auto plan = ParsePlan(R"(agents: [ "db1:7420", "db2:7420" ]
phases:
  - name: seq-write
    workload: stream
    rw: write
    size: 1G
    bs: 1M
    fdatasync: true
  - name: seq-read
    workload: stream
    rw: read
    size: 64M
    bs: 4k
    direct: yes
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->hosts.size(), 2u);
  EXPECT_EQ(plan->hosts[0].name, "db1:7420");
  EXPECT_EQ(plan->hosts[1].address, "db2:7420");
  ASSERT_EQ(plan->phases.size(), 2u);

  const PhasePlan& write = plan->phases[0];
  EXPECT_EQ(write.name, "seq-write");
  EXPECT_EQ(write.target, "");
  ASSERT_TRUE(write.spec.has_stream());
  EXPECT_EQ(write.spec.stream().direction(), StreamSpec::WRITE);
  EXPECT_EQ(write.spec.stream().size_bytes(), kGiB);
  EXPECT_EQ(write.spec.stream().block_size(), kMiB);
  EXPECT_TRUE(write.spec.stream().fdatasync());
  EXPECT_FALSE(write.spec.stream().direct());

  const PhasePlan& read = plan->phases[1];
  EXPECT_EQ(read.name, "seq-read");
  EXPECT_EQ(read.spec.stream().direction(), StreamSpec::READ);
  EXPECT_EQ(read.spec.stream().size_bytes(), 64 * kMiB);
  EXPECT_EQ(read.spec.stream().block_size(), 4096u);
  EXPECT_TRUE(read.spec.stream().direct());
  EXPECT_FALSE(read.spec.stream().fdatasync());
}

TEST(ParsePlan, HeartbeatAndDeadlinesAreRead) {
  auto plan = ParsePlan(R"(heartbeat: {interval: 500ms, timeout: 3s}
deadline: 10m
phases:
  - {name: w, workload: stream, rw: write, size: 1M, deadline: 30s}
  - {name: r, workload: stream, rw: read, size: 1M}
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->heartbeat_interval_nanos, 500'000'000);
  EXPECT_EQ(plan->heartbeat_timeout_nanos, 3'000'000'000);
  EXPECT_EQ(plan->phases[0].deadline_nanos, 30'000'000'000);   // Its own.
  EXPECT_EQ(plan->phases[1].deadline_nanos, 600'000'000'000);  // The plan's.
}

TEST(ParsePlan, PrepareDeadlinesAreReadForThePlanAndEachPhase) {
  auto plan = ParsePlan(R"(prepare_deadline: 20m
phases:
  - {name: w, workload: stream, rw: write, size: 1M, prepare_deadline: 45s}
  - {name: r, workload: stream, rw: read, size: 1M}
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->phases[0].prepare_deadline_nanos, 45'000'000'000);    // Its own.
  EXPECT_EQ(plan->phases[1].prepare_deadline_nanos, 1200'000'000'000);  // The plan's.
  EXPECT_EQ(plan->phases[1].deadline_nanos, 0);  // The run's deadline is another key.
  EXPECT_THAT(ParseError("prepare_deadline: soon\nphases: [{workload: stream, rw: write}]\n"),
              AllOf(HasSubstr("plan.yaml:1:"), HasSubstr("prepare_deadline")));
}

TEST(ParsePlan, StartSpreadLimitsAreReadForThePlanAndEachPhase) {
  auto plan = ParsePlan(R"(start_spread_limit: 5%
phases:
  - {name: w, workload: stream, rw: write, size: 1M, start_spread_limit: 0.5%}
  - {name: r, workload: stream, rw: read, size: 1M}
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->phases[0].start_spread_limit, 0.005);  // Its own.
  EXPECT_DOUBLE_EQ(plan->phases[1].start_spread_limit, 0.05);   // The plan's.
  auto plain = ParsePlan("phases: [{workload: stream, rw: write}]\n", "plan.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->phases[0].start_spread_limit, 0);  // The default, 1%.
  EXPECT_EQ(ParseError("start_spread_limit: 2\nphases: [{workload: stream, rw: write}]\n"),
            "plan.yaml:1: bad start_spread_limit '2': give a share of the phase, such as 1%");
  EXPECT_EQ(ParseError("phases:\n  - {workload: stream, rw: write, start_spread_limit: 0%}\n"),
            "plan.yaml:2: phase 'phase1': bad start_spread_limit '0%': give a share of the phase, "
            "such as 1%");
}

TEST(ParsePlan, BadHeartbeatsAndDeadlinesNameTheirLineAndField) {
  EXPECT_EQ(
      ParseError(
          "heartbeat: {interval: 2s, timeout: 3s}\nphases: [{workload: stream, rw: write}]\n"),
      "plan.yaml:1: heartbeat.timeout must be at least twice heartbeat.interval");
  EXPECT_THAT(ParseError("heartbeat: {every: 2s}\nphases: [{workload: stream, rw: write}]\n"),
              HasSubstr("plan.yaml:1: unknown field 'heartbeat.every'"));
  EXPECT_THAT(ParseError("phases:\n  - {workload: stream, deadline: 0s}\n"),
              AllOf(HasSubstr("plan.yaml:2:"), HasSubstr("bad deadline '0s'")));
}

TEST(ParsePlan, UnnamedPhasesAreNumbered) {
  auto plan = ParsePlan(
      "phases:\n  - {workload: stream, rw: write}\n"
      "  - {workload: stream, rw: read}\n",
      "p");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 2u);
  EXPECT_EQ(plan->phases[0].name, "phase1");
  EXPECT_EQ(plan->phases[1].name, "phase2");
}

TEST(ParsePlan, TopLevelTargetIsEveryPhasesDefault) {
  auto plan = ParsePlan(R"(target: fast
phases:
  - name: a
    workload: stream
    rw: write
  - name: b
    workload: stream
    rw: read
    target: slow
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 2u);
  EXPECT_EQ(plan->phases[0].target, "fast");
  EXPECT_EQ(plan->phases[1].target, "slow");
}

TEST(ParsePlan, CacheIsAPlanDefaultThatAPhaseOverrides) {
  auto plan = ParsePlan(R"(cache: drop
phases:
  - name: a
    workload: stream
    rw: read
  - name: b
    workload: command
    command: tar xf /srv/a.tar
    sync: true
    cache: keep
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->phases[0].spec.cache(), stormark::v1::CACHE_DROP);
  EXPECT_EQ(plan->phases[1].spec.cache(), stormark::v1::CACHE_KEEP);
  EXPECT_EQ(plan->phases[1].spec.command().shell(), "tar xf /srv/a.tar");
  EXPECT_TRUE(plan->phases[1].spec.command().sync());
}

TEST(ParsePlan, MemoryLimitIsAPlanDefaultThatAPhaseOverridesOrDrops) {
  auto plan = ParsePlan(R"(memory_limit: 512M
memory_limit_if_unavailable: run_unlimited
phases:
  - {name: a, workload: bonnie}
  - {name: b, workload: stream, rw: read, memory_limit: 1G, memory_limit_if_unavailable: fail}
  - {name: c, workload: stream, rw: read, memory_limit: none}
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->phases[0].spec.memory_limit_bytes(), 512 * kMiB);
  EXPECT_TRUE(plan->phases[0].spec.memory_limit_optional());
  EXPECT_THAT(plan->phases[0].Describe(),
              HasSubstr("memory limit 512 MiB (or none where it cannot be applied)"));
  EXPECT_EQ(plan->phases[1].spec.memory_limit_bytes(), kGiB);
  EXPECT_FALSE(plan->phases[1].spec.memory_limit_optional());
  EXPECT_EQ(plan->phases[2].spec.memory_limit_bytes(), 0u);
  EXPECT_THAT(plan->phases[2].Describe(), ::testing::Not(HasSubstr("memory limit")));
}

TEST(ParsePlan, AMemoryLimitCanBeSweptLikeTheSeedsMemBootOption) {
  auto plan = ParsePlan(R"(sweep: {memory_limit: [256M, 1G]}
phases: [{name: r, workload: bonnie}]
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::vector<SweepPoint> points = SweepPoints(*plan);
  ASSERT_EQ(points.size(), 2u);
  auto phases = PhasesAt(*plan, points[1], 0);
  ASSERT_TRUE(phases.ok()) << phases.status();
  EXPECT_EQ((*phases)[0].spec.memory_limit_bytes(), kGiB);
}

TEST(ParsePlan, BadMemoryLimitsNameTheirLine) {
  EXPECT_THAT(
      ParseError("memory_limit: 16M\nphases: [{workload: bonnie}]\n"),
      AllOf(StartsWith("plan.yaml:1: "), HasSubstr("bad memory_limit '16M': at least 32 MiB")));
  EXPECT_THAT(ParseError("phases:\n  - workload: bonnie\n    memory_limit: lots\n"),
              AllOf(StartsWith("plan.yaml:3: "), HasSubstr("memory_limit")));
  EXPECT_THAT(ParseError("memory_limit_if_unavailable: maybe\nphases: [{workload: bonnie}]\n"),
              HasSubstr("bad memory_limit_if_unavailable 'maybe': use fail"));
}

TEST(ParsePlan, BadCacheNamesItsLine) {
  std::string error = ParseError(R"(cache: flush
phases: [{workload: stream, rw: write}]
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:1: "));
  EXPECT_THAT(error, HasSubstr("bad cache 'flush'"));
  error = ParseError(R"(phases:
  - workload: stream
    rw: write
    cache: all
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:4: "));
}

TEST(ParsePlan, CommandPhaseNeedsACommand) {
  const std::string error = ParseError(R"(phases:
  - name: untar
    workload: command
    sync: true
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:2: "));
  EXPECT_THAT(error, HasSubstr("phase 'untar'"));
  EXPECT_THAT(error, HasSubstr("'command'"));
}

TEST(ParsePlan, HostsHaveNamesLabelsAndTargets) {
  auto plan = ParsePlan(R"(hosts:
  - {name: local, address: "db1:7420", target: nvme, labels: {transport: local}}
  - address: "db2:7420"
    labels: {transport: aoe, shelf: "3"}
phases: [{workload: stream, rw: write}]
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->hosts.size(), 2u);
  EXPECT_EQ(plan->hosts[0].name, "local");
  EXPECT_EQ(plan->hosts[0].target, "nvme");
  EXPECT_EQ(plan->hosts[0].labels,
            (std::vector<std::pair<std::string, std::string>>{{"transport", "local"}}));
  EXPECT_EQ(plan->hosts[1].name, "db2:7420");
  EXPECT_EQ(plan->hosts[1].labels.size(), 2u);

  EXPECT_THAT(ParseError("hosts: [{name: a}]\nphases: [{workload: stream, rw: write}]\n"),
              HasSubstr("needs 'address"));
  EXPECT_THAT(ParseError("hosts: [{address: a:1, name: x}, {address: b:1, name: x}]\n"
                         "phases: [{workload: stream, rw: write}]\n"),
              HasSubstr("host name 'x' is used twice"));
  EXPECT_THAT(
      ParseError("hosts: [{address: a:1, port: 2}]\nphases: [{workload: stream, rw: write}]\n"),
      HasSubstr("unknown host field 'port'"));
}

TEST(ParsePlan, SweepIsEveryCombinationWithRepeats) {
  auto plan = ParsePlan(R"(repeat: 3
sweep:
  read_ahead_kb: [128, 4096]
  bs: [64k, 1M]
  agcount: [4, 32]
setup: ["mkfs.xfs -f -d agcount={agcount} /dev/loop7", "echo ${HOME} {a,b}"]
teardown: umount /mnt/x
phases:
  - {name: w, workload: stream, rw: write, size: 4M}
  - {name: b, workload: bonnie, size: 4M}
)",
                        "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->repeat, 3);
  EXPECT_EQ(plan->teardown, std::vector<std::string>{"umount /mnt/x"});
  const std::vector<SweepPoint> points = SweepPoints(*plan);
  ASSERT_EQ(points.size(), 8u);
  EXPECT_EQ(DescribeSweepPoint(points[0]), "read_ahead_kb=128 bs=64k agcount=4");
  EXPECT_EQ(DescribeSweepPoint(points[1]), "read_ahead_kb=128 bs=64k agcount=32");
  EXPECT_EQ(DescribeSweepPoint(points[7]), "read_ahead_kb=4096 bs=1M agcount=32");

  auto phases = PhasesAt(*plan, points[7], 2);
  ASSERT_TRUE(phases.ok()) << phases.status();
  const PhasePlan& w = (*phases)[0];
  EXPECT_EQ(w.repetition, 2);
  EXPECT_EQ(w.spec.stream().block_size(), 1u << 20);
  EXPECT_EQ(w.spec.tuning().at("read_ahead_kb"), "4096");
  // bonnie has no bs: the value is for the stream phase only; the knob is for both.
  EXPECT_EQ((*phases)[1].spec.tuning().at("read_ahead_kb"), "4096");

  EXPECT_EQ(*ExpandHook(plan->setup[0], points[1]), "mkfs.xfs -f -d agcount=32 /dev/loop7");
  // Shell syntax that names no sweep axis is left alone.
  EXPECT_EQ(*ExpandHook(plan->setup[1], points[1]), "echo ${HOME} {a,b}");
}

TEST(ParsePlan, SweepErrorsNameTheLine) {
  EXPECT_THAT(ParseError("sweep: {colour: [red]}\nphases: [{workload: stream, rw: write}]\n"),
              AllOf(StartsWith("plan.yaml:1: "), HasSubstr("sweep 'colour' changes nothing")));
  EXPECT_THAT(
      ParseError("sweep: {bs: [4k, 3x]}\nphases: [{workload: stream, rw: write, size: 4M}]\n"),
      AllOf(StartsWith("plan.yaml:1: "), HasSubstr("bs=3x"), HasSubstr("bad bs '3x'")));
  EXPECT_THAT(ParseError("sweep: {bs: [4k]}\nsetup: [\"mkfs {agcount}\"]\n"
                         "phases: [{workload: stream, rw: write, size: 4M}]\n"),
              AllOf(StartsWith("plan.yaml:2: "), HasSubstr("{agcount}")));
  EXPECT_THAT(ParseError("repeat: 0\nphases: [{workload: stream, rw: write}]\n"),
              AllOf(StartsWith("plan.yaml:1: "), HasSubstr("bad repeat '0'")));
  EXPECT_THAT(ParseError("sweep: {bs: 4k}\nphases: [{workload: stream, rw: write}]\n"),
              HasSubstr("non-empty list"));
}

TEST(ParsePlan, KnobsAreAcceptedAsPhaseParameters) {
  auto plan = ParsePlan("phases: [{workload: stream, rw: read, scheduler: none}]\n", "plan.yaml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->phases[0].spec.tuning().at("scheduler"), "none");
  EXPECT_THAT(ParseError("phases: [{workload: stream, rw: read, threads: 4}]\n"),
              AllOf(HasSubstr("unknown stream parameter 'threads'"), HasSubstr("read_ahead_kb")));
}

TEST(ParsePlan, UnknownTopLevelFieldNamesItsLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: write
threads: 4
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:5: "));
  EXPECT_THAT(error, HasSubstr("unknown field 'threads'"));
}

TEST(ParsePlan, UnknownWorkloadNamesItsLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: random
    rw: write
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:3: "));
  EXPECT_THAT(error, HasSubstr("unknown workload 'random'"));
  EXPECT_THAT(error, HasSubstr("stream"));
}

TEST(ParsePlan, MissingRwNamesThePhaseLine) {
  const std::string error = ParseError(R"(phases:
  - name: first
    workload: stream
    rw: write
  - name: second
    workload: stream
    size: 1M
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:5: "));
  EXPECT_THAT(error, HasSubstr("phase 'second'"));
  EXPECT_THAT(error, HasSubstr("missing 'rw'"));
}

TEST(ParsePlan, BadSizeNamesTheValueAndItsLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: write
    size: 10X
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:5: "));
  EXPECT_THAT(error, HasSubstr("phase 'w'"));
  EXPECT_THAT(error, HasSubstr("'10X'"));
}

TEST(ParsePlan, SizeNotAMultipleOfBsNamesThePhaseLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: write
    size: 10M
    bs: 3k
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:2: "));
  EXPECT_THAT(error, HasSubstr("not a multiple of bs"));
}

TEST(ParsePlan, DuplicatePhaseNameNamesTheSecondPhaseLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: write
  - name: w
    workload: stream
    rw: read
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:5: "));
  EXPECT_THAT(error, HasSubstr("'w' is used twice"));
}

TEST(ParsePlan, BadYamlSyntaxIsAnErrorWithALine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: [write
)");
  EXPECT_THAT(error, ::testing::MatchesRegex("plan\\.yaml:[0-9]+: .+"));
}

TEST(ParsePlan, BadYamlSyntaxPointsAtTheBrokenLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    rw: write
   workload: stream
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:4: "));
}

TEST(ParsePlan, NonMapPhaseNamesItsLine) {
  const std::string error = ParseError(R"(phases:
  - name: w
    workload: stream
    rw: write
  - just-a-word
)");
  EXPECT_THAT(error, StartsWith("plan.yaml:5: "));
  EXPECT_THAT(error, HasSubstr("phase 2 must be a map"));
}

TEST(ParsePlan, EmptyPlanIsRefused) {
  auto plan = ParsePlan("", "plan.yaml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()), HasSubstr("phases"));
}

TEST(ParsePlan, EmptyPhaseListIsRefused) {
  EXPECT_THAT(ParseError("phases: []\n"), HasSubstr("non-empty list"));
}

TEST(DefaultPlan, WritesWithFdatasyncThenReadsOneGiBInMiBBlocks) {
  const Plan plan = DefaultPlan();
  EXPECT_TRUE(plan.hosts.empty());
  EXPECT_EQ(plan.repeat, 1);
  EXPECT_EQ(SweepPoints(plan).size(), 1u);
  ASSERT_EQ(plan.phases.size(), 2u);
  const StreamSpec& write = plan.phases[0].spec.stream();
  const StreamSpec& read = plan.phases[1].spec.stream();
  EXPECT_EQ(write.direction(), StreamSpec::WRITE);
  EXPECT_TRUE(write.fdatasync());
  EXPECT_EQ(read.direction(), StreamSpec::READ);
  EXPECT_FALSE(read.fdatasync());
  for (const StreamSpec* s : {&write, &read}) {
    EXPECT_EQ(s->size_bytes(), kGiB);
    EXPECT_EQ(s->block_size(), kMiB);
  }
  EXPECT_NE(plan.phases[0].name, plan.phases[1].name);
  for (const PhasePlan& phase : plan.phases) EXPECT_TRUE(ValidatePhase(phase).ok());
}

TEST(PhasePlan, DescribeNamesDirectionSizeBlockAndFlags) {
  PhasePlan phase;
  StreamSpec* s = phase.spec.mutable_stream();
  s->set_direction(StreamSpec::WRITE);
  s->set_size_bytes(kGiB);
  s->set_block_size(kMiB);
  s->set_fdatasync(true);
  EXPECT_EQ(phase.Describe(), "stream write 1 GiB, bs 1 MiB, fdatasync");

  s->set_direction(StreamSpec::READ);
  s->set_fdatasync(false);
  s->set_direct(true);
  s->set_size_bytes(512 * kMiB);
  s->set_block_size(4096);
  EXPECT_EQ(phase.Describe(), "stream read 512 MiB, bs 4 KiB, direct");
}

// A plan file and PostMark scripts beside it, in a fresh directory.
class PlanWithScriptTest : public agent::TempDirTest {
 protected:
  void SetUp() override {
    agent::TempDirTest::SetUp();
    dir_ = dir();
  }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ + "/" + name) << text;
  }
  // Parses `yaml` as if it were the file plan.yaml in the directory.
  common::StatusOr<Plan> Parse(const std::string& yaml) {
    return ParsePlan(yaml, dir_ + "/plan.yaml");
  }
  std::string dir_;
};

TEST_F(PlanWithScriptTest, ConfigIsRelativeToThePlanAndThePhaseOverridesIt) {
  Write("pm.cfg", "set number 2000\nset transactions 50000\nrun\n");
  auto plan = Parse(R"(phases:
  - name: pm
    transactions: 100
    workload: postmark
    config: pm.cfg
)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 1u);
  EXPECT_EQ(plan->phases[0].name, "pm");
  EXPECT_EQ(plan->phases[0].spec.postmark().number(), 2000u);
  EXPECT_EQ(plan->phases[0].spec.postmark().transactions(), 100u);  // Written before, still wins.
  EXPECT_EQ(plan->phases[0].spec.postmark().seed(), 42u);           // PostMark's default.
  EXPECT_TRUE(plan->notes.empty());
}

TEST_F(PlanWithScriptTest, EachRunOfTheScriptIsAPhase) {
  Write("pm.cfg", "set number 10\nrun\nset number 20\nrun\nshow\n");
  auto plan = Parse(
      "target: t\nphases:\n  - {name: pm, workload: postmark, config: pm.cfg}\n"
      "  - {name: w, workload: stream, rw: write}\n");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 3u);
  EXPECT_EQ(plan->phases[0].name, "pm-1");
  EXPECT_EQ(plan->phases[0].spec.postmark().number(), 10u);
  EXPECT_EQ(plan->phases[1].name, "pm-2");
  EXPECT_EQ(plan->phases[1].spec.postmark().number(), 20u);
  EXPECT_EQ(plan->phases[1].target, "t");
  EXPECT_EQ(plan->phases[2].name, "w");
  ASSERT_EQ(plan->notes.size(), 1u);
  EXPECT_THAT(plan->notes[0], HasSubstr("pm.cfg:5: 'show' ignored"));
}

TEST_F(PlanWithScriptTest, ScriptErrorsNameThePlanLineAndTheScriptLine) {
  Write("pm.cfg", "set number 10\nset nubmer 20\n");
  auto plan = Parse("phases:\n  - name: pm\n    workload: postmark\n    config: pm.cfg\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(std::string(plan.status().message()),
              StartsWith(dir_ + "/plan.yaml:4: phase 'pm': " + dir_ +
                         "/pm.cfg:2: 'set nubmer 20': unknown setting 'nubmer'"));
  plan = Parse("phases:\n  - {workload: stream, rw: write, config: pm.cfg}\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("'config' is not a stream parameter"));
  plan = Parse("phases:\n  - {workload: postmark, config: missing.cfg}\n");
  EXPECT_THAT(plan.status().message(),
              HasSubstr("cannot read PostMark script " + dir_ + "/missing.cfg"));
}

TEST_F(PlanWithScriptTest, AFioJobFileIsOnePhasePerRunGroupAndThePhaseKeysOverrideIt) {
  Write("job.fio",
        "[global]\nsize=1m\ngroup_reporting\n[r]\nrw=randread\niodepth=4\nioengine=io_uring\n"
        "[w]\nstonewall\nrw=randwrite\nfilename=other\n");
  auto plan = Parse(R"(target: t
phases:
  - {name: w0, workload: stream, rw: write}
  - name: kube
    fio: job.fio
    iodepth: 8
  - {fio: job.fio, section: r, cache: drop}
)");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases.size(), 4u);
  EXPECT_EQ(plan->phases[1].name, "kube.r");
  EXPECT_EQ(plan->phases[1].target, "t");                  // The plan's, the job naming none.
  EXPECT_EQ(plan->phases[1].spec.randio().iodepth(), 8u);  // The phase's key wins.
  EXPECT_EQ(plan->phases[1].spec.randio().size_bytes(), 1u << 20);
  EXPECT_EQ(plan->phases[2].name, "kube.w");
  EXPECT_EQ(plan->phases[2].target, "other");  // filename= names the job's own.
  EXPECT_EQ(plan->phases[2].spec.randio().rw(), stormark::v1::RandioSpec::RANDWRITE);
  EXPECT_EQ(plan->phases[3].name, "r");  // --section r alone.
  EXPECT_EQ(plan->phases[3].spec.cache(), stormark::v1::CACHE_DROP);
  EXPECT_THAT(plan->notes, Contains(HasSubstr("job.fio:3: group_reporting: ignored")));
}

TEST_F(PlanWithScriptTest, FioErrorsNameThePlanLineAndTheJobFileLine) {
  Write("bad.fio", "[j]\nzonemode=zbd\n");
  auto plan = Parse("phases:\n  - {fio: bad.fio}\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.status().message(), dir_ + "/plan.yaml:2: " + dir_ +
                                         "/bad.fio:2: zonemode=zbd: not supported: zoned block "
                                         "devices are not supported");
  plan = Parse("phases:\n  - {fio: bad.fio, workload: randio}\n");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(), HasSubstr("gives 'fio: FILE' or 'workload:', not both"));
}

TEST(PhasePlan, DescribeWithoutWorkloadSaysSo) {
  EXPECT_EQ(PhasePlan().Describe(), "unknown workload");
}

}  // namespace
}  // namespace stormark::controller
