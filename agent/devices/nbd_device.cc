#include "agent/devices/nbd_device.h"

#include <algorithm>
#include <cerrno>

#include "agent/devices/nbd_library.h"
#include "common/strings.h"

namespace stormark::agent {

// One libnbd handle, connected and ready. Completions arrive through libnbd's completion
// callbacks while Service polls.
class NbdConnection final : public NetConnection {
 public:
  NbdConnection(std::shared_ptr<const NbdLibrary> nbd, nbd_handle* handle, bool writable,
                std::string what)
      : nbd_(std::move(nbd)), handle_(handle), writable_(writable), what_(std::move(what)) {}
  // Closing the handle ends every command in flight (their callbacks run inside nbd_close,
  // while this object is still whole).
  ~NbdConnection() override { nbd_->close(handle_); }

  nbd_handle* handle() const { return handle_; }

  common::Status Start(const IoRequest& request) override {
    if (request.op == IoOp::kWrite && !writable_) {
      completed_.push_back({request.tag, -EBADF});
      return absl::OkStatus();
    }
    auto* pending = new Pending{this, request.tag, request.length};
    const nbd_completion_callback callback{.callback = &NbdConnection::OnComplete,
                                           .user_data = pending,
                                           .free = &NbdConnection::FreePending};
    int64_t cookie = -1;
    switch (request.op) {
      case IoOp::kRead:
        cookie =
            nbd_->aio_pread(handle_, request.buffer, request.length, request.offset, callback, 0);
        break;
      case IoOp::kWrite:
        cookie =
            nbd_->aio_pwrite(handle_, request.buffer, request.length, request.offset, callback, 0);
        break;
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        pending->length = 0;
        cookie = nbd_->aio_flush(handle_, callback, 0);
        break;
    }
    if (cookie >= 0) return absl::OkStatus();
    // libnbd has freed `pending`. A refused request (out of bounds, flush not supported) on a
    // live connection fails alone; a dead connection fails the queue.
    const int err = nbd_->get_errno();
    if (nbd_->aio_is_ready(handle_) || nbd_->aio_is_processing(handle_)) {
      completed_.push_back({request.tag, -(err != 0 ? err : EIO)});
      return absl::OkStatus();
    }
    return Lost();
  }

  common::Status Service(int timeout_ms, std::vector<IoCompletion>* done) override {
    if (!completed_.empty()) timeout_ms = 0;
    if (nbd_->aio_in_flight(handle_) > 0 || timeout_ms > 0) {
      if (nbd_->aio_is_dead(handle_) || nbd_->aio_is_closed(handle_)) return Flush(done, Lost());
      if (nbd_->poll(handle_, timeout_ms) == -1) return Flush(done, Lost());
    }
    // A connection that died in that poll retires its commands with ENOTCONN: the phase is
    // told why, once, rather than "Transport endpoint is not connected" for a read.
    if (nbd_->aio_is_dead(handle_) || nbd_->aio_is_closed(handle_)) return Flush(done, Lost());
    return Flush(done, absl::OkStatus());
  }

 private:
  struct Pending {
    NbdConnection* connection;
    uint64_t tag;
    uint32_t length;
  };

  static int OnComplete(void* user_data, int* error) {
    const auto* pending = static_cast<Pending*>(user_data);
    pending->connection->completed_.push_back(
        {pending->tag, *error != 0 ? -int64_t{*error} : int64_t{pending->length}});
    return 1;  // Retire the command: nobody asks for it by cookie.
  }
  static void FreePending(void* user_data) { delete static_cast<Pending*>(user_data); }

  common::Status Lost() const {
    const char* error = nbd_->get_error();
    return absl::FailedPreconditionError(
        common::StrCat("lost the connection to ", what_, ": ",
                       error != nullptr && *error != '\0' ? error : "the server closed it"));
  }

  common::Status Flush(std::vector<IoCompletion>* done, common::Status status) {
    done->insert(done->end(), completed_.begin(), completed_.end());
    completed_.clear();
    return status;
  }

