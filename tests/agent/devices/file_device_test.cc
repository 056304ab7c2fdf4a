#include "agent/devices/file_device.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "agent/devices/aio_queue.h"
#include "agent/devices/fault_device.h"
#include "agent/devices/io_buffer.h"
#include "agent/devices/memory_device.h"
#include "agent/devices/uring_queue.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

class FileDeviceTest : public TempDirTest, public ::testing::WithParamInterface<Engine> {
 protected:
  // A file of `size` bytes, each byte its offset modulo 251.
  std::string MakeFile(uint64_t size) {
    const std::string path = dir() + "/dev.img";
    std::string data(size, '\0');
    for (uint64_t i = 0; i < size; ++i) data[i] = static_cast<char>(i % 251);
    std::ofstream(path, std::ios::binary) << data;
    return path;
  }

  common::StatusOr<std::unique_ptr<FileDevice>> Open(const std::string& path, bool writable,
                                                     bool direct = false) {
    FileDeviceOptions options;
    options.writable = writable;
    options.direct = direct;
    options.engine = GetParam();
    return FileDevice::Open(path, options);
  }
};

TEST_P(FileDeviceTest, ReadsWhatTheFileHolds) {
  auto device = Open(MakeFile(64 * 1024), false);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->size(), 64u * 1024);
  IoBuffer buf = IoBuffer::Allocate(4096).value();
  ASSERT_TRUE((*device)->ReadAt(8192, 4096, buf.data()).ok());
  EXPECT_EQ(buf.data()[0], static_cast<char>(8192 % 251));
  EXPECT_EQ(buf.data()[4095], static_cast<char>((8192 + 4095) % 251));
}

TEST_P(FileDeviceTest, QueueWritesAndReadsBackAtDepth) {
  auto device = Open(MakeFile(1 << 20), true, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->caps().async, GetParam() != Engine::kPsync);
  EXPECT_EQ((*device)->caps().alignment, 4096u);
  constexpr uint32_t kDepth = 8;
  auto queue = (*device)->OpenQueue(kDepth);
  ASSERT_TRUE(queue.ok()) << queue.status();
  std::vector<IoBuffer> buffers;
  std::vector<IoRequest> writes;
  for (uint32_t i = 0; i < kDepth; ++i) {
    buffers.push_back(IoBuffer::Allocate(4096).value());
    std::memset(buffers.back().data(), 'a' + i, 4096);
    writes.push_back({IoOp::kWrite, uint64_t{i} * 8192, 4096, buffers.back().data(), 100 + i});
  }
  ASSERT_TRUE((*queue)->Submit(writes).ok());
  EXPECT_EQ((*queue)->in_flight(), kDepth);
  // A ninth request would go beyond the depth.
  IoRequest extra{IoOp::kRead, 0, 4096, buffers[0].data(), 999};
  EXPECT_EQ((*queue)->Submit({&extra, 1}).code(), absl::StatusCode::kFailedPrecondition);

  std::vector<IoCompletion> done(kDepth);
  size_t reaped = 0;
  std::vector<uint64_t> tags;
  while (reaped < kDepth) {
    auto n = (*queue)->Reap(1, {done.data(), done.size()});
    ASSERT_TRUE(n.ok()) << n.status();
    for (size_t i = 0; i < *n; ++i) {
      EXPECT_EQ(done[i].result, 4096);
      tags.push_back(done[i].tag);
    }
    reaped += *n;
  }
  std::sort(tags.begin(), tags.end());
  EXPECT_EQ(tags.front(), 100u);
  EXPECT_EQ(tags.back(), 107u);
  EXPECT_EQ((*queue)->in_flight(), 0u);

  IoRequest flush{IoOp::kFdatasync, 0, 0, nullptr, 7};
  ASSERT_TRUE((*queue)->Submit({&flush, 1}).ok());
  auto n = (*queue)->Reap(1, {done.data(), done.size()});
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, 1u);
  EXPECT_EQ(done[0].result, 0);

  IoBuffer back = IoBuffer::Allocate(4096).value();
  ASSERT_TRUE((*device)->ReadAt(3 * 8192, 4096, back.data()).ok());
  EXPECT_EQ(back.data()[0], 'd');
  EXPECT_EQ(back.data()[4095], 'd');
  ASSERT_TRUE((*device)->ReadAt(3 * 8192 + 4096, 4096, back.data()).ok());
  EXPECT_EQ(back.data()[0], static_cast<char>((3 * 8192 + 4096) % 251));  // Untouched.
}

