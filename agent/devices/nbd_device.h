// A user-space NBD client (libnbd): an NBD export as a Device, over TCP or a unix socket, with
// TLS (X.509 certificates or a PSK file) for nbds:// URIs.
//
// Every queue has a connection of its own, as fio's nbd engine opens one per job: requests of
// different jobs never wait for one another's lock or socket. Writes through one connection
// are seen by the others at once when the server says so (NBD_FLAG_CAN_MULTI_CONN, which
// nbdkit's memory and file plugins do); Stats() shows whether it does. The blocking Execute
// runs on one more connection, opened when first needed and again after it was lost.
//
// Thread-safe as Device says. A lost connection or a server that stops answering fails the
// requests on it within NetOptions::timeout_nanos; nothing waits longer.
#ifndef STORMARK_AGENT_DEVICES_NBD_DEVICE_H_
#define STORMARK_AGENT_DEVICES_NBD_DEVICE_H_

#include <memory>
#include <string>

#include "agent/devices/net_device.h"

namespace stormark::agent {

struct NbdTlsSettings {
  // A directory with ca-cert.pem (and client-cert.pem, client-key.pem for client
  // certificates), as libnbd and nbdkit name them.
  std::string certificates;
  // A PSK file in GnuTLS's format (psktool), and the user name to take from it.
  std::string psk_file;
  std::string username;
};

struct NbdDeviceOptions {
  std::string uri;
  NbdTlsSettings tls;
  bool writable = false;
  // The bytes to use from the start of the export; 0 means all of it.
  uint64_t size = 0;
  NetOptions net;
  // Connecting (TCP, TLS handshake, option negotiation) takes at most this long.
  int64_t connect_timeout_nanos = 10'000'000'000;
};

class NbdConnection;
struct NbdLibrary;

class NbdDevice final : public NetDevice {
 public:
  // Connects once to learn the export's size and flags. Errors name the URI (which never holds
  // a secret): "cannot connect to NBD server nbd://127.0.0.1:1/x: connect: Connection refused".
  static common::StatusOr<std::unique_ptr<NbdDevice>> Open(const NbdDeviceOptions& options);
  ~NbdDevice() override;

  DeviceCaps caps() const override;
  std::string Describe() const override;
  std::map<std::string, std::string> Stats() const override;

 private:
  NbdDevice(NbdDeviceOptions options, std::shared_ptr<const NbdLibrary> nbd);
  common::StatusOr<std::unique_ptr<NetConnection>> Connect() override;
  common::StatusOr<std::unique_ptr<NbdConnection>> ConnectNbd();

  const NbdDeviceOptions options_;
  const std::shared_ptr<const NbdLibrary> nbd_;  // libnbd, loaded by Open.
  uint32_t alignment_ = 1;
  bool multi_conn_ = false;
  bool tls_negotiated_ = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_NBD_DEVICE_H_
