// The `dir:` target kind: a directory on a mounted filesystem, in which each phase makes its
// files in a directory of its own (dir_target.h). It has no device: the file workloads run on
// it, and stream and randio on a file they lay out in it.
//
//   scratch: {dir: /srv/bench}        # an existing directory, owned as StrictModes wants
//   nfs: {dir: /mnt/nfs, strict_modes: false}
#ifndef STORMARK_AGENT_TARGETS_DIR_DIR_KIND_H_
#define STORMARK_AGENT_TARGETS_DIR_DIR_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& DirTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_DIR_DIR_KIND_H_