// A flush handed over with the writes before it completes after them, and every completion
// carries its own tag, whatever the engine does to order them (io_uring drains; libaio waits
// and runs the flush itself).
TEST_P(FileDeviceTest, AFlushInABatchCompletesAfterTheWritesBeforeIt) {
  auto device = Open(MakeFile(1 << 20), true, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  auto queue = (*device)->OpenQueue(6);
  ASSERT_TRUE(queue.ok()) << queue.status();
  std::vector<IoBuffer> buffers;
  std::vector<IoRequest> batch;
  for (uint32_t i = 0; i < 4; ++i) {
    buffers.push_back(IoBuffer::Allocate(4096).value());
    std::memset(buffers.back().data(), 'p' + i, 4096);
    batch.push_back({IoOp::kWrite, uint64_t{i} * 4096, 4096, buffers.back().data(), i});
  }
  batch.push_back({IoOp::kFsync, 0, 0, nullptr, 50});
  batch.push_back({IoOp::kWrite, 10 * 4096, 4096, buffers[0].data(), 60});
  ASSERT_TRUE((*queue)->Submit(batch).ok());
  EXPECT_EQ((*queue)->in_flight(), 6u);
  std::vector<uint64_t> order;
  std::vector<IoCompletion> done(6);
  while (order.size() < 6) {
    auto n = (*queue)->Reap(1, {done.data(), done.size()});
    ASSERT_TRUE(n.ok()) << n.status();
    for (size_t i = 0; i < *n; ++i) {
      EXPECT_EQ(done[i].result, done[i].tag == 50 ? 0 : 4096) << "tag " << done[i].tag;
      order.push_back(done[i].tag);
    }
  }
  const auto flush = std::find(order.begin(), order.end(), 50u) - order.begin();
  for (uint64_t tag = 0; tag < 4; ++tag) {
    EXPECT_LT(std::find(order.begin(), order.end(), tag) - order.begin(), flush) << tag;
  }
  EXPECT_EQ((*queue)->in_flight(), 0u);
  // Nothing in flight: a reap that owes no wait returns at once.
  auto none = (*queue)->Reap(0, {done.data(), done.size()});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, 0u);
}

