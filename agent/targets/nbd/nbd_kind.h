// The `nbd:` target kind: an NBD export, reached with the agent's own user-space client
// (libnbd; agent/targets/net/net_target.h).
//
//   export1: {nbd: nbds://10.0.0.5:10809/scratch, disposable: true,
//             tls: {certificates: /etc/stormark/nbd-pki}}   # or {psk_file: PATH, username: NAME}
//   # also nbd://HOST[:PORT]/EXPORT and nbd+unix:///EXPORT?socket=PATH; size, io_timeout,
//   # connect_timeout
#ifndef STORMARK_AGENT_TARGETS_NBD_NBD_KIND_H_
#define STORMARK_AGENT_TARGETS_NBD_NBD_KIND_H_

#include "agent/targets/target_kind.h"

namespace stormark::agent {

const TargetKind& NbdTargetKind();

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_NBD_NBD_KIND_H_
