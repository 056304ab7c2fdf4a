// The one list of the target kinds' modules. A new kind adds its line here.
#include "agent/targets/aoe/aoe_kind.h"
#include "agent/targets/block/block_kind.h"
#include "agent/targets/dir/dir_kind.h"
#include "agent/targets/iscsi/iscsi_kind.h"
#include "agent/targets/nbd/nbd_kind.h"
#include "agent/targets/null/null_kind.h"
#include "agent/targets/target_kind.h"

namespace stormark::agent {

const std::vector<const TargetKind*>& TargetKinds() {
  static const std::vector<const TargetKind*> kinds = {
      &DirTargetKind(),  &BlockTargetKind(), &AoeTargetKind(),
      &NullTargetKind(), &NbdTargetKind(),   &IscsiTargetKind(),
  };
  return kinds;
}

}  // namespace stormark::agent
