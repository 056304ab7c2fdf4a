#include "controller/fleet/discovery.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <map>
#include <set>

#include "common/address.h"
#include "common/strings.h"
#include "common/text_file.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// One inventory host: its variables, in the order given.
struct InventoryHost {
  std::string name;
  std::map<std::string, std::string> vars;
  int line = 0;
};

// Groups by name: their own hosts (in order) and child groups.
struct Inventory {
  std::vector<InventoryHost> hosts;  // Every host once, first definition first.
  std::map<std::string, std::vector<std::string>> group_hosts;
  std::map<std::string, std::vector<std::string>> group_children;

  InventoryHost& Host(const std::string& name, int line) {
    for (InventoryHost& h : hosts) {
      if (h.name == name) return h;
    }
    hosts.push_back({name, {}, line});
    return hosts.back();
  }
};

// "key=value key2='v 2'" after the host name on an INI line.
std::map<std::string, std::string> IniVars(std::string_view rest) {
  std::map<std::string, std::string> vars;
  size_t at = 0;
  while (at < rest.size()) {
    while (at < rest.size() && (rest[at] == ' ' || rest[at] == '\t')) ++at;
    const size_t eq = rest.find('=', at);
    if (eq == std::string_view::npos) break;
    const std::string key(rest.substr(at, eq - at));
    size_t end = eq + 1;
    std::string value;
    if (end < rest.size() && (rest[end] == '"' || rest[end] == '\'')) {
      const char quote = rest[end];
      const size_t close = rest.find(quote, end + 1);
      value = std::string(rest.substr(
          end + 1, close == std::string_view::npos ? std::string_view::npos : close - end - 1));
      end = close == std::string_view::npos ? rest.size() : close + 1;
    } else {
      while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t') ++end;
      value = std::string(rest.substr(eq + 1, end - eq - 1));
    }
    vars[key] = value;
    at = end;
  }
  return vars;
}

StatusOr<Inventory> ParseIni(std::string_view text, std::string_view source) {
  Inventory inv;
  std::string group = "ungrouped";
  enum class Section { kHosts, kChildren, kVars } section = Section::kHosts;
  int number = 0;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    at = end + 1;
    ++number;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (line.empty() || line[0] == '#' || line[0] == ';') {
      if (end == text.size()) break;
      continue;
    }
    if (line.front() == '[') {
      if (line.back() != ']') {
        return absl::InvalidArgumentError(StrCat(source, ":", number, ": expected [group]"));
      }
      std::string name(line.substr(1, line.size() - 2));
      section = Section::kHosts;
      if (const size_t colon = name.find(':'); colon != std::string::npos) {
        const std::string kind = name.substr(colon + 1);
        section = kind == "children" ? Section::kChildren : Section::kVars;
        name = name.substr(0, colon);
      }
      group = name;
    } else if (section == Section::kChildren) {
      inv.group_children[group].emplace_back(line);
    } else if (section == Section::kHosts) {
      const size_t space = line.find_first_of(" \t");
      const std::string name(line.substr(0, space));
      InventoryHost& host = inv.Host(name, number);
      if (space != std::string_view::npos) {
        for (auto& [k, v] : IniVars(line.substr(space))) host.vars[k] = v;
      }
      inv.group_hosts[group].push_back(name);
    }
    if (end == text.size()) break;
  }
  return inv;
}

Status WalkYamlGroup(const YAML::Node& group, const std::string& name, Inventory* inv, int depth) {
  if (depth > 32 || !group.IsMap()) return absl::OkStatus();
  if (const YAML::Node hosts = group["hosts"]; hosts && hosts.IsMap()) {
    for (const auto& entry : hosts) {
      const std::string host_name = entry.first.as<std::string>();
      InventoryHost& host = inv->Host(host_name, entry.first.Mark().line + 1);
      if (entry.second.IsMap()) {
        for (const auto& var : entry.second) {
          if (var.second.IsScalar())
            host.vars[var.first.as<std::string>()] = var.second.as<std::string>();
        }
      }
      inv->group_hosts[name].push_back(host_name);
    }
  }
  if (const YAML::Node children = group["children"]; children && children.IsMap()) {
    for (const auto& child : children) {
      const std::string child_name = child.first.as<std::string>();
      inv->group_children[name].push_back(child_name);
      RETURN_IF_ERROR(WalkYamlGroup(child.second, child_name, inv, depth + 1));
    }
  }
  return absl::OkStatus();
}

StatusOr<Inventory> ParseYamlInventory(std::string_view text, std::string_view source) {
  Inventory inv;
  try {
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) {
      return absl::InvalidArgumentError(StrCat(source, ": a YAML inventory is a map of groups"));
    }
    for (const auto& group : root) {
      RETURN_IF_ERROR(WalkYamlGroup(group.second, group.first.as<std::string>(), &inv, 0));
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(StrCat(source, ":", e.mark.line + 1, ": ", e.msg));
  }
  return inv;
}

