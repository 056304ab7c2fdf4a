#include "controller/workloads/help_command.h"

#include "common/log_text.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller {

int HelpWorkloadCommand(const std::string& name, bool markdown, FILE* out, FILE* err) {
  if (name.empty()) {
    std::fprintf(out, "workloads: %s\n(stormark help workload NAME prints one's options)\n",
                 WorkloadNames().c_str());
    return 0;
  }
  const WorkloadKind* kind = FindWorkloadKind(name);
  if (kind == nullptr) {
    std::fprintf(err, "stormark: help workload: unknown workload '%s' (known: %s)\n",
                 common::LogSafe(name).c_str(), WorkloadNames().c_str());
    return 2;
  }
  const std::string text = markdown ? kind->options().Markdown() : kind->options().HelpText();
  std::fputs(text.c_str(), out);
  return 0;
}

}  // namespace stormark::controller
