// The Device seam: where block I/O goes. A device is a range of bytes [0, size()) that can be
// read and written at an offset and flushed, either with blocking calls or through a queue of
// asynchronous requests of a chosen depth. Files, raw block devices, the null device, and
// (later) user-space NBD, iSCSI and AoE initiators implement it, so every block workload runs
// on every block target.
//
// Capabilities are declared up front (DeviceCaps), as fio's engines declare theirs: a workload
// checks them in Prepare, never discovers them in the middle of a run.
//
// Thread safety: the blocking calls (ReadAt, WriteAt, Flush) are safe for concurrent use from
// several threads. An IoQueue belongs to one thread; open one queue per worker.
#ifndef STORMARK_AGENT_DEVICES_DEVICE_H_
#define STORMARK_AGENT_DEVICES_DEVICE_H_

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace stormark::agent {

// A span of a device's (or a file's) bytes.
struct ByteRange {
  uint64_t begin = 0;
  uint64_t end = 0;  // Exclusive.

  bool operator==(const ByteRange&) const = default;
};

// What a device can do, known before anything runs.
struct DeviceCaps {
  // Writes are allowed (the device was opened for writing).
  bool writable = false;
  // Requests bypass the page cache (O_DIRECT): buffers, offsets and lengths must then be
  // multiples of `alignment`.
  bool direct = false;
  // Required alignment of buffers, offsets and lengths; 1 when there is none.
  uint32_t alignment = 1;
  // Requests really overlap in flight (io_uring, a network initiator); false when the
  // queue runs each request to completion inside Submit (psync), so a depth above 1 only
  // batches.
  bool async = false;
  // Every queue sees what the others wrote, and a flush on one makes every queue's completed
  // writes durable. False for an NBD server without multi-conn: each connection may then
  // have its own cache.
  bool coherent_queues = true;
  // Discard works (Device::Discard): a block device that takes BLKDISCARD, or a regular file
  // whose filesystem punches holes; opened for writing.
  bool discard = false;
  // Requests go to a file or block device of this host through a descriptor (Device::fd()):
  // buffered ones (not direct) pass through its page cache, which the descriptor can evict.
  // Workloads test this, never the device's type.
  bool file_backed = false;
};

enum class IoOp : uint8_t {
  kRead,
  kWrite,
  // Make every completed write durable: fsync(2) and fdatasync(2) semantics.
  kFsync,
  kFdatasync,
};

const char* IoOpName(IoOp op);

// One request. The caller owns `buffer` and keeps it valid (and unchanged, for a write)
// until the request completes.
struct IoRequest {
  IoOp op = IoOp::kRead;
  uint64_t offset = 0;
  uint32_t length = 0;
  char* buffer = nullptr;
  // Returned unchanged in the completion: the caller's handle for the request.
  uint64_t tag = 0;
};

struct IoCompletion {
  uint64_t tag = 0;
  // Bytes transferred (0 for a flush), or -errno. A short transfer is reported as is; the
  // caller decides whether it is an error.
  int64_t result = 0;
};

// A submission and completion queue of bounded depth. Owned by one thread; not thread-safe.
class IoQueue {
 public:
  virtual ~IoQueue() = default;

  // The most requests that may be in flight at once.
  virtual uint32_t depth() const = 0;
  // Requests submitted and not yet reaped.
  virtual uint32_t in_flight() const = 0;

  // Starts `requests`. FAILED_PRECONDITION if they would take in_flight() above depth();
  // an error here means none of them was started. A request that fails on the device
  // completes with a negative result instead.
  virtual common::Status Submit(std::span<const IoRequest> requests) = 0;

  // Waits until at least `min_complete` requests (at most in_flight()) have completed, or
  // until `timeout_nanos` has passed when it is not negative, then moves up to out.size()
  // completions into `out` and returns how many. Never blocks when min_complete is 0.
  virtual common::StatusOr<size_t> Reap(size_t min_complete, std::span<IoCompletion> out,
                                        int64_t timeout_nanos = -1) = 0;

  // The buffers every later request's data lies in, each [data, data + size), which stay
  // valid as long as the queue: an engine that can register them with the kernel does (fio's
  // fixedbufs), so that a request need not pin its pages each time. Nothing is required of a
  // request's buffer: one outside them goes the ordinary way. The default does nothing.
  virtual void UseBuffers(std::span<const std::span<char>> buffers) {}
};

class Device {
 public:
  virtual ~Device() = default;

  // Bytes addressable: offsets and lengths must stay within [0, size()).
  virtual uint64_t size() const = 0;
  // The device's logical block size (512 or 4096 for disks); informational unless direct.
  virtual uint32_t block_size() const = 0;
  virtual DeviceCaps caps() const = 0;
  // What the device is, for results and errors: "/dev/sdb (io_uring, direct)".
  virtual std::string Describe() const = 0;

  // Runs one request to completion on the calling thread and returns its result: bytes
  // transferred (all of them unless the device ended early) or -errno. Safe for concurrent
  // use. This is the one blocking primitive; wrappers (see device_wrapper.h) override it.
  virtual int64_t Execute(const IoRequest& request) = 0;

  // Discards [offset, offset + length) (TRIM, UNMAP), on the calling thread: the data there is
  // gone. Returns 0 or -errno; -EOPNOTSUPP when caps().discard is false. Safe for concurrent
  // use.
  virtual int64_t Discard(uint64_t offset, uint64_t length) { return -EOPNOTSUPP; }

  // A new queue of `depth` requests for the calling thread. The device must outlive it. The
  // default runs each request with Execute inside Submit (the psync engine).
  virtual common::StatusOr<std::unique_ptr<IoQueue>> OpenQueue(uint32_t depth);

  // Blocking helpers on Execute, with errors that name the device and the offset. A short
  // transfer is DATA_LOSS. A write to a device not opened for writing fails with EBADF.
  common::Status ReadAt(uint64_t offset, size_t n, char* buf);
  common::Status WriteAt(uint64_t offset, size_t n, const char* buf);
  // Makes every completed write durable; `data_only` is fdatasync rather than fsync.
  common::Status Flush(bool data_only);

  // The error for a failed request, as ReadAt and friends report it: "read of 4096 bytes at
  // offset 8192 on /dev/sdb: Input/output error". A network device adds its reason.
  virtual common::Status RequestError(const IoRequest& request, int64_t result) const;

  // Counters the device kept since it was opened, for PhaseResult.device_stats, under names
  // such as "aoe.retransmits" or "nbd.lost_connections"; empty for local devices. Safe for
  // concurrent use.
  virtual std::map<std::string, std::string> Stats() const { return {}; }

  // A file-backed device's descriptor (caps().file_backed), still owned by the device, for
  // what only it can do (posix_fadvise, mincore); -1 for the others, and after Close().
  virtual int fd() const { return -1; }
  // Closes a file-backed device's descriptor now and returns what close(2) said (see
  // FileDevice::Close); later requests fail. OK, doing nothing, for the others. Not safe while
  // requests or queues are in flight.
  virtual common::Status Close() { return absl::OkStatus(); }
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_DEVICE_H_