  const std::shared_ptr<const NbdLibrary> nbd_;
  nbd_handle* const handle_;
  const bool writable_;
  const std::string what_;
  std::vector<IoCompletion> completed_;
};

NbdDevice::NbdDevice(NbdDeviceOptions options, std::shared_ptr<const NbdLibrary> nbd)
    : NetDevice(options.net, common::StrCat("NBD server ", options.uri), "nbd"),
      options_(std::move(options)),
      nbd_(std::move(nbd)) {}

NbdDevice::~NbdDevice() = default;

common::StatusOr<std::unique_ptr<NetConnection>> NbdDevice::Connect() {
  ASSIGN_OR_RETURN(auto connection, ConnectNbd());
  return std::unique_ptr<NetConnection>(std::move(connection));
}

common::StatusOr<std::unique_ptr<NbdConnection>> NbdDevice::ConnectNbd() {
  const std::string what = common::StrCat("NBD server ", options_.uri);
  nbd_handle* handle = nbd_->create();
  if (handle == nullptr) {
    return absl::InternalError(common::StrCat("libnbd: ", nbd_->get_error()));
  }
  auto connection = std::make_unique<NbdConnection>(nbd_, handle, options_.writable, what);
  auto fail = [&](std::string_view step) {
    const char* error = nbd_->get_error();
    return absl::FailedPreconditionError(common::StrCat(
        "cannot connect to ", what, ": ", step, error != nullptr ? error : "unknown error"));
  };
  // Reads land in our own buffers: libnbd need not clear them first.
  if (nbd_->set_pread_initialize(handle, false) == -1) return fail("");
  const NbdTlsSettings& tls = options_.tls;
  if (!tls.certificates.empty() &&
      nbd_->set_tls_certificates(handle, tls.certificates.c_str()) == -1) {
    return fail("TLS certificates: ");
  }
  if (!tls.psk_file.empty() && nbd_->set_tls_psk_file(handle, tls.psk_file.c_str()) == -1) {
    return fail("TLS PSK file: ");
  }
  if (!tls.username.empty() && nbd_->set_tls_username(handle, tls.username.c_str()) == -1) {
    return fail("TLS username: ");
  }
  if (nbd_->aio_connect_uri(handle, options_.uri.c_str()) == -1) return fail("");
  const int64_t deadline = NetNowNanos() + options_.connect_timeout_nanos;
  while (nbd_->aio_is_connecting(handle)) {
    if (options_.net.cancelled != nullptr && options_.net.cancelled->load()) {
      return absl::CancelledError(common::StrCat("cancelled while connecting to ", what));
    }
    if (NetNowNanos() > deadline) {
      return absl::DeadlineExceededError(
          common::StrCat("cannot connect to ", what, ": no answer within ",
                         options_.connect_timeout_nanos / 1'000'000'000, " s"));
    }
    if (nbd_->poll(handle, 100) == -1) return fail("");
  }
  if (!nbd_->aio_is_ready(handle)) return fail("");
  stats_.connections.fetch_add(1);
  return connection;
}

common::StatusOr<std::unique_ptr<NbdDevice>> NbdDevice::Open(const NbdDeviceOptions& options) {
  ASSIGN_OR_RETURN(std::shared_ptr<const NbdLibrary> library, NbdLibrary::Load());
  std::unique_ptr<NbdDevice> device(new NbdDevice(options, library));
  ASSIGN_OR_RETURN(auto connection, device->ConnectNbd());
  nbd_handle* handle = connection->handle();
  const int64_t size = library->get_size(handle);
  if (size < 0) {
    return absl::FailedPreconditionError(common::StrCat(
        "NBD server ", options.uri, ": cannot read the export size: ", library->get_error()));
  }
  if (options.size > static_cast<uint64_t>(size)) {
    return absl::OutOfRangeError(common::StrCat("NBD export ", options.uri, " holds ", size,
                                                " bytes, less than the configured size ",
                                                options.size));
  }
  device->size_ = options.size != 0 ? options.size : static_cast<uint64_t>(size);
  const int64_t minimum = library->get_block_size(handle, LIBNBD_SIZE_MINIMUM);
  if (minimum > 0) {
    device->alignment_ = static_cast<uint32_t>(minimum);
    device->block_size_ = std::max<uint32_t>(512, device->alignment_);
  }
  device->multi_conn_ = library->can_multi_conn(handle) == 1;
  device->tls_negotiated_ = library->get_tls_negotiated(handle) == 1;
  if (options.writable && library->is_read_only(handle) == 1) {
    return absl::PermissionDeniedError(
        common::StrCat("NBD export ", options.uri, " is read-only on the server; cannot write"));
  }
  device->set_main(std::move(connection));
  return device;
}

DeviceCaps NbdDevice::caps() const {
  return {.writable = options_.writable,
          .direct = false,
          .alignment = alignment_,
          .async = true,
          .coherent_queues = multi_conn_};
}

std::string NbdDevice::Describe() const {
  return common::StrCat(options_.uri, " (NBD", tls_negotiated_ ? ", TLS" : "", ")");
}

std::map<std::string, std::string> NbdDevice::Stats() const {
  auto stats = NetDevice::Stats();
  stats["nbd.multi_conn"] = multi_conn_ ? "yes" : "no";
  stats["nbd.tls"] = tls_negotiated_ ? "yes" : "no";
  return stats;
}

}  // namespace stormark::agent
