// The `iscsi:` target kind: a LUN of an iSCSI target, reached with the agent's own user-space
// initiator (libiscsi; agent/targets/net/net_target.h).
//
//   lun0: {iscsi: iscsi://10.0.0.6:3260/iqn.2003-01.org.example:disk1/0, disposable: true,
//          chap: {user: bench, password_file: /etc/stormark/chap.secret}}  # initiator: IQN
//   # size, io_timeout, connect_timeout
#ifndef STORMARK_AGENT_TARGETS_ISCSI_ISCSI_KIND_H_
#define STORMARK_AGENT_TARGETS_ISCSI_ISCSI_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& IscsiTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_ISCSI_ISCSI_KIND_H_
