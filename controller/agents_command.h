// `stormark agents`: the inventory of a fleet, one block per agent.
#ifndef STORMARK_CONTROLLER_AGENTS_COMMAND_H_
#define STORMARK_CONTROLLER_AGENTS_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace stormark::controller {

// Prints each agent's facts. Returns 0 when every agent answered, 1 otherwise, 2 for a bad
// address.
int AgentsCommand(const std::vector<std::string>& agents, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_AGENTS_COMMAND_H_
