// What an agent says is checked before the controller computes with it.
//
// A fleet's figures are sums, spans and differences of what thousands of agents report. One
// buggy or hostile agent's figure that no run can produce (a time of -1 or 2^63 - 1 ns, a
// phase longer than the controller waited for it, a sample before the phase began, a rate
// past any storage) would overflow those sums, or sit in every table as a fleet's figure. So a
// clock reading or a result that is not plausible fails its host, with one line naming the
// field and its value, and the other hosts' figures stand.
#ifndef STORMARK_CONTROLLER_FLEET_RESULT_CHECK_H_
#define STORMARK_CONTROLLER_FLEET_RESULT_CHECK_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// The latest instant an agent's clock may read: 2^62 ns after 1970, in the year 2116. Two such
// instants, their difference, and a controller time plus or minus that difference all fit in
// an int64 (2^63).
inline constexpr int64_t kLatestPlausibleUnixNanos = int64_t{1} << 62;

// The fastest rates a host's figures may show: 2^60 bytes (1 EiB) and 2^40 (about 10^12)
// operations a second. A null target moves nothing and counts each block as moved at once: on a
// 2-core machine, 2 threads report 1.97 TiB/s with 1 MiB blocks and 25 million operations a
// second with 4 KiB ones, so the bounds are half a million and 87,000 such threads away. They
// catch a -1 or an overflowed counter, not a host that claims twice what it did.
inline constexpr double kFastestPlausibleBytesPerSecond = 0x1p60;
inline constexpr double kFastestPlausibleOpsPerSecond = 0x1p40;

// One SyncClock exchange's agent side: when it received the request and when it replied, on
// its clock. OK when both are instants between 1970 and kLatestPlausibleUnixNanos and the
// reply is not before the receipt.
common::Status CheckClockReading(int64_t agent_receive_unix_nanos, int64_t agent_send_unix_nanos);

// A phase's result whose Run stream the controller saw open for `observed_nanos` (on its
// monotonic clock): no length, offset or instant in it is negative or past what the stream's
// life allows (plus 1 s and 1% for the two clocks' rates), no time is past the year 2116, and
// no rate is past the fastest plausible. The message names the field ("series[3].offset_nanos",
// "measurements[1].elapsed_nanos") and its value.
common::Status CheckResult(const stormark::v1::PhaseResult& result, int64_t observed_nanos);

// A result read back from a results file, by the same rules, for a phase of a run that lasted
// at most `run_nanos`, which is `run_is` ("the run lasted"), with an hour more for a step of the
// controller's wall clock during the run: a file recorded before results were checked as they
// came, from a buggy agent, or edited since, shows that host's result as not plausible rather
// than sum a figure no run can produce.
common::Status CheckStoredResult(const stormark::v1::PhaseResult& result, int64_t run_nanos,
                                 std::string_view run_is);

// A progress update of a phase whose Run stream the controller has seen open for
// `observed_nanos`, by the same rules: its elapsed time, bytes and operations. A progress moves
// the host's phase deadline and the live display, so one no run can send fails the host too.
common::Status CheckProgress(const stormark::v1::RunUpdate::Progress& progress,
                             int64_t observed_nanos);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_RESULT_CHECK_H_
