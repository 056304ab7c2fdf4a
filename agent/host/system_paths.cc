#include "agent/host/system_paths.h"

#include <fstream>

#include "common/strings.h"

namespace stormark::agent {

std::optional<std::string> ReadSysfsLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return std::string(common::Trim(line));
}

}  // namespace stormark::agent
