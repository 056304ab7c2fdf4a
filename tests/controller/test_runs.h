// Hand-made runs for the tests of the results store and the comparison reports: hosts with
// chosen throughput and latency, phases with repetitions and sweep points.
#ifndef STORMARK_TESTS_CONTROLLER_TEST_RUNS_H_
#define STORMARK_TESTS_CONTROLLER_TEST_RUNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "controller/fleet/fleet.h"
#include "controller/plan/plan.h"
#include "controller/run/run_record.h"

namespace stormark::controller::test_runs {

inline constexpr int64_t kSecond = 1'000'000'000;
inline constexpr int64_t kBase = 1'700'000'000 * kSecond;

// "stream write 1 GiB, bs 1 MiB" named `name`.
PhasePlan WritePlan(const std::string& name = "seq-write");

// A host that moved `mib_per_second` MiB in one second, in that many 1 MiB operations of
// `latency_nanos` each, on target "scratch", with a per-second series.
HostOutcome SucceededHost(const std::string& host, uint64_t mib_per_second,
                          uint64_t latency_nanos = 1'000'000);

// A host the controller could not reach: no result, only an error.
HostOutcome UnreachableHost(const std::string& host);

PhaseOutcome Phase(PhasePlan plan, std::vector<HostOutcome> hosts, int repetition = 0,
                   const SweepPoint& sweep = {});

// A run of `hosts` (agents with a little AgentInfo and one target each) and `phases`.
RunRecord MakeRun(const std::string& run_id, const std::vector<std::string>& hosts,
                  std::vector<PhaseOutcome> phases);

// A run of one phase "seq-write" repeated once per value of `mibps`, on one host.
RunRecord RepeatedRun(const std::string& run_id, const std::string& host,
                      const std::vector<uint64_t>& mibps);

}  // namespace stormark::controller::test_runs

#endif  // STORMARK_TESTS_CONTROLLER_TEST_RUNS_H_