// The hosts of `group` and, recursively, of its children.
void CollectGroup(const Inventory& inv, const std::string& group, std::set<std::string>* out,
                  int depth) {
  if (depth > 32) return;
  if (auto it = inv.group_hosts.find(group); it != inv.group_hosts.end()) {
    out->insert(it->second.begin(), it->second.end());
  }
  if (auto it = inv.group_children.find(group); it != inv.group_children.end()) {
    for (const std::string& child : it->second) CollectGroup(inv, child, out, depth + 1);
  }
}

}  // namespace

StatusOr<std::vector<HostPlan>> HostsFromDns(std::string_view name_port) {
  const size_t colon = name_port.rfind(':');
  const std::string name(name_port.substr(0, colon));
  const std::string port = colon == std::string_view::npos
                               ? std::to_string(common::kDefaultAgentPort)
                               : std::string(name_port.substr(colon + 1));
  if (name.empty() || name.find_first_of("[]/ ") != std::string::npos || port.empty() ||
      port.find_first_not_of("0123456789") != std::string::npos) {
    return absl::InvalidArgumentError(
        StrCat("--agents-dns '", name_port, "': expected NAME:PORT, such as stormark-agent:7420"));
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(name.c_str(), nullptr, &hints, &found);
  if (rc != 0) {
    return absl::NotFoundError(StrCat("--agents-dns ", name, ": ", gai_strerror(rc)));
  }
  std::set<std::string> v4, v6;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = "";
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr, text, sizeof(text));
      v4.insert(text);
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      v6.insert(text);
    }
  }
  freeaddrinfo(found);
  std::vector<HostPlan> hosts;
  for (const std::string& ip : v4)
    hosts.push_back({StrCat(ip, ":", port), StrCat(ip, ":", port), {}, "", name});
  for (const std::string& ip : v6) {
    hosts.push_back({StrCat("[", ip, "]:", port), StrCat("[", ip, "]:", port), {}, "", name});
  }
  return hosts;
}

StatusOr<std::vector<HostPlan>> HostsFromInventory(std::string_view text, std::string_view source) {
  // A YAML inventory is a map whose first key ends in ':' ("all:"); an INI one has
  // [groups] or bare host lines.
  std::string_view first = text;
  while (!first.empty()) {
    const size_t end = first.find('\n');
    std::string_view line = first.substr(0, end);
    const size_t start = line.find_first_not_of(" \t\r");
    if (start != std::string_view::npos && line[start] != '#' && line[start] != ';') {
      first = line.substr(start);
      break;
    }
    first = end == std::string_view::npos ? std::string_view() : first.substr(end + 1);
  }
  const bool yaml = first == "---" || (!first.empty() && first.front() != '[' &&
                                       first.find(':') != std::string_view::npos &&
                                       first.find('=') == std::string_view::npos);
  ASSIGN_OR_RETURN(Inventory inv, yaml ? ParseYamlInventory(text, source) : ParseIni(text, source));
  std::set<std::string> chosen;
  CollectGroup(inv, kInventoryGroup, &chosen, 0);
  const bool all = chosen.empty();
  std::vector<HostPlan> hosts;
  for (const InventoryHost& h : inv.hosts) {
    if (!all && chosen.count(h.name) == 0) continue;
    HostPlan host;
    host.name = h.name;
    host.tls_name = h.name;
    auto var = [&](const char* key) {
      auto it = h.vars.find(key);
      return it == h.vars.end() ? std::string() : it->second;
    };
    const std::string address = var("ansible_host").empty() ? h.name : var("ansible_host");
    const std::string port = var("stormark_port").empty()
                                 ? std::to_string(common::kDefaultAgentPort)
                                 : var("stormark_port");
    host.address = address.find(':') != std::string::npos && address.front() != '['
                       ? StrCat("[", address, "]:", port)
                       : StrCat(address, ":", port);
    host.target = var("stormark_target");
    if (Status ok = common::NormalizeAddress(host.address).status(); !ok.ok()) {
      return absl::InvalidArgumentError(
          StrCat(source, ":", h.line, ": host ", h.name, ": ", ok.message()));
    }
    hosts.push_back(std::move(host));
  }
  if (hosts.empty())
    return absl::InvalidArgumentError(StrCat(source, ": no hosts in the inventory"));
  return hosts;
}

StatusOr<std::vector<HostPlan>> GatherHosts(std::vector<HostPlan> hosts,
                                            const std::string& dns_name_port,
                                            const std::string& inventory_path) {
  if (!dns_name_port.empty()) {
    ASSIGN_OR_RETURN(std::vector<HostPlan> found, HostsFromDns(dns_name_port));
    hosts.insert(hosts.end(), found.begin(), found.end());
  }
  if (!inventory_path.empty()) {
    ASSIGN_OR_RETURN(std::vector<HostPlan> found, LoadInventory(inventory_path));
    hosts.insert(hosts.end(), found.begin(), found.end());
  }
  std::set<std::string> names;
  for (const HostPlan& host : hosts) {
    if (!names.insert(host.name).second) {
      return absl::InvalidArgumentError(StrCat(
          "host '", host.name, "' is given twice (by --agent, the plan, DNS or the inventory)"));
    }
  }
  return hosts;
}

StatusOr<std::vector<HostPlan>> LoadInventory(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, common::ReadTextFile(path, "inventory"));
  return HostsFromInventory(text, path);
}

}  // namespace stormark::controller
