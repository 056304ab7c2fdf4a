// Opening the device behind an `nbd:` or `iscsi:` target, and what GetInfo says of one.
//
// The agent's own user-space initiators reach these targets (agent/devices/nbd_device.h and
// iscsi_device.h); nothing is attached to the kernel. Writing needs `disposable: true`.
// Secrets (the CHAP password, read from its file at each open) stay inside the agent.
#ifndef STORMARK_AGENT_TARGETS_NET_TARGET_H_
#define STORMARK_AGENT_TARGETS_NET_TARGET_H_

#include <atomic>
#include <memory>
#include <string>

#include "agent/config.h"
#include "agent/devices/device.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// Connects to the target of `target` (kind "nbd" or "iscsi"), for writing when `write`. Fails,
// naming the target and its URI, when writing is refused or the server cannot be reached.
// Waits end soon after `cancelled` is set; it must outlive the device.
common::StatusOr<std::unique_ptr<Device>> OpenNetTarget(const TargetConfig& target, bool write,
                                                        const std::atomic<bool>& cancelled);

// "user-space NBD client to 127.0.0.1:10809 export 'x' (TLS)".
std::string NetTransportDetail(const TargetConfig& target);

// Fills kind-specific facts of a network target into `info`: transport, detail, size and block
// size. The size is the one seen at the last connection; when there was none yet, this
// connects once with a short timeout (and tries again at most once a minute after a failure).
void ReadNetTargetFacts(const TargetConfig& target, stormark::v1::TargetInfo* info);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_NET_TARGET_H_
