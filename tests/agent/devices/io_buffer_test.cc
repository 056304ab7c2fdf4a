#include "agent/devices/io_buffer.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

TEST(IoBuffer, IsAlignedForDirectIoAndHugePages) {
  auto small = IoBuffer::Allocate(4096);
  ASSERT_TRUE(small.ok()) << small.status();
  EXPECT_EQ(small->size(), 4096u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small->data()) % 4096, 0u);
  auto large = IoBuffer::Allocate(1 << 20);
  ASSERT_TRUE(large.ok()) << large.status();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large->data()) % (2 << 20), 0u);
  std::memset(large->data(), 1, large->size());
}

TEST(IoBuffer, MemoryTheHostCannotGiveIsResourceExhausted) {
  // More than any address space holds: posix_memalign fails without touching
  // memory.
  auto buffer = IoBuffer::Allocate(size_t{1} << 62);
  ASSERT_FALSE(buffer.ok());
  EXPECT_EQ(buffer.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(buffer.status().message()),
            "out of memory: cannot allocate an I/O buffer of 4 EiB");
}

TEST(IoBuffer, MovesItsMemory) {
  IoBuffer a = IoBuffer::Allocate(8192).value();
  char* data = a.data();
  IoBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(a.data(), nullptr);
  IoBuffer c = IoBuffer::Allocate(4096).value();
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.size(), 8192u);
}

}  // namespace
}  // namespace stormark::agent
