#include "controller/report/environment.h"

#include <algorithm>
#include <set>
#include <string_view>
#include <unordered_map>

#include "common/strings.h"
#include "common/units.h"
#include "fmt/format.h"

namespace stormark::controller {
namespace {

using common::StrCat;

// The order differing keys are listed in: what the posts argue about first.
constexpr const char* kKeyOrder[] = {"scheduler",
                                     "read_ahead_kb",
                                     "nr_requests",
                                     "queue_depth",
                                     "max_sectors_kb",
                                     "write_cache",
                                     "rotational",
                                     "transport",
                                     "transport_detail",
                                     "model",
                                     "vendor",
                                     "filesystem",
                                     "mount_options",
                                     "kernel",
                                     "cpu_model",
                                     "cpu_count",
                                     "ram_bytes",
                                     "memory_limit_bytes",
                                     "cpu_governor",
                                     "vm.dirty_ratio",
                                     "vm.dirty_background_ratio",
                                     "vm.dirty_bytes",
                                     "vm.dirty_background_bytes",
                                     "vm.dirty_expire_centisecs",
                                     "vm.dirty_writeback_centisecs"};

constexpr const char* kDirtyKeys[] = {"vm.dirty_ratio",
                                      "vm.dirty_background_ratio",
                                      "vm.dirty_bytes",
                                      "vm.dirty_background_bytes",
                                      "vm.dirty_expire_centisecs",
                                      "vm.dirty_writeback_centisecs"};

size_t Rank(const std::string& key) {
  const auto* end = std::end(kKeyOrder);
  return static_cast<size_t>(std::find(std::begin(kKeyOrder), end, key) - std::begin(kKeyOrder));
}

const std::string* Find(const Environment& env, const std::string& key) {
  auto it = env.find(key);
  return it == env.end() || it->second.empty() ? nullptr : &it->second;
}

std::string Get(const Environment& env, const std::string& key) {
  const std::string* value = Find(env, key);
  return value ? *value : "";
}

Environment ToMap(const google::protobuf::Map<std::string, std::string>& map) {
  return Environment(map.begin(), map.end());
}

const stormark::v1::TargetInfo* FindTarget(const stormark::v1::AgentInfo& info,
                                           const std::string& name) {
  for (const auto& t : info.targets()) {
    if (t.name() == name) return &t;
  }
  return info.targets_size() == 1 && name.empty() ? &info.targets(0) : nullptr;
}

std::string LabelOf(const AgentRecord& agent) {
  for (const auto& [key, value] : agent.labels) {
    if (key == "transport") return value;
  }
  return "";
}

// "write back", "none", "128": the pairs "key value" of the keys `env` has,
// joined by ", ".
std::string Pairs(const Environment& env, std::initializer_list<const char*> keys,
                  std::string_view strip = "") {
  std::string out;
  for (const char* key : keys) {
    if (const std::string* value = Find(env, key)) {
      std::string_view name = key;
      if (name.starts_with(strip)) name.remove_prefix(strip.size());
      out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, *value);
    }
  }
  return out;
}

// "Linux 6.1.0, 2 x Xeon, 31.2 GiB RAM, cpu_governor none".
std::string HostLine(const Environment& env) {
  std::string out = Get(env, "kernel");
  const std::string cpus = Get(env, "cpu_count");
  const std::string model = Get(env, "cpu_model");
  if (!cpus.empty() || !model.empty()) {
    out += fmt::format("{}{} x {}", out.empty() ? "" : ", ", cpus.empty() ? "?" : cpus,
                       model.empty() ? "CPU" : model);
  }
  if (const std::string* ram = Find(env, "ram_bytes")) {
    out += fmt::format("{}{} RAM", out.empty() ? "" : ", ",
                       common::FormatBytes(std::strtoull(ram->c_str(), nullptr, 10)));
  }
  if (const std::string* limit = Find(env, "memory_limit_bytes")) {
    const std::string* cgroup = Find(env, "memory_cgroup");
    out += fmt::format("{}memory limit {}{}", out.empty() ? "" : ", ",
                       common::FormatBytes(std::strtoull(limit->c_str(), nullptr, 10)),
                       cgroup ? fmt::format(" (cgroup {})", cgroup->substr(0, 2)) : "");
  }
  if (const std::string* governor = Find(env, "cpu_governor")) {
    out += fmt::format("{}cpu_governor {}", out.empty() ? "" : ", ", *governor);
  }
  return out;
}

// "local (virtio) vda, model X; ext4 (rw,relatime); scheduler none,
// read_ahead_kb 128, ...".
std::string TargetLine(const Environment& env) {
  std::vector<std::string> parts;
  std::string device = Get(env, "transport");
  if (const std::string* detail = Find(env, "transport_detail")) {
    device += fmt::format("{}({})", device.empty() ? "" : " ", *detail);
  }
  if (const std::string* name = Find(env, "device")) {
    device += fmt::format("{}{}", device.empty() ? "" : " ", *name);
  }
  if (const std::string* file = Find(env, "backing_file")) device += " on " + *file;
  const std::string model = Pairs(env, {"vendor", "model"});
  if (!model.empty()) device += fmt::format("{}{}", device.empty() ? "" : ", ", model);
  if (!device.empty()) parts.push_back(device);
  if (const std::string* fs = Find(env, "filesystem")) {
    const std::string* options = Find(env, "mount_options");
    parts.push_back(options ? fmt::format("{} ({})", *fs, *options) : *fs);
  }
  const std::string queue = Pairs(env, {"scheduler", "read_ahead_kb", "nr_requests", "queue_depth",
                                        "max_sectors_kb", "rotational", "write_cache"});
  if (!queue.empty()) parts.push_back(queue);
  std::string out;
  for (const std::string& part : parts) out += StrCat(out.empty() ? "" : "; ", part);
  return out;
}

}  // namespace

