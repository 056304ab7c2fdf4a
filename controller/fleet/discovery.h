// Where the agents of a run come from besides --agent: a DNS name that resolves to many
// addresses (a Kubernetes headless Service), and an Ansible inventory (the one that deployed
// them). Each gives HostPlans with the name the agent's TLS certificate must hold.
#ifndef STORMARK_CONTROLLER_FLEET_DISCOVERY_H_
#define STORMARK_CONTROLLER_FLEET_DISCOVERY_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/plan/plan.h"

namespace stormark::controller {

// Every address "NAME:PORT" resolves to (IPv4 and IPv6, each once, sorted), one host each,
// named "ADDRESS:PORT". Under TLS the agents' certificate must hold NAME (issue it with
// --dns NAME). NOT_FOUND when the name does not resolve.
common::StatusOr<std::vector<HostPlan>> HostsFromDns(std::string_view name_port);

// The hosts of an Ansible inventory, INI or YAML (told apart by content): those of the group
// `stormark_agents` (with its children) when the inventory has one, else every host. Per host,
// `ansible_host` is the address (default: the inventory name), `stormark_port` the port
// (default 7420), `stormark_target` the default target; the inventory name is the host's
// name and its TLS name. Errors name the file and line.
common::StatusOr<std::vector<HostPlan>> HostsFromInventory(std::string_view text,
                                                           std::string_view source);
common::StatusOr<std::vector<HostPlan>> LoadInventory(const std::string& path);

// `hosts`, then the hosts `dns_name_port` resolves to, then those of the inventory file (each
// source optional). INVALID_ARGUMENT when two hosts share a name.
common::StatusOr<std::vector<HostPlan>> GatherHosts(std::vector<HostPlan> hosts,
                                                    const std::string& dns_name_port,
                                                    const std::string& inventory_path);

// The group HostsFromInventory prefers.
inline constexpr char kInventoryGroup[] = "stormark_agents";

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_DISCOVERY_H_
