// The `block:` target kind: a raw block device or a regular file of this host, used in place by
// the block workloads (block_target.h resolves and opens it).
//
//   disk1: {block: /dev/sdb, disposable: true}   # size: optional for a device
//   img: {block: /srv/disk.img, size: 4G}        # a file made (and filled) on first use
#ifndef STORMARK_AGENT_TARGETS_BLOCK_BLOCK_KIND_H_
#define STORMARK_AGENT_TARGETS_BLOCK_BLOCK_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& BlockTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_BLOCK_BLOCK_KIND_H_
