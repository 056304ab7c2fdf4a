#include "agent/devices/iscsi_device.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include "agent/devices/iscsi_library.h"
#include "common/strings.h"

namespace stormark::agent {

// One logged-in session. Completions arrive through libiscsi's callbacks while Service runs
// iscsi_service.
class IscsiConnection final : public NetConnection {
 public:
  IscsiConnection(std::shared_ptr<const IscsiLibrary> iscsi, iscsi_context* context, int lun,
                  bool writable, std::string what)
      : iscsi_(std::move(iscsi)),
        context_(context),
        lun_(lun),
        writable_(writable),
        what_(std::move(what)) {}
  // Destroying the context cancels every task in flight: their callbacks run inside
  // iscsi_destroy_context, while this object is still whole.
  ~IscsiConnection() override { iscsi_->destroy_context(context_); }

  void set_block_size(uint32_t block_size) { block_size_ = block_size; }

  // Connects and logs in, waiting at most until `deadline` (NetNowNanos).
  common::Status Login(const std::string& portal, int64_t deadline,
                       const std::atomic<bool>* cancelled) {
    if (iscsi_->full_connect_async(context_, portal.c_str(), lun_, &IscsiConnection::OnLogin,
                                   this) != 0) {
      return Error("cannot connect to");
    }
    RETURN_IF_ERROR(WaitFor(login_done_, deadline, cancelled, "logging in to"));
    if (login_status_ != SCSI_STATUS_GOOD) return Error("cannot log in to");
    return absl::OkStatus();
  }

  // READ CAPACITY(16): the LUN's size in bytes and its logical block size.
  common::Status ReadCapacity(int64_t deadline, const std::atomic<bool>* cancelled, uint64_t* size,
                              uint32_t* block_size) {
    struct Capacity {
      const IscsiLibrary* iscsi;
      bool done = false;
      int status = SCSI_STATUS_ERROR;
      uint64_t blocks = 0;
      uint32_t block_length = 0;
    } capacity{.iscsi = iscsi_.get()};
    auto callback = [](iscsi_context*, int status, void* data, void* user) {
      auto* c = static_cast<Capacity*>(user);
      auto* task = static_cast<scsi_task*>(data);
      c->done = true;
      c->status = status;
      if (status == SCSI_STATUS_GOOD) {
        const auto* rc16 =
            static_cast<scsi_readcapacity16*>(c->iscsi->scsi_datain_unmarshall(task));
        if (rc16 != nullptr) {
          c->blocks = rc16->returned_lba + 1;
          c->block_length = rc16->block_length;
        } else {
          c->status = SCSI_STATUS_ERROR;
        }
      }
      if (task != nullptr) c->iscsi->scsi_free_scsi_task(task);
    };
    if (iscsi_->readcapacity16_task(context_, lun_, callback, &capacity) == nullptr) {
      return Error("READ CAPACITY(16) failed on");
    }
    RETURN_IF_ERROR(WaitFor(capacity.done, deadline, cancelled, "READ CAPACITY(16) on"));
    if (capacity.status != SCSI_STATUS_GOOD || capacity.block_length == 0) {
      return absl::FailedPreconditionError(
          common::StrCat("READ CAPACITY(16) failed on ", what_, ": ", iscsi_->get_error(context_)));
    }
    *size = capacity.blocks * capacity.block_length;
    *block_size = capacity.block_length;
    return absl::OkStatus();
  }

  common::Status Start(const IoRequest& request) override {
    if (request.op == IoOp::kWrite && !writable_) {
      completed_.push_back({request.tag, -EBADF});
      return absl::OkStatus();
    }
    if (request.offset % block_size_ != 0 || request.length % block_size_ != 0) {
      completed_.push_back({request.tag, -EINVAL});
      return absl::OkStatus();
    }
    auto* pending = new Pending{this,
                                request.tag,
                                request.length,
                                {request.buffer, request.length},
                                request.op == IoOp::kRead && request.length >= kLargeRead};
    if (pending->large) ++large_reads_;
    const uint64_t lba = request.offset / block_size_;
    const int block = static_cast<int>(block_size_);
    scsi_task* task = nullptr;
    switch (request.op) {
      case IoOp::kRead:
        task = iscsi_->read16_iov_task(context_, lun_, lba, request.length, block, 0, 0, 0, 0, 0,
                                       &IscsiConnection::OnComplete, pending, &pending->iov, 1);
        break;
      case IoOp::kWrite:
        task =
            iscsi_->write16_iov_task(context_, lun_, lba, nullptr, request.length, block, 0, 0, 0,
                                     0, 0, &IscsiConnection::OnComplete, pending, &pending->iov, 1);
        break;
      case IoOp::kFsync:
      case IoOp::kFdatasync:
        pending->length = 0;
        task = iscsi_->synchronizecache16_task(context_, lun_, 0, 0, 0, 0,
                                               &IscsiConnection::OnComplete, pending);
        break;
    }
    if (task != nullptr) return absl::OkStatus();
    if (pending->large) --large_reads_;
    delete pending;
    return Error("lost the session with");
  }