// Buffers named to UseBuffers (io_uring registers them, fio's fixedbufs) and buffers outside
// them both carry data, and only what lies wholly inside a registered buffer uses it.
TEST_P(FileDeviceTest, RequestsInAndOutsideTheQueuesBuffersBothMoveData) {
  auto device = Open(MakeFile(1 << 20), true, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  auto queue = (*device)->OpenQueue(4);
  ASSERT_TRUE(queue.ok()) << queue.status();
  IoBuffer registered = IoBuffer::Allocate(8192).value();
  IoBuffer other = IoBuffer::Allocate(4096).value();
  const std::span<char> buffers[] = {{registered.data(), 8192}};
  (*queue)->UseBuffers(buffers);
  if (GetParam() == Engine::kIoUring) {
    const auto* uring = dynamic_cast<const UringQueue*>(queue->get());
    ASSERT_NE(uring, nullptr);
    EXPECT_TRUE(uring->file_registered());
    EXPECT_EQ(uring->buffers_registered(), 1u);
  }
  std::memset(registered.data(), 'r', 8192);
  std::memset(other.data(), 'o', 4096);
  const IoRequest writes[] = {
      {IoOp::kWrite, 0, 4096, registered.data() + 4096, 1},  // inside
      {IoOp::kWrite, 8192, 4096, other.data(), 2},           // outside
  };
  ASSERT_TRUE((*queue)->Submit(writes).ok());
  std::vector<IoCompletion> done(2);
  size_t got = 0;
  while (got < 2) {
    auto n = (*queue)->Reap(1, std::span(done).subspan(got));
    ASSERT_TRUE(n.ok()) << n.status();
    got += *n;
  }
  for (const IoCompletion& c : done) EXPECT_EQ(c.result, 4096) << c.tag;
  IoBuffer back = IoBuffer::Allocate(4096).value();
  ASSERT_TRUE((*device)->ReadAt(0, 4096, back.data()).ok());
  EXPECT_EQ(std::string(back.data(), 4096), std::string(4096, 'r'));
  ASSERT_TRUE((*device)->ReadAt(8192, 4096, back.data()).ok());
  EXPECT_EQ(std::string(back.data(), 4096), std::string(4096, 'o'));
  // A read into the registered buffer lands there.
  const IoRequest read{IoOp::kRead, 8192, 4096, registered.data(), 3};
  ASSERT_TRUE((*queue)->Submit({&read, 1}).ok());
  ASSERT_TRUE((*queue)->Reap(1, std::span(done).first(1)).ok());
  EXPECT_EQ(done[0].result, 4096);
  EXPECT_EQ(registered.data()[0], 'o');
}

// A randio job's queue is made while the phase prepares and used, then closed, by the job's own
// thread: io_uring's ring is set up for one thread (uring_queue.h), which is the first to
// submit, not the one that made it.
TEST_P(FileDeviceTest, AQueueMadeOnOneThreadServesAnotherThatClosesItWithRequestsInFlight) {
  auto device = Open(MakeFile(1 << 20), true, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  auto queue = (*device)->OpenQueue(8);
  ASSERT_TRUE(queue.ok()) << queue.status();
  std::vector<IoBuffer> buffers;
  std::vector<std::span<char>> spans;
  for (int i = 0; i < 8; ++i) {
    buffers.push_back(IoBuffer::Allocate(4096).value());
    std::memset(buffers.back().data(), 'a' + i, 4096);
    spans.emplace_back(buffers.back().data(), 4096);
  }
  (*queue)->UseBuffers(spans);
  std::string failure;
  std::thread job([&] {
    std::vector<IoRequest> writes;
    for (uint64_t i = 0; i < 8; ++i) {
      writes.push_back({IoOp::kWrite, i * 4096, 4096, buffers[i].data(), i});
    }
    if (common::Status s = (*queue)->Submit(writes); !s.ok()) failure = s.ToString();
    std::vector<IoCompletion> done(8);
    auto n = (*queue)->Reap(2, {done.data(), done.size()});
    if (!n.ok()) failure = n.status().ToString();
    // The rest still in flight: closing waits for them on this thread.
    queue->reset();
  });
  job.join();
  EXPECT_EQ(failure, "");
  IoBuffer back = IoBuffer::Allocate(4096).value();
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE((*device)->ReadAt(i * 4096, 4096, back.data()).ok());
    EXPECT_EQ(std::count(back.data(), back.data() + 4096, 'a' + i), 4096) << "block " << i;
  }
}

// A queue closed with requests still in flight waits for them: their buffers stay valid.
TEST_P(FileDeviceTest, AQueueClosedWithRequestsInFlightWaitsForThem) {
  auto device = Open(MakeFile(1 << 20), false, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  auto queue = (*device)->OpenQueue(16);
  ASSERT_TRUE(queue.ok()) << queue.status();
  std::vector<IoBuffer> buffers;
  std::vector<IoRequest> reads;
  for (uint32_t i = 0; i < 16; ++i) {
    buffers.push_back(IoBuffer::Allocate(65536).value());
    reads.push_back({IoOp::kRead, uint64_t{i} * 65536, 65536, buffers.back().data(), i});
  }
  ASSERT_TRUE((*queue)->Submit(reads).ok());
  queue->reset();  // Must not return while the kernel still writes the buffers.
  EXPECT_EQ(buffers[15].data()[1], static_cast<char>((15 * 65536 + 1) % 251));
}

TEST_P(FileDeviceTest, MisalignedDirectRequestFailsWithEinval) {
  auto device = Open(MakeFile(1 << 20), false, /*direct=*/true);
  ASSERT_TRUE(device.ok()) << device.status();
  auto queue = (*device)->OpenQueue(1);
  ASSERT_TRUE(queue.ok());
  IoBuffer buf = IoBuffer::Allocate(8192).value();
  IoRequest read{IoOp::kRead, 100, 4096, buf.data(), 1};
  ASSERT_TRUE((*queue)->Submit({&read, 1}).ok());
  IoCompletion done;
  auto n = (*queue)->Reap(1, {&done, 1});
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, 1u);
  EXPECT_EQ(done.result, -EINVAL);
  const common::Status error = (*device)->RequestError(read, done.result);
  EXPECT_THAT(error.message(), HasSubstr("read of 4096 bytes at offset 100 on "));
  EXPECT_THAT(error.message(), HasSubstr("Invalid argument"));
}

TEST_P(FileDeviceTest, WriteToAReadOnlyDeviceFails) {
  auto device = Open(MakeFile(65536), false);
  ASSERT_TRUE(device.ok());
  IoBuffer buf = IoBuffer::Allocate(4096).value();
  EXPECT_FALSE((*device)->WriteAt(0, 4096, buf.data()).ok());
  auto queue = (*device)->OpenQueue(1);
  ASSERT_TRUE(queue.ok());
  IoRequest write{IoOp::kWrite, 0, 4096, buf.data(), 1};
  ASSERT_TRUE((*queue)->Submit({&write, 1}).ok());
  IoCompletion done;
  ASSERT_TRUE((*queue)->Reap(1, {&done, 1}).ok());
  EXPECT_EQ(done.result, -EBADF);
}

TEST_P(FileDeviceTest, ReadPastTheEndIsShort) {
  auto device = Open(MakeFile(6000), false);
  ASSERT_TRUE(device.ok());
  IoBuffer buf = IoBuffer::Allocate(4096).value();
  const common::Status status = (*device)->ReadAt(4096, 4096, buf.data());
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("transferred only 1904 bytes"));
}

