#include "agent/devices/device.h"

#include <cerrno>

#include "agent/devices/sync_queue.h"
#include "common/strings.h"

namespace stormark::agent {

const char* IoOpName(IoOp op) {
  switch (op) {
    case IoOp::kRead:
      return "read";
    case IoOp::kWrite:
      return "write";
    case IoOp::kFsync:
      return "fsync";
    case IoOp::kFdatasync:
      return "fdatasync";
  }
  return "unknown";
}

common::StatusOr<std::unique_ptr<IoQueue>> Device::OpenQueue(uint32_t depth) {
  return std::unique_ptr<IoQueue>(new SyncQueue(*this, depth));
}

common::Status Device::RequestError(const IoRequest& request, int64_t result) const {
  const bool flush = request.op == IoOp::kFsync || request.op == IoOp::kFdatasync;
  const std::string what =
      flush ? common::StrCat(IoOpName(request.op), " of ", Describe())
            : common::StrCat(IoOpName(request.op), " of ", request.length, " bytes at offset ",
                             request.offset, " on ", Describe());
  if (result < 0) return common::ErrnoError(what, static_cast<int>(-result));
  return absl::DataLossError(common::StrCat(what, ": transferred only ", result, " bytes"));
}

namespace {

common::Status Check(Device& device, const IoRequest& request) {
  const int64_t result = device.Execute(request);
  if (result == static_cast<int64_t>(request.length)) return absl::OkStatus();
  return device.RequestError(request, result);
}

}  // namespace

common::Status Device::ReadAt(uint64_t offset, size_t n, char* buf) {
  return Check(*this, {IoOp::kRead, offset, static_cast<uint32_t>(n), buf, 0});
}

common::Status Device::WriteAt(uint64_t offset, size_t n, const char* buf) {
  // Execute never writes into the buffer of a write request.
  return Check(*this, {IoOp::kWrite, offset, static_cast<uint32_t>(n), const_cast<char*>(buf), 0});
}

common::Status Device::Flush(bool data_only) {
  return Check(*this, {data_only ? IoOp::kFdatasync : IoOp::kFsync, 0, 0, nullptr, 0});
}

}  // namespace stormark::agent
