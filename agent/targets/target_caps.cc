#include "agent/targets/target_caps.h"

namespace stormark::agent {

TargetCaps CapsOf(const TargetConfig& target) {
  TargetCaps caps;
  if (target.kind == "dir") {
    caps.files = caps.local_path = caps.page_cache = true;
  } else if (target.kind == "block") {
    caps.device = caps.local_path = caps.page_cache = true;
  } else if (target.kind == "null") {
    caps.device = caps.discards = true;
  } else {
    caps.device = caps.remote = true;
  }
  return caps;
}

}  // namespace stormark::agent