Environment RowEnvironment(const HostOutcome& host, const AgentRecord* agent) {
  if (host.result &&
      (!host.result->host_environment().empty() || !host.result->target_environment().empty())) {
    Environment env = ToMap(host.result->host_environment());
    for (const auto& [key, value] : host.result->target_environment()) env[key] = value;
    return env;
  }
  if (agent == nullptr) return {};
  Environment env = ToMap(agent->info.environment());
  if (const auto* target = FindTarget(agent->info, host.target)) {
    for (const auto& [key, value] : target->environment()) env[key] = value;
  }
  return env;
}

std::vector<std::string> DifferingKeys(const std::vector<Environment>& all_rows,
                                       const std::vector<std::string>& ignore) {
  // A network target's transport detail names its server (portal, IQN, export, interface):
  // like `device`, that identifies rather than configures. A local one's (virtio, NVMe,
  // SATA) is compared, with the other local rows'.
  std::vector<Environment> rows = all_rows;
  for (Environment& row : rows) {
    const std::string* transport = Find(row, "transport");
    if (transport != nullptr && *transport != "local") row.erase("transport_detail");
  }
  std::vector<std::string> keys;
  // Each key is compared across the rows once: a key every row agrees on would otherwise be
  // compared again for every row that has it, n^2 finds (10,000 hosts: minutes).
  std::set<std::string_view> checked;
  for (const Environment& row : rows) {
    for (const auto& [key, value] : row) {
      if (!checked.insert(key).second) continue;
      if (key == "device" || key == "backing_file" || key == "memory_cgroup" ||
          std::find(ignore.begin(), ignore.end(), key) != ignore.end()) {
        continue;
      }
      const std::string* first = nullptr;
      for (const Environment& other : rows) {
        const std::string* v = Find(other, key);
        if (v == nullptr) continue;
        if (first == nullptr) {
          first = v;
        } else if (*v != *first) {
          keys.push_back(key);
          break;
        }
      }
    }
  }
  std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    const size_t ra = Rank(a), rb = Rank(b);
    return ra != rb ? ra < rb : a < b;
  });
  return keys;
}

bool RowDiffers(size_t i, const std::vector<Environment>& rows,
                const std::vector<std::string>& keys) {
  if (i >= rows.size()) return false;
  for (const std::string& key : keys) {
    const std::string* mine = Find(rows[i], key);
    if (mine == nullptr) continue;
    for (const Environment& other : rows) {
      if (const std::string* first = Find(other, key)) {
        if (*first != *mine) return true;
        break;
      }
    }
  }
  return false;
}

std::string FormatDiffers(const std::vector<std::string>& names,
                          const std::vector<Environment>& rows,
                          const std::vector<std::string>& keys, size_t max_names) {
  if (keys.empty()) return "";
  std::string out = "differs:";
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string& key = keys[k];
    std::string values;
    if (rows.size() <= 4) {
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::string* v = Find(rows[i], key);
        values += fmt::format("{}{}: {}", values.empty() ? "" : ", ",
                              i < names.size() ? names[i] : StrCat("row ", i + 1), v ? *v : "?");
      }
    } else {
      std::vector<std::pair<std::string, std::vector<std::string>>> groups;  // value -> rows
      for (size_t i = 0; i < rows.size(); ++i) {
        const std::string* v = Find(rows[i], key);
        const std::string value = v ? *v : "?";
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == value; });
        if (it == groups.end()) {
          groups.emplace_back(value, std::vector<std::string>{});
          it = groups.end() - 1;
        }
        it->second.push_back(i < names.size() ? names[i] : StrCat("row ", i + 1));
      }
      for (const auto& [value, who] : groups) {
        std::string list;
        for (size_t n = 0; n < who.size() && n < max_names; ++n) {
          list += StrCat(n == 0 ? "" : ", ", who[n]);
        }
        if (who.size() > max_names) list += fmt::format(" and {} more", who.size() - max_names);
        values += fmt::format("{}{}: {}", values.empty() ? "" : "; ", value, list);
      }
    }
    out += fmt::format("{} {} ({})", k == 0 ? "" : ";", key, values);
  }
  return out;
}

