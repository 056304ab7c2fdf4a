// What the `nbd:` and `iscsi:` target kinds share (agent/targets/nbd/, agent/targets/iscsi/):
// opening a device through the agent's own user-space initiator (agent/devices/nbd_device.h and
// iscsi_device.h; nothing is attached to the kernel), remembering what the last connection
// learnt for GetInfo, and reading the settings maps of their config (tls:, chap:).
//
// Writing needs `disposable: true`, and a device that holds no signature. Secrets (the CHAP
// password, read from its file at each open) stay inside the agent.
#ifndef STORMARK_AGENT_TARGETS_NET_NET_TARGET_H_
#define STORMARK_AGENT_TARGETS_NET_NET_TARGET_H_

#include <atomic>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agent/config/config.h"
#include "agent/devices/device.h"
#include "agent/targets/target_kind.h"
#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

// How one kind connects to its server: for writing when `write`, giving up after
// `connect_timeout_nanos`, and soon after `*cancelled` is set (when not null).
using NetConnect = common::StatusOr<std::unique_ptr<Device>> (*)(const TargetConfig& target,
                                                                 bool write,
                                                                 const std::atomic<bool>* cancelled,
                                                                 int64_t connect_timeout_nanos);

// Connects to the server of `target` with `connect`, for writing when `write`, after the
// interlocks: disposable before, no signature on the device after. Fails, naming the target,
// when writing is refused or the server cannot be reached. Waits end soon after `cancelled`
// is set; it must outlive the device. What the connection learnt is kept in target.cache.
common::StatusOr<std::unique_ptr<Device>> OpenNetTarget(const TargetConfig& target, bool write,
                                                        const std::atomic<bool>& cancelled,
                                                        NetConnect connect);

// Fills the facts of a network target into `info`: `transport` and `detail`, disposable, size
// and block size. The size is the one seen at the last connection; when there was none yet,
// this connects once with `connect` and a short timeout (and tries again at most once a minute
// after a failure).
void ReadNetTargetFacts(const TargetConfig& target, NetConnect connect, std::string_view transport,
                        std::string detail, stormark::v1::TargetInfo* info);

// For a kind's parser: the fields of the settings map `node` (tls:, chap:), called `name`,
// each a non-empty scalar and one of `known`; errors name the field and its line.
common::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> SettingsMap(
    const TargetYaml& yaml, const YAML::Node& node, const TargetConfig& target,
    std::string_view name, std::initializer_list<std::string_view> known);

// For a kind's parser: `path`, given as `field`, is absolute and an existing file (or
// directory).
common::Status CheckPathField(const TargetYaml& yaml, const YAML::Node& node,
                              const TargetConfig& target, std::string_view field,
                              const std::string& path, bool directory);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_NET_NET_TARGET_H_
