// The addresses of network block targets, as an agent's config names them:
//   nbd://HOST[:PORT]/EXPORT           NBD over TCP (port 10809 when not given)
//   nbds://HOST[:PORT]/EXPORT          the same with TLS
//   nbd+unix:///EXPORT?socket=PATH     NBD over a unix socket (nbds+unix: with TLS)
//   iscsi://HOST[:PORT]/IQN/LUN        an iSCSI LUN (port 3260 when not given)
// An empty EXPORT is the server's default export. Parts may be percent-encoded (%3A for ':').
//
// Credentials never go in a URI (it is shown in results and errors): a URI with a user part
// is refused, and TLS and CHAP settings come from the target's own config keys.
#ifndef STORMARK_AGENT_DEVICES_NET_URI_H_
#define STORMARK_AGENT_DEVICES_NET_URI_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

struct NbdUri {
  bool tls = false;
  // TCP: the host (without brackets for IPv6) and port; empty host for a unix socket.
  std::string host;
  uint16_t port = 10809;
  // A unix socket: its absolute path.
  std::string socket;
  std::string export_name;

  // "127.0.0.1:10809" or "unix socket /run/nbd.sock".
  std::string Endpoint() const;
};

struct IscsiUri {
  std::string host;
  uint16_t port = 3260;
  std::string iqn;
  int lun = 0;

  // "HOST:PORT" as libiscsi takes it ("[::1]:3260" for IPv6).
  std::string Portal() const;
};

// Parse a URI; INVALID_ARGUMENT says what is wrong with it and shows the accepted forms.
common::StatusOr<NbdUri> ParseNbdUri(std::string_view uri);
common::StatusOr<IscsiUri> ParseIscsiUri(std::string_view uri);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NET_URI_H_
