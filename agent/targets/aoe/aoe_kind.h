// The `aoe:` target kind: an ATA-over-Ethernet target (a shelf and slot behind one of this
// host's interfaces), reached with stormark's own initiator (agent/devices/aoe/; needs
// CAP_NET_RAW). It is found when a phase opens it, so it may be switched on after the agent
// starts.
//
//   shelf: {aoe: aoe://eth1/1.0, disposable: true}   # size, io_timeout, connect_timeout
#ifndef STORMARK_AGENT_TARGETS_AOE_AOE_KIND_H_
#define STORMARK_AGENT_TARGETS_AOE_AOE_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& AoeTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_AOE_AOE_KIND_H_
