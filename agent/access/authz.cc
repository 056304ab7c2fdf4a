#include "agent/access/authz.h"

#include <grp.h>

#include <algorithm>

#include "agent/config/config.h"
#include "agent/config/yaml_error.h"
#include "agent/workloads/workload_registry.h"
#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StrCat;

bool Contains(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

Status ParseMatch(const YAML::Node& node, std::string_view source, IdentityRule* rule) {
  if (!node.IsMap() || node.size() == 0) {
    return YamlErrorAt(source, node,
                       "'match' must be a map of one or more of cn, san, user, group, such as "
                       "{cn: ci-runner}");
  }
  for (const auto& field : node) {
    const std::string key = YamlScalar(field.first);
    std::string* slot = key == "cn"      ? &rule->cn
                        : key == "san"   ? &rule->san
                        : key == "user"  ? &rule->user
                        : key == "group" ? &rule->group
                                         : nullptr;
    if (slot == nullptr) {
      return YamlErrorAt(source, field.first,
                         StrCat("unknown field 'match.", key, "' (known: cn, san, user, group)"));
    }
    *slot = YamlScalar(field.second);
    if (slot->empty()) {
      return YamlErrorAt(source, field.second,
                         StrCat("'match.", key, "' must be a non-empty name"));
    }
  }
  return absl::OkStatus();
}

Status ParseRule(const YAML::Node& node, std::string_view source, IdentityRule* rule) {
  if (!node.IsMap()) {
    return YamlErrorAt(source, node,
                       "each identities entry must be a map such as {match: {cn: NAME}, "
                       "targets: [NAME], write: true}");
  }
  bool matched = false;
  for (const auto& field : node) {
    const std::string key = YamlScalar(field.first);
    const YAML::Node& value = field.second;
    if (key == "match") {
      RETURN_IF_ERROR(ParseMatch(value, source, rule));
      matched = true;
    } else if (key == "targets") {
      if (!value.IsSequence() || value.size() == 0) {
        return YamlErrorAt(source, value, "'targets' must be a non-empty list of target names");
      }
      for (const auto& item : value) {
        const std::string name = YamlScalar(item);
        if (!common::IsValidName(name)) {
          return YamlErrorAt(source, item, StrCat("'targets': '", name, "' is not a target name"));
        }
        rule->targets.push_back(name);
      }
    } else if (key == "write" || key == "commands" || key == "hooks" || key == "tuning") {
      auto allowed = common::ParseBool(key, YamlScalar(value).empty() ? "?" : YamlScalar(value));
      if (!allowed.ok()) return YamlErrorAt(source, value, std::string(allowed.status().message()));
      bool* slot = key == "write"      ? &rule->write
                   : key == "commands" ? &rule->commands
                   : key == "hooks"    ? &rule->hooks
                                       : &rule->tuning;
      *slot = *allowed;
    } else {
      return YamlErrorAt(source, field.first,
                         StrCat("unknown field '", key,
                                "' in an identities entry (known: match, targets, write, commands, "
                                "hooks, tuning)"));
    }
  }
  if (!matched) return YamlErrorAt(source, node, "identities entry without 'match'");
  return absl::OkStatus();
}

}  // namespace

std::string Identity::Describe() const { return peer.empty() ? name : peer; }

Identity IdentityOf(const PeerIdentity& peer, uid_t agent_uid) {
  Identity id;
  id.peer = peer.Describe();
  switch (peer.kind) {
    case PeerIdentity::Kind::kCertificate:
      id.kind = Identity::Kind::kCertificate;
      id.common_name = peer.common_name;
      id.subject_alt_names = peer.subject_alt_names;
      id.name = StrCat("CN=", peer.common_name);
      break;
    case PeerIdentity::Kind::kUnixUser: {
      id.kind = Identity::Kind::kLocal;
      id.user = peer.user;
      id.name = StrCat("uid ", peer.uid, peer.user.empty() ? "" : StrCat(" (", peer.user, ")"));
      std::vector<gid_t> gids = peer.groups;
      gids.push_back(peer.gid);
      for (gid_t gid : gids) {
        std::vector<char> buffer(16384);
        group entry;
        group* found = nullptr;
        if (getgrgid_r(gid, &entry, buffer.data(), buffer.size(), &found) == 0 && found &&
            !Contains(id.groups, found->gr_name)) {
          id.groups.emplace_back(found->gr_name);
        }
      }
      id.local_operator = peer.uid == 0 || peer.uid == agent_uid;
      break;
    }
    case PeerIdentity::Kind::kInProcess:
      id.kind = Identity::Kind::kInProcess;
      id.name = "in-process";
      id.local_operator = true;
      break;
    case PeerIdentity::Kind::kUnauthenticated: {
      // The port changes with every connection; the address is all that stays.
      const size_t colon = peer.address.rfind(':');
      id.name = StrCat("unauthenticated ",
                       colon == std::string::npos ? peer.address : peer.address.substr(0, colon));
      break;
    }
    case PeerIdentity::Kind::kUnknown:
      id.name = "unknown";
      break;
  }
  return id;
}

