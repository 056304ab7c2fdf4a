// A fio job file that differs by host: the fix for axboe/fio#1688, where fio's client mode
// cannot give each host of a list its own values. The file reads ${STORMARK_HOST} and
// ${STORMARK_LABEL_<KEY>} (fio_import.h), and each host runs what the file says for it.
//
// The plan is built from one reading of the file, as its first host would see it; --set, the
// plan's cache and the sweep's values go onto that. Once every host is known (after discovery),
// ResolveHostSpecs reads the file again for each host, with its target's facts once its agent
// has been reached. A host whose reading differs gets its
// own spec: the plan's, with the workload fields the host's reading changed taken from it (so
// --set and sweeps still apply to every host), and its own target when filename= differs.
// Every host must get the same phases, by number and name.
#ifndef STORMARK_CONTROLLER_FIO_FIO_HOSTS_H_
#define STORMARK_CONTROLLER_FIO_FIO_HOSTS_H_

#include <functional>
#include <string>

#include "common/status.h"
#include "controller/plan/plan.h"

namespace stormark::controller::fio {

// Host i's target named `target` (its default when empty) as its agent describes it, whose
// facts are the file's STORMARK_TARGET_* variables; nullptr for a host that was not reached,
// which is left out.
using TargetLookup =
    std::function<const stormark::v1::TargetInfo*(size_t host, const std::string& target)>;

// Fills host_specs and host_targets of every phase that has a fio_origin, for plan->hosts
// (one "local" host when there are none). Without `lookup`, the targets' facts are not known.
// An error names the host and the file.
common::Status ResolveHostSpecs(Plan* plan, const TargetLookup& lookup = nullptr);

// The spec a host runs: `base` with every field of its workload that differs between `read`
// and `host_read` (two readings of the same phase) taken from `host_read`.
stormark::v1::PhaseSpec WithHostFields(const stormark::v1::PhaseSpec& base,
                                       const stormark::v1::PhaseSpec& read,
                                       const stormark::v1::PhaseSpec& host_read);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_HOSTS_H_
