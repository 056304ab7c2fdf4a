#include "agent/runner/thread_top.h"

#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

TEST(CatchAtThreadTop, PassesTheWorksStatusOn) {
  EXPECT_TRUE(CatchAtThreadTop("w", [] { return absl::OkStatus(); }).ok());
  const common::Status status =
      CatchAtThreadTop("w", [] { return absl::NotFoundError("no such thing"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(status.message(), "no such thing");
}

TEST(CatchAtThreadTop, AllocationFailuresAreResourceExhausted) {
  common::Status status =
      CatchAtThreadTop("postmark set-up", []() -> common::Status { throw std::bad_alloc(); });
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(), "postmark set-up: out of memory (std::bad_alloc)");

  // A container asked for more than it can ever hold says so with length_error.
  status = CatchAtThreadTop("bonnie run", [] {
    std::vector<std::string> names;
    names.reserve(names.max_size() + 1);
    return absl::OkStatus();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("bonnie run: out of memory ("), std::string::npos);

  // A real allocation the host cannot give.
  status = CatchAtThreadTop("randio run", [] {
    std::vector<char> huge;
    huge.resize(size_t{1} << 62);
    return absl::OkStatus();
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kResourceExhausted);
}

TEST(CatchAtThreadTop, OtherExceptionsAreInternalErrors) {
  const common::Status status = CatchAtThreadTop(
      "command run", []() -> common::Status { throw std::runtime_error("surprise"); });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "command run: unexpected exception: surprise");
  EXPECT_EQ(CatchAtThreadTop("x", []() -> common::Status { throw 42; }).code(),
            absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace stormark::agent
