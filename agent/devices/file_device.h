// A device on a file descriptor: a regular file, or a raw block device (/dev/sdb, /dev/loop0).
// Requests go through one of three engines, chosen when the device is opened:
//   psync     pread(2)/pwrite(2) on the calling thread (SyncQueue), as fio's psync engine
//   io_uring  one io_uring instance per queue (liburing), as fio's io_uring engine with
//             registerfiles and fixedbufs (see uring_queue.h): no polling, no SQ thread
//   libaio    one AIO context per queue (AioQueue), as fio's libaio engine
// With `direct`, the descriptor is opened with O_DIRECT and requests must be aligned to
// caps().alignment (the logical block size of a block device; 4096 for a file).
//
// The device never creates or removes files, and extends one only when asked to (`extend`):
// whoever opens it (a target) lays out the file first. Thread-safe as Device says.
#ifndef STORMARK_AGENT_DEVICES_FILE_DEVICE_H_
#define STORMARK_AGENT_DEVICES_FILE_DEVICE_H_

#include <memory>
#include <string>
#include <string_view>

#include "agent/devices/device.h"

namespace stormark::agent {

enum class Engine { kPsync, kIoUring, kLibaio };

// "psync", "io_uring", "libaio".
const char* EngineName(Engine engine);
// Parses an engine name; INVALID_ARGUMENT names the value and the choices.
common::StatusOr<Engine> ParseEngine(std::string_view name);

struct FileDeviceOptions {
  bool writable = false;
  bool direct = false;
  Engine engine = Engine::kPsync;
  // The bytes to use from the start of the file or device: 0 means all of it. More than the
  // file or device holds is an error.
  uint64_t size = 0;
  // A block device is opened with O_EXCL, which the kernel refuses (EBUSY) while the device
  // is mounted or held by anything else. No effect on regular files.
  bool exclusive = false;
  // A regular file shorter than `size` (which must then be given) is accepted, and writes past
  // its end extend it: a workload that writes a new file from its start, as dd does. No effect
  // on block devices.
  bool extend = false;
};

class FileDevice final : public Device {
 public:
  // Opens `path`, a regular file or a block device. Fails with a message naming the path when
  // it is neither, when O_DIRECT is refused (INVALID_ARGUMENT), or when the engine cannot
  // start (io_uring disabled by the kernel).
  static common::StatusOr<std::unique_ptr<FileDevice>> Open(const std::string& path,
                                                            const FileDeviceOptions& options);
  // Takes over `fd`, already opened by the caller (a phase directory's own file, opened
  // beneath its directory; a device whose identity the caller checked) with flags that match
  // `options` (writable, direct). `name` is what messages and Describe() call it. The same
  // checks as Open apply to what the descriptor refers to; on an error the descriptor is
  // closed.
  static common::StatusOr<std::unique_ptr<FileDevice>> Adopt(int fd, std::string name,
                                                             const FileDeviceOptions& options);
  ~FileDevice() override;

  FileDevice(const FileDevice&) = delete;
  FileDevice& operator=(const FileDevice&) = delete;

  uint64_t size() const override { return size_; }
  uint32_t block_size() const override { return block_size_; }
  DeviceCaps caps() const override;
  std::string Describe() const override;
  int64_t Execute(const IoRequest& request) override;
  // BLKDISCARD on a block device; fallocate(PUNCH_HOLE | KEEP_SIZE) on a regular file.
  int64_t Discard(uint64_t offset, uint64_t length) override;
  common::StatusOr<std::unique_ptr<IoQueue>> OpenQueue(uint32_t depth) override;

  // Closes the descriptor now and returns what close(2) said: a network filesystem reports
  // delayed write errors there, and the last close of a block device writes back its dirty
  // pages, so a workload that times the close calls this inside its timed region. Later
  // requests fail with EBADF. Not safe while requests or queues are in flight. Idempotent.
  common::Status Close() override;

  const std::string& path() const { return path_; }
  // The descriptor, for what only it can do (posix_fadvise, mincore); -1 after Close().
  // Still owned by the device.
  int fd() const override { return fd_; }
  bool is_block_device() const { return is_block_device_; }
  Engine engine() const { return options_.engine; }

 private:
  FileDevice(std::string path, int fd, FileDeviceOptions options, uint64_t size,
             uint32_t block_size, bool is_block_device);

  const std::string path_;
  int fd_;  // -1 after Close().
  const FileDeviceOptions options_;
  const uint64_t size_;
  const uint32_t block_size_;
  const bool is_block_device_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_FILE_DEVICE_H_