  common::Status Service(int timeout_ms, std::vector<IoCompletion>* done) override {
    if (!completed_.empty()) timeout_ms = 0;
    common::Status status = Poll(timeout_ms);
    if (status.ok() && lost_) status = Error("lost the session with");
    done->insert(done->end(), completed_.begin(), completed_.end());
    completed_.clear();
    return status;
  }

 private:
  struct Pending {
    IscsiConnection* connection;
    uint64_t tag;
    uint32_t length;
    scsi_iovec iov;
    bool large;  // Counted in large_reads_.
  };

  static constexpr uint32_t kLargeRead = 64 * 1024;

  static void OnLogin(iscsi_context*, int status, void*, void* user) {
    auto* connection = static_cast<IscsiConnection*>(user);
    // libiscsi calls again when the session ends; only the first call is the login's answer.
    if (connection->login_done_) return;
    connection->login_done_ = true;
    connection->login_status_ = status;
  }

  static void OnComplete(iscsi_context* context, int status, void* data, void* user) {
    auto* pending = static_cast<Pending*>(user);
    // libiscsi cancels the tasks of a session that broke (this code never cancels one while
    // the session lives): that is the session's error, not the request's.
    if (status == SCSI_STATUS_CANCELLED ||
        (status != SCSI_STATUS_GOOD && !pending->connection->iscsi_->is_logged_in(context))) {
      pending->connection->lost_ = true;
    }
    int64_t result = pending->length;
    if (status == SCSI_STATUS_TIMEOUT) {
      result = -ETIMEDOUT;
    } else if (status == SCSI_STATUS_CANCELLED) {
      result = -ECANCELED;
    } else if (status != SCSI_STATUS_GOOD) {
      result = -EIO;  // CHECK CONDITION and the rest: the target refused or failed it.
    }
    pending->connection->completed_.push_back({pending->tag, result});
    if (pending->large) --pending->connection->large_reads_;
    if (data != nullptr) {
      pending->connection->iscsi_->scsi_free_scsi_task(static_cast<scsi_task*>(data));
    }
    delete pending;
  }

  common::Status Error(std::string_view what) const {
    return absl::FailedPreconditionError(
        common::StrCat(what, " ", what_, ": ", iscsi_->get_error(context_)));
  }

  // One wait on the socket and one round of libiscsi's processing (which also expires tasks).
  common::Status Poll(int timeout_ms) {
    pollfd pfd{.fd = iscsi_->get_fd(context_),
               .events = static_cast<short>(iscsi_->which_events(context_)),
               .revents = 0};
    if (pfd.events == 0 || pfd.fd < 0) {
      // libiscsi waits between reconnection attempts; with those off, the session is gone.
      return Error("lost the session with");
    }
    const int r = poll(&pfd, 1, timeout_ms);
    if (r < 0 && errno != EINTR) return common::ErrnoError("poll", errno);
    if (iscsi_->service(context_, r > 0 ? pfd.revents : 0) < 0) {
      return Error("lost the session with");
    }
    if (r > 0 && (pfd.revents & POLLIN) != 0 && large_reads_ > 0) {
      // Acknowledge at once what was read: a target that sends with Nagle's algorithm (tgtd)
      // otherwise holds the tail of a large Data-In until our delayed ACK, up to 40 ms later.
      // Linux clears this flag as it acknowledges, so it is set after every read; only while
      // large reads are in flight, as the extra ACKs cost a busy target for small ones.
      const int on = 1;
      setsockopt(pfd.fd, IPPROTO_TCP, TCP_QUICKACK, &on, sizeof(on));
    }
    return absl::OkStatus();
  }

  common::Status WaitFor(const bool& flag, int64_t deadline, const std::atomic<bool>* cancelled,
                         std::string_view doing) {
    while (!flag) {
      if (cancelled != nullptr && cancelled->load()) {
        return absl::CancelledError(common::StrCat("cancelled while ", doing, " ", what_));
      }
      if (NetNowNanos() > deadline) {
        return absl::DeadlineExceededError(common::StrCat("timed out ", doing, " ", what_));
      }
      RETURN_IF_ERROR(Poll(100));
    }
    return absl::OkStatus();
  }

