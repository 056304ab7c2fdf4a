// A user-space iSCSI initiator (libiscsi): one LUN as a Device. READ(16), WRITE(16) and
// SYNCHRONIZE CACHE(16); the size and block size come from READ CAPACITY(16).
//
// Every queue logs in a session of its own (as iscsi-perf opens one per run), so queues never
// share a socket or a lock; the blocking Execute uses one more session, opened when first
// needed and again after it was lost. CHAP credentials come from the agent's config only and
// never appear in Describe(), errors or results. Automatic reconnection is off: a session
// that breaks fails its requests at once, and a target that stops answering fails them after
// NetOptions::timeout_nanos.
//
// Offsets and lengths must be whole blocks (caps().alignment); others fail with EINVAL.
// Thread-safe as Device says.
#ifndef STORMARK_AGENT_DEVICES_ISCSI_DEVICE_H_
#define STORMARK_AGENT_DEVICES_ISCSI_DEVICE_H_

#include <memory>
#include <string>

#include "agent/devices/net_device.h"
#include "agent/devices/net_uri.h"

namespace stormark::agent {

struct IscsiChapSettings {
  std::string user;  // Empty: no CHAP.
  std::string password;
};

struct IscsiDeviceOptions {
  std::string uri;
  IscsiChapSettings chap;
  // The initiator's IQN; empty for stormark's default.
  std::string initiator;
  bool writable = false;
  // The bytes to use from the start of the LUN; 0 means all of it.
  uint64_t size = 0;
  NetOptions net;
  // TCP connection and login take at most this long.
  int64_t connect_timeout_nanos = 10'000'000'000;
};

// The initiator name used when the config gives none.
inline constexpr char kDefaultInitiator[] = "iqn.2024-01.org.stormark:initiator";

class IscsiConnection;
struct IscsiLibrary;

class IscsiDevice final : public NetDevice {
 public:
  // Logs in once to read the capacity. Errors name the URI and what failed (connect, login,
  // READ CAPACITY), never the credentials.
  static common::StatusOr<std::unique_ptr<IscsiDevice>> Open(const IscsiDeviceOptions& options);
  ~IscsiDevice() override;

  DeviceCaps caps() const override;
  std::string Describe() const override;

 private:
  IscsiDevice(IscsiDeviceOptions options, IscsiUri uri, std::shared_ptr<const IscsiLibrary> iscsi);
  common::StatusOr<std::unique_ptr<NetConnection>> Connect() override;
  common::StatusOr<std::unique_ptr<IscsiConnection>> ConnectIscsi();

  const IscsiDeviceOptions options_;
  const IscsiUri uri_;
  const std::shared_ptr<const IscsiLibrary> iscsi_;  // libiscsi, loaded by Open.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_ISCSI_DEVICE_H_
