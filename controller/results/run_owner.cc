#include "controller/results/run_owner.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace stormark::controller {
namespace {

std::string HostName() {
  utsname names{};
  return uname(&names) == 0 ? std::string(names.nodename) : std::string();
}

// Field 22 of /proc/PID/stat, or -1 when the process does not exist. The command name
// (field 2) is in parentheses and may hold spaces, so fields are counted after its ')'.
int64_t StartTicks(int64_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return -1;
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  // After ')': field 3 (state) is the first; field 22 is the 20th.
  for (int i = 3; i <= 22; ++i) {
    if (!(fields >> field)) return -1;
  }
  try {
    return std::stoll(field);
  } catch (...) {
    return -1;
  }
}

}  // namespace

RunOwner RunOwner::Self() {
  RunOwner owner;
  owner.host = HostName();
  owner.pid = getpid();
  owner.start_ticks = StartTicks(owner.pid);
  return owner;
}

bool RunOwner::Alive() const {
  if (host != HostName()) return true;
  return pid > 0 && StartTicks(pid) == start_ticks;
}

}  // namespace stormark::controller
