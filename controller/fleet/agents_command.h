// `stormark agents`: the inventory of a fleet, one block per agent.
#ifndef STORMARK_CONTROLLER_FLEET_AGENTS_COMMAND_H_
#define STORMARK_CONTROLLER_FLEET_AGENTS_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

#include "common/tls.h"
#include "controller/plan/plan.h"

namespace stormark::controller {

// Prints each agent's facts. Returns 0 when every agent answered, 1 otherwise, 2 for a bad
// address.
// `tls` (--tls-*) given: mutual TLS to every agent.
int AgentsCommand(const std::vector<HostPlan>& hosts, const common::TlsFiles& tls, std::FILE* out,
                  std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_AGENTS_COMMAND_H_
