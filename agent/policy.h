// What an agent's config allows beyond its targets: mutual TLS, where scratch files may go,
// and resource caps on every phase. Kept apart from config.cc (which parses targets) so the
// two grow independently.
//
//   tls:                        # mutual TLS: controllers must hold a certificate this CA
//     ca: /etc/stormark/ca.crt  # signed (stormark certs init / issue)
//     cert: /etc/stormark/agent.crt
//     key: /etc/stormark/agent.key
//   scratch: [/srv/bench]       # every dir target must lie under one of these (after
//                               # symlinks), checked at start and again before each phase
//   limits:
//     max_size: 10G             # the most data one phase may lay out in a dir target
//     max_runtime: 10m          # the longest a phase may ask to run; a phase running longer
//                               # is aborted
//     max_files: 100000         # the most files one phase may create (bonnie, postmark)
#ifndef STORMARK_AGENT_POLICY_H_
#define STORMARK_AGENT_POLICY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct AgentConfig;
struct HostFacts;
struct TargetConfig;

// The agent's mutual-TLS files (the config's `tls:`, or --tls-*); all empty: plain text.
struct TlsConfig {
  std::string ca;
  std::string cert;
  std::string key;

  bool empty() const { return ca.empty() && cert.empty() && key.empty(); }
};

struct ResourceLimits {
  // 0 means no cap.
  uint64_t max_size_bytes = 0;
  int64_t max_runtime_nanos = 0;
  uint64_t max_files = 0;
};

// The policy keys of an agent config: "tls", "scratch", "limits", "identities"
// (agent/authz.h).
bool IsPolicyKey(std::string_view key);
inline constexpr char kPolicyKeyNames[] = "tls, scratch, limits, identities";

// Parses one policy key's value into `config`. Errors name `source` and the line.
common::Status ParsePolicyKey(std::string_view key, const YAML::Node& value,
                              std::string_view source, AgentConfig* config);

// OK when the dir target lies under one of the config's scratch directories (or none are
// configured), after resolving symbolic links; PERMISSION_DENIED naming both otherwise.
common::Status CheckScratch(const AgentConfig& config, const TargetConfig& target);

// The bytes a phase will lay out in a dir target, at most: a stream's file, bonnie's data file
// and its small files, PostMark's pool and every file its transactions could create, randio's
// file. 0 when the phase makes no files of known size (command, block and null targets).
common::StatusOr<uint64_t> PhaseDataBytes(const stormark::v1::PhaseSpec& spec,
                                          const TargetConfig& target, const HostFacts& host);

// The files a phase may create at most: bonnie's files_k x 1024, PostMark's pool plus one
// per transaction; 0 for the single-file workloads.
uint64_t PhaseFileCount(const stormark::v1::PhaseSpec& spec);

// The runtime a phase asks for (randio's runtime plus ramp, a command's timeout); 0 when it
// does not say, and then the agent's watchdog stops it at max_runtime.
int64_t PhaseRequestedRuntimeNanos(const stormark::v1::PhaseSpec& spec);

// OK when the phase is within every cap and its target within the scratch directories;
// PERMISSION_DENIED with one line naming the cap, the figure and the config key otherwise.
common::Status CheckPolicy(const stormark::v1::PhaseSpec& spec, const AgentConfig& config,
                           const HostFacts& host);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_POLICY_H_