  const std::shared_ptr<const IscsiLibrary> iscsi_;
  iscsi_context* const context_;
  const int lun_;
  const bool writable_;
  const std::string what_;
  uint32_t block_size_ = 512;
  bool lost_ = false;
  int large_reads_ = 0;  // Reads of kLargeRead bytes or more in flight.
  bool login_done_ = false;
  int login_status_ = SCSI_STATUS_ERROR;
  std::vector<IoCompletion> completed_;
};

IscsiDevice::IscsiDevice(IscsiDeviceOptions options, IscsiUri uri,
                         std::shared_ptr<const IscsiLibrary> iscsi)
    : NetDevice(options.net, common::StrCat("iSCSI target ", options.uri), "iscsi"),
      options_(std::move(options)),
      uri_(std::move(uri)),
      iscsi_(std::move(iscsi)) {}

IscsiDevice::~IscsiDevice() = default;

common::StatusOr<std::unique_ptr<NetConnection>> IscsiDevice::Connect() {
  ASSIGN_OR_RETURN(auto connection, ConnectIscsi());
  return std::unique_ptr<NetConnection>(std::move(connection));
}

common::StatusOr<std::unique_ptr<IscsiConnection>> IscsiDevice::ConnectIscsi() {
  const std::string what = common::StrCat("iSCSI target ", options_.uri);
  const std::string initiator =
      options_.initiator.empty() ? std::string(kDefaultInitiator) : options_.initiator;
  iscsi_context* context = iscsi_->create_context(initiator.c_str());
  if (context == nullptr) {
    return absl::InternalError(common::StrCat("libiscsi: cannot create a context for ", what));
  }
  auto connection =
      std::make_unique<IscsiConnection>(iscsi_, context, uri_.lun, options_.writable, what);
  connection->set_block_size(block_size_);
  iscsi_->set_targetname(context, uri_.iqn.c_str());
  iscsi_->set_session_type(context, ISCSI_SESSION_NORMAL);
  iscsi_->set_header_digest(context, ISCSI_HEADER_DIGEST_NONE);
  iscsi_->set_noautoreconnect(context, 1);
  if (!options_.chap.user.empty() &&
      iscsi_->set_initiator_username_pwd(context, options_.chap.user.c_str(),
                                         options_.chap.password.c_str()) != 0) {
    return absl::InvalidArgumentError(
        common::StrCat("CHAP settings for ", what, ": ", iscsi_->get_error(context)));
  }
  RETURN_IF_ERROR(connection->Login(uri_.Portal(), NetNowNanos() + options_.connect_timeout_nanos,
                                    options_.net.cancelled));
  stats_.connections.fetch_add(1);
  return connection;
}

common::StatusOr<std::unique_ptr<IscsiDevice>> IscsiDevice::Open(
    const IscsiDeviceOptions& options) {
  ASSIGN_OR_RETURN(IscsiUri uri, ParseIscsiUri(options.uri));
  ASSIGN_OR_RETURN(std::shared_ptr<const IscsiLibrary> iscsi, IscsiLibrary::Load());
  std::unique_ptr<IscsiDevice> device(new IscsiDevice(options, std::move(uri), std::move(iscsi)));
  ASSIGN_OR_RETURN(auto connection, device->ConnectIscsi());
  uint64_t size = 0;
  uint32_t block_size = 0;
  RETURN_IF_ERROR(connection->ReadCapacity(NetNowNanos() + options.connect_timeout_nanos,
                                           options.net.cancelled, &size, &block_size));
  if (options.size > size) {
    return absl::OutOfRangeError(common::StrCat("iSCSI LUN ", options.uri, " holds ", size,
                                                " bytes, less than the configured size ",
                                                options.size));
  }
  device->size_ = options.size != 0 ? options.size / block_size * block_size : size;
  device->block_size_ = block_size;
  connection->set_block_size(block_size);
  device->set_main(std::move(connection));
  return device;
}

DeviceCaps IscsiDevice::caps() const {
  return {.writable = options_.writable, .direct = false, .alignment = block_size_, .async = true};
}

std::string IscsiDevice::Describe() const {
  return common::StrCat(options_.uri, " (iSCSI", options_.chap.user.empty() ? "" : ", CHAP", ")");
}

}  // namespace stormark::agent
