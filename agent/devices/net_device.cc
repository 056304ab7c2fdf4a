#include "agent/devices/net_device.h"

#include <cerrno>

namespace stormark::agent {

void NetDevice::set_main(std::unique_ptr<NetConnection> connection) {
  absl::MutexLock lock(&mu_);
  main_ = std::move(connection);
}

int64_t NetDevice::Execute(const IoRequest& request) {
  absl::MutexLock lock(&mu_);
  if (main_ == nullptr) {
    auto connection = Connect();
    if (!connection.ok()) return -ECONNREFUSED;
    main_ = std::move(*connection);
  }
  bool lost = false;
  const int64_t result = ExecuteOnConnection(*main_, request, net_, stats_, &lost);
  if (lost) main_.reset();
  return result;
}

common::StatusOr<std::unique_ptr<IoQueue>> NetDevice::OpenQueue(uint32_t depth) {
  ASSIGN_OR_RETURN(auto connection, Connect());
  return std::unique_ptr<IoQueue>(new NetQueue(std::move(connection), depth, net_, what_, stats_));
}

}  // namespace stormark::agent
