// A result's interval series held apart from the rest of it, serialized.
//
// A long phase's result is mostly its series: a sample a second for the phase and for each
// measurement, job and thread. A fleet's results arrive at once, and each waits for its
// host's cleanup before it is handed on (Fleet::HostDoneFn), so two thousand parsed results
// held together set the controller's peak memory. Serialized, a series takes about a fifth of
// its parsed size: the fleet packs the series of each result that a host_done will take as
// the result arrives, and the results writer unpacks them as it writes the row; the outputs
// written at a run's end read each phase back with its series packed and open one host's at a
// time (WithSeries, OwnSeries).
#ifndef STORMARK_CONTROLLER_FLEET_PACKED_SERIES_H_
#define STORMARK_CONTROLLER_FLEET_PACKED_SERIES_H_

#include <string>

#include "controller/fleet/fleet.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// Moves every interval series out of `result` (its own, its measurements', its jobs'
// measurements', its threads') and returns them serialized, as a PhaseResult that holds only
// them in the same places.
std::string PackSeries(stormark::v1::PhaseResult* result);

// Puts series that PackSeries took back into `result`, which must have the measurements and
// jobs it had then (anything else in it may have changed: a warning added, say). False, and
// `result` unchanged, when `packed` does not parse or does not fit.
bool UnpackSeries(const std::string& packed, stormark::v1::PhaseResult* result);

// `host`'s result with every interval series in it: the result itself, or, for one that
// was read back with its series packed (run/full_phase.h FullPhase), a copy in `*whole` with its
// series unpacked, so that the outputs that write series hold one host's at a time. nullptr when
// the host has no result.
const stormark::v1::PhaseResult* WithSeries(const HostOutcome& host,
                                            stormark::v1::PhaseResult* whole);

// The series of `host`'s result itself (not its parts'), without copying the rest of it: from
// the result, or unpacked into `*packed`. Empty when the host has no result.
const google::protobuf::RepeatedPtrField<stormark::v1::IntervalSample>& OwnSeries(
    const HostOutcome& host, stormark::v1::PhaseResult* packed);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_PACKED_SERIES_H_
