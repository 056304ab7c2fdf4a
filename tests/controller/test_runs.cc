#include "tests/controller/test_runs.h"

#include "common/histogram.h"
#include "common/strings.h"

namespace stormark::controller::test_runs {

using stormark::v1::PhaseResult;
using stormark::v1::StreamSpec;

PhasePlan WritePlan(const std::string& name) {
  PhasePlan plan;
  plan.name = name;
  plan.target = "scratch";
  StreamSpec* s = plan.spec.mutable_stream();
  s->set_direction(StreamSpec::WRITE);
  s->set_size_bytes(uint64_t{1} << 30);
  s->set_block_size(1 << 20);
  return plan;
}

HostOutcome SucceededHost(const std::string& host, uint64_t mib_per_second,
                          uint64_t latency_nanos) {
  HostOutcome h;
  h.host = host;
  h.target = "scratch";
  h.clock.offset_nanos = 1234;
  h.clock.uncertainty_nanos = 50'000;
  PhaseResult r;
  r.set_state(PhaseResult::SUCCEEDED);
  r.set_bytes(mib_per_second << 20);
  r.set_ops(mib_per_second);
  r.set_start_unix_nanos(kBase);
  r.set_end_unix_nanos(kBase + kSecond);
  r.set_elapsed_nanos(kSecond);
  r.set_cpu_user_nanos(kSecond / 4);
  common::LatencyHistogram latency;
  for (uint64_t i = 0; i < mib_per_second; ++i) latency.Record(latency_nanos);
  latency.ToProto(r.mutable_latency());
  auto* sample = r.add_series();
  sample->set_length_nanos(kSecond);
  sample->set_bytes(r.bytes());
  sample->set_ops(r.ops());
  h.result = r;
  return h;
}

HostOutcome UnreachableHost(const std::string& host) {
  HostOutcome h;
  h.host = host;
  h.error = "host " + host + ": unreachable: connection refused";
  return h;
}

PhaseOutcome Phase(PhasePlan plan, std::vector<HostOutcome> hosts, int repetition,
                   const SweepPoint& sweep) {
  PhaseOutcome outcome;
  plan.repetition = repetition;
  plan.sweep_point = sweep;
  outcome.plan = std::move(plan);
  outcome.phase_id = common::StrCat("p", repetition);
  outcome.start_at_unix_nanos = kBase;
  outcome.hosts = std::move(hosts);
  if (outcome.hosts.size() > 1) outcome.start_skew_nanos = 20'000;
  outcome.start_skew_uncertainty_nanos = 60'000;
  return outcome;
}

RunRecord MakeRun(const std::string& run_id, const std::vector<std::string>& hosts,
                  std::vector<PhaseOutcome> phases) {
  RunRecord run;
  run.run_id = run_id;
  run.started_unix_nanos = kBase;
  run.finished_unix_nanos = kBase + 10 * kSecond;
  for (const std::string& host : hosts) {
    AgentRecord agent;
    agent.host = host;
    agent.info.set_hostname("node-" + host);
    agent.info.set_kernel("Linux 6.1.0-18-amd64");
    agent.info.set_cpu_count(4);
    agent.info.set_ram_bytes(uint64_t{8} << 30);
    auto* target = agent.info.add_targets();
    target->set_name("scratch");
    target->set_kind("dir");
    target->set_filesystem("xfs");
    target->set_mount_options("rw,noatime,logbufs=8");
    target->set_device("/dev/md3");
    agent.clock.offset_nanos = 1234;
    run.agents.push_back(std::move(agent));
  }
  run.phases = std::move(phases);
  return run;
}

RunRecord RepeatedRun(const std::string& run_id, const std::string& host,
                      const std::vector<uint64_t>& mibps) {
  std::vector<PhaseOutcome> phases;
  for (size_t i = 0; i < mibps.size(); ++i) {
    phases.push_back(Phase(WritePlan(), {SucceededHost(host, mibps[i])}, static_cast<int>(i)));
  }
  return MakeRun(run_id, {host}, std::move(phases));
}

}  // namespace stormark::controller::test_runs
