#include "agent/targets/target_caps.h"

#include "agent/targets/target_kind.h"

namespace stormark::agent {

TargetCaps CapsOf(const TargetConfig& target) {
  const TargetKind* kind = FindTargetKind(target.kind);
  return kind != nullptr ? kind->caps : TargetCaps();
}

}  // namespace stormark::agent