std::string CanonicalTransportLabel(std::string_view label) {
  const std::string lower = common::ToLower(label);
  for (const char* known : {"local", "AoE", "iSCSI", "NBD", "FC", "USB", "NFS", "SMB", "NVMe-oF"}) {
    if (lower == common::ToLower(known)) return known;
  }
  return std::string(label);
}

void LabelTransports(const std::vector<AgentRecord>& agents, PhaseOutcome* outcome) {
  // Each host's agent record (the last of its name), found in a map: a search of every
  // record for every host took seconds at 10,000 hosts.
  std::unordered_map<std::string_view, const AgentRecord*> agent_of;
  for (const AgentRecord& a : agents) agent_of[a.host] = &a;
  for (HostOutcome& host : outcome->hosts) {
    const auto found = agent_of.find(host.host);
    const AgentRecord* agent = found == agent_of.end() ? nullptr : found->second;
    const Environment env = RowEnvironment(host, agent);
    const std::string detected = Get(env, "transport");
    const std::string label = agent ? CanonicalTransportLabel(LabelOf(*agent)) : "";
    host.transport = label.empty() ? detected : label;
    host.transport_note.clear();
    const std::string* detail = Find(env, "transport_detail");
    // A label naming the detail ("loop", "sata", "nvme") agrees as well as the label itself.
    const bool agrees = common::ToLower(label) == common::ToLower(detected) ||
                        (detail && common::ToLower(*detail).starts_with(common::ToLower(label)));
    if (!label.empty() && !detected.empty() && !agrees) {
      host.transport_note = fmt::format(
          "labelled '{}' in the plan, but the agent detected {}{}; the label "
          "is shown",
          label, detected, detail ? fmt::format(" ({})", *detail) : "");
    }
  }
}

std::string FormatEnvironmentNotes(const std::vector<AgentRecord>& agents, bool collapsed) {
  const size_t max_names = collapsed ? 3 : SIZE_MAX;
  std::string out;
  std::vector<std::string> hosts;
  std::vector<Environment> host_envs;
  // Targets by name, across hosts: the same name on several hosts is the usual
  // comparison.
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, Environment>>>> targets;
  for (const AgentRecord& agent : agents) {
    if (!agent.error.empty() || agent.info.environment().empty()) continue;
    const Environment env = ToMap(agent.info.environment());
    hosts.push_back(agent.host);
    host_envs.push_back(env);
    out += fmt::format("  {}: {}\n", agent.host, HostLine(env));
    const std::string dirty = Pairs(
        env,
        {kDirtyKeys[0], kDirtyKeys[1], kDirtyKeys[2], kDirtyKeys[3], kDirtyKeys[4], kDirtyKeys[5]},
        "vm.");
    if (!dirty.empty()) out += fmt::format("    vm: {}\n", dirty);
    for (const auto& t : agent.info.targets()) {
      const Environment target = ToMap(t.environment());
      const std::string line = TargetLine(target);
      if (!line.empty()) out += fmt::format("    {}: {}\n", t.name(), line);
      auto it = std::find_if(targets.begin(), targets.end(),
                             [&](const auto& entry) { return entry.first == t.name(); });
      if (it == targets.end()) {
        targets.push_back({t.name(), {}});
        it = targets.end() - 1;
      }
      it->second.emplace_back(agent.host, target);
    }
  }
  if (out.empty()) return "";
  std::string differs;
  if (const auto keys = DifferingKeys(host_envs); !keys.empty()) {
    differs += fmt::format("  {} hosts {}\n", kDiffersMark,
                           FormatDiffers(hosts, host_envs, keys, max_names));
  }
  for (const auto& [name, rows] : targets) {
    if (rows.size() < 2) continue;
    std::vector<std::string> names;
    std::vector<Environment> envs;
    for (const auto& [host, env] : rows) {
      names.push_back(host);
      envs.push_back(env);
    }
    if (const auto keys = DifferingKeys(envs); !keys.empty()) {
      differs += fmt::format("  {} target {} {}\n", kDiffersMark, name,
                             FormatDiffers(names, envs, keys, max_names));
    }
  }
  if (collapsed) {
    // A line per host, times thousands, hides what differs: that alone is shown.
    out = fmt::format(
        "  {} hosts reported their facts; --all-hosts prints each host's, and the "
        "JSON report keeps them\n",
        hosts.size());
  }
  return "Environment\n" + out + differs;
}

}  // namespace stormark::controller