bool IdentityRule::Matches(const Identity& caller) const {
  if (!cn.empty() && (caller.kind != Identity::Kind::kCertificate || caller.common_name != cn)) {
    return false;
  }
  if (!san.empty() &&
      (caller.kind != Identity::Kind::kCertificate || !Contains(caller.subject_alt_names, san))) {
    return false;
  }
  if (!user.empty() && (caller.user.empty() || caller.user != user)) return false;
  if (!group.empty() && !Contains(caller.groups, group)) return false;
  return true;
}

std::string IdentityRule::Describe() const {
  std::string match;
  for (auto [key, value] : {std::pair{"cn", &cn}, std::pair{"san", &san}, std::pair{"user", &user},
                            std::pair{"group", &group}}) {
    if (!value->empty()) match += StrCat(match.empty() ? "" : ", ", key, ": ", *value);
  }
  return StrCat("identities rule at ", where, " (", match, ")");
}

Status ParseIdentities(const YAML::Node& node, std::string_view source,
                       std::vector<IdentityRule>* rules) {
  if (!node.IsSequence() || node.size() == 0) {
    return YamlErrorAt(source, node,
                       "'identities' must be a non-empty list such as [{match: {cn: NAME}, "
                       "targets: [NAME], write: true}] (leave it out to let every caller do "
                       "everything)");
  }
  for (const auto& item : node) {
    IdentityRule rule;
    const YAML::Mark mark = item.Mark();
    rule.where = mark.is_null() ? std::string(source) : StrCat(source, ":", mark.line + 1);
    RETURN_IF_ERROR(ParseRule(item, source, &rule));
    rules->push_back(std::move(rule));
  }
  return absl::OkStatus();
}

Status CheckRuleTargets(const std::vector<IdentityRule>& rules, const AgentConfig& config) {
  for (const IdentityRule& rule : rules) {
    for (const std::string& name : rule.targets) {
      if (config.FindTarget(name) != nullptr) continue;
      return absl::InvalidArgumentError(StrCat(rule.where, ": identities: no target '", name,
                                               "' (configured: ", config.TargetNames(), ")"));
    }
  }
  return absl::OkStatus();
}

bool PhaseWrites(const stormark::v1::PhaseSpec& spec, const TargetConfig& target) {
  return WorkloadWrites(spec, target);
}

Status CheckAccess(const std::vector<IdentityRule>& rules, const Identity& caller,
                   const stormark::v1::PhaseSpec& spec, const TargetConfig* target) {
  if (rules.empty() || caller.local_operator) return absl::OkStatus();
  const auto rule = std::find_if(rules.begin(), rules.end(),
                                 [&](const IdentityRule& r) { return r.Matches(caller); });
  if (rule == rules.end()) {
    return absl::PermissionDeniedError(
        StrCat(caller.name,
               " may not prepare phases on this agent: none of its identities "
               "rules (",
               rules.front().where, ") matches it"));
  }
  auto refuse = [&](std::string_view what, std::string_view setting) {
    return absl::PermissionDeniedError(
        StrCat(caller.name, " may not ", what, ": ", rule->Describe(), " has ", setting));
  };
  if (target == nullptr) return absl::OkStatus();  // The factory names the missing target.
  if (!rule->targets.empty() && !Contains(rule->targets, target->name)) {
    std::string allowed;
    for (const auto& t : rule->targets) allowed += StrCat(allowed.empty() ? "" : ", ", t);
    return refuse(StrCat("use target '", target->name, "'"), StrCat("targets: [", allowed, "]"));
  }
  const stormark::v1::CommandSpec* program = ProgramOf(spec);
  const bool hook = program != nullptr && program->hook();
  if (hook && !rule->hooks) return refuse("run hooks", "hooks: false");
  if (program != nullptr && !hook && !rule->commands) {
    return refuse("run commands", "commands: false");
  }
  if (!spec.tuning().empty() && !rule->tuning) {
    return refuse(StrCat("tune the device of target '", target->name, "'"), "tuning: false");
  }
  if (!rule->write && PhaseWrites(spec, *target)) {
    return refuse(StrCat("write to target '", target->name, "' (", common::WorkloadName(spec),
                         hook ? " hook" : "", ")"),
                  "write: false");
  }
  return absl::OkStatus();
}

}  // namespace stormark::agent
