// The plan keys that say which agents to drive and how to reach them: hosts (or agents),
// tls, agents_dns and inventory.
#include "controller/plan/plan_yaml.h"

#include <string>
#include <utility>
#include <vector>

#include "common/spec_check.h"
#include "common/strings.h"
#include "yaml-cpp/yaml.h"

namespace stormark::controller::plan_yaml {

using common::Status;
using common::StatusOr;
using common::StrCat;

namespace {

StatusOr<std::vector<std::pair<std::string, std::string>>> ParseLabels(const YAML::Node& node,
                                                                       std::string_view source,
                                                                       std::string_view host) {
  std::vector<std::pair<std::string, std::string>> labels;
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(),
                   StrCat("host '", host, "': 'labels' must be a map such as {transport: aoe}"));
  }
  for (const auto& label : node) {
    if (!label.second.IsScalar()) {
      return ErrorAt(source, label.second.Mark(),
                     StrCat("host '", host, "': label '", ScalarText(label.first),
                            "' must be a single value"));
    }
    labels.emplace_back(ScalarText(label.first), ScalarText(label.second));
  }
  return labels;
}

}  // namespace

StatusOr<HostPlan> ParseHost(const YAML::Node& node, std::string_view source) {
  HostPlan host;
  if (node.IsScalar()) {
    host.name = host.address = ScalarText(node);
    return host;
  }
  if (!node.IsMap()) {
    return ErrorAt(source, node.Mark(),
                   "each host must be a map such as {name: db1, address: db1:7420}");
  }
  for (const auto& field : node) {
    const std::string key = ScalarText(field.first);
    if (key != "name" && key != "address" && key != "labels" && key != "target" &&
        key != "tls_name") {
      return ErrorAt(source, field.first.Mark(),
                     StrCat("unknown host field '", key,
                            "' (known: name, address, target, labels, tls_name)"));
    }
    if (key != "labels" && !field.second.IsScalar()) {
      return ErrorAt(source, field.second.Mark(),
                     StrCat("host '", key, "' must be a single value"));
    }
  }
  if (!node["address"]) return ErrorAt(source, node.Mark(), "a host needs 'address: HOST:PORT'");
  host.address = ScalarText(node["address"]);
  host.name = node["name"] ? ScalarText(node["name"]) : host.address;
  if (host.name.empty() || host.name.size() > 64) {
    return ErrorAt(source, node["name"].Mark(), "a host name must be 1-64 characters");
  }
  if (const YAML::Node target = node["target"]) {
    host.target = ScalarText(target);
    if (!common::IsValidName(host.target)) {
      return ErrorAt(source, target.Mark(),
                     StrCat("host '", host.name, "': bad target name '", host.target, "'"));
    }
  }
  if (const YAML::Node labels = node["labels"]) {
    ASSIGN_OR_RETURN(host.labels, ParseLabels(labels, source, host.name));
  }
  if (const YAML::Node tls_name = node["tls_name"]) host.tls_name = ScalarText(tls_name);
  return host;
}

// The keys that say how to reach and find the agents: tls, agents_dns, inventory.
Status ParseFleetAccess(const YAML::Node& root, std::string_view source, Plan* plan) {
  if (const YAML::Node tls = root["tls"]) {
    if (!tls.IsMap()) return ErrorAt(source, tls.Mark(), "'tls' must be a map {ca, cert, key}");
    for (const auto& field : tls) {
      const std::string key = ScalarText(field.first);
      std::string* slot = key == "ca"     ? &plan->tls.ca
                          : key == "cert" ? &plan->tls.cert
                          : key == "key"  ? &plan->tls.key
                                          : nullptr;
      if (slot == nullptr || !field.second.IsScalar()) {
        return ErrorAt(source, field.first.Mark(),
                       StrCat("'tls.", key, "': expected ca, cert or key with a file path"));
      }
      *slot = RelativeToPlan(source, ScalarText(field.second));
    }
  }
  for (auto [key, slot] :
       {std::pair{"agents_dns", &plan->agents_dns}, std::pair{"inventory", &plan->inventory}}) {
    const YAML::Node node = root[key];
    if (!node) continue;
    if (!node.IsScalar() || ScalarText(node).empty()) {
      return ErrorAt(source, node.Mark(), StrCat("'", key, "' must be a single value"));
    }
    *slot = ScalarText(node);
  }
  if (!plan->inventory.empty()) plan->inventory = RelativeToPlan(source, plan->inventory);
  return absl::OkStatus();
}

}  // namespace stormark::controller::plan_yaml