TEST_P(FileDeviceTest, ExtendWritesANewFileFromItsStart) {
  const std::string path = dir() + "/new.img";
  std::ofstream(path, std::ios::binary).close();  // Empty.
  FileDeviceOptions options;
  options.writable = true;
  options.engine = GetParam();
  options.size = 3 * 4096;
  // Without `extend`, a file shorter than the size asked for is refused.
  EXPECT_EQ(FileDevice::Open(path, options).status().code(), absl::StatusCode::kOutOfRange);
  options.extend = true;
  auto device = FileDevice::Open(path, options);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->size(), 3u * 4096);
  IoBuffer buf = IoBuffer::Allocate(4096).value();
  for (uint64_t at = 0; at < 3 * 4096; at += 4096) {
    std::memset(buf.data(), static_cast<int>('a' + at / 4096), 4096);
    ASSERT_TRUE((*device)->WriteAt(at, 4096, buf.data()).ok());
  }
  ASSERT_TRUE((*device)->Close().ok());
  std::ifstream in(path, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(data.size(), 3u * 4096);
  EXPECT_EQ(data[0], 'a');
  EXPECT_EQ(data[2 * 4096 + 4095], 'c');
}

TEST_P(FileDeviceTest, CloseEndsTheDeviceAndIsIdempotent) {
  auto device = Open(MakeFile(65536), true);
  ASSERT_TRUE(device.ok());
  IoBuffer buf = IoBuffer::Allocate(4096).value();
  ASSERT_TRUE((*device)->ReadAt(0, 4096, buf.data()).ok());
  EXPECT_TRUE((*device)->Close().ok());
  EXPECT_TRUE((*device)->Close().ok());
  const common::Status after = (*device)->ReadAt(0, 4096, buf.data());
  EXPECT_THAT(after.message(), HasSubstr("Bad file descriptor"));
}

// Workloads find a device's descriptor through Device, by its caps, never by its type: also
// through a wrapper.
TEST_P(FileDeviceTest, IsFileBackedAndGivesItsDescriptorThroughDevice) {
  auto device = Open(MakeFile(65536), true);
  ASSERT_TRUE(device.ok());
  Device& plain = **device;
  EXPECT_TRUE(plain.caps().file_backed);
  EXPECT_GE(plain.fd(), 0);
  FaultDevice wrapped(plain);
  EXPECT_TRUE(wrapped.caps().file_backed);
  EXPECT_EQ(wrapped.fd(), plain.fd());
  EXPECT_TRUE(static_cast<Device&>(wrapped).Close().ok());
  EXPECT_EQ(plain.fd(), -1);
  MemoryDevice memory(4096);
  EXPECT_FALSE(memory.caps().file_backed);
  EXPECT_EQ(memory.fd(), -1);
  EXPECT_TRUE(memory.Close().ok());
}

INSTANTIATE_TEST_SUITE_P(Engines, FileDeviceTest,
                         ::testing::Values(Engine::kPsync, Engine::kIoUring, Engine::kLibaio),
                         [](const auto& info) { return std::string(EngineName(info.param)); });

TEST(FileDevice, RefusesWhatIsNeitherFileNorBlockDevice) {
  auto device = FileDevice::Open("/dev/null", {});
  ASSERT_FALSE(device.ok());
  EXPECT_THAT(device.status().message(), HasSubstr("neither a regular file nor a block device"));
}

TEST(FileDevice, SizeBeyondTheFileIsOutOfRange) {
  FileDeviceOptions options;
  options.size = uint64_t{1} << 50;
  auto device = FileDevice::Open("/proc/self/exe", options);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kOutOfRange);
}

// More AIO contexts than the host allows (fs.aio-max-nr) is one message that names the limit.
TEST(AioQueue, ADepthBeyondTheHostsLimitNamesIt) {
  std::ifstream limit_file("/proc/sys/fs/aio-max-nr");
  uint64_t limit = 0;
  if (!(limit_file >> limit) || limit >= (uint64_t{1} << 30)) GTEST_SKIP() << "no AIO limit";
  auto queue = AioQueue::Create(0, static_cast<uint32_t>(limit + 1));
  ASSERT_FALSE(queue.ok());
  EXPECT_THAT(queue.status().message(),
              HasSubstr("the host's AIO contexts are used up: sysctl fs.aio-max-nr"));
}

TEST(Engine, ParsesTheThreeNames) {
  EXPECT_EQ(*ParseEngine("psync"), Engine::kPsync);
  EXPECT_EQ(*ParseEngine("io_uring"), Engine::kIoUring);
  EXPECT_EQ(*ParseEngine("libaio"), Engine::kLibaio);
  EXPECT_THAT(ParseEngine("posixaio").status().message(),
              HasSubstr("use psync, io_uring or libaio"));
}

}  // namespace
}  // namespace stormark::agent
