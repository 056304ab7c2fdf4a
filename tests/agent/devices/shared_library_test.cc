#include "agent/devices/shared_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "agent/devices/iscsi_library.h"
#include "agent/devices/nbd_library.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TEST(SharedLibraryTest, BindsAFunctionByName) {
  auto library = SharedLibrary::Open("libc.so.6", "libc6", "this test");
  ASSERT_TRUE(library.ok()) << library.status().message();
  pid_t (*get_pid)() = nullptr;
  (*library)->Bind("getpid", &get_pid);
  ASSERT_TRUE((*library)->Done().ok());
  ASSERT_NE(get_pid, nullptr);
  EXPECT_EQ(get_pid(), getpid());
}

TEST(SharedLibraryTest, AMissingLibraryNamesItsPackageAndWhatNeedsIt) {
  auto library =
      SharedLibrary::Open("libstormark-none.so.9", "libstormark-none9", "nbd:// targets");
  ASSERT_FALSE(library.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(library.status()));
  EXPECT_THAT(library.status().message(),
              HasSubstr("cannot load libstormark-none.so.9 (Debian package libstormark-none9), "
                        "which nbd:// targets need: "));
}

TEST(SharedLibraryTest, AMissingFunctionIsNamedAndLeftNull) {
  auto library = SharedLibrary::Open("libc.so.6", "libc6", "this test");
  ASSERT_TRUE(library.ok()) << library.status().message();
  void (*missing)() = reinterpret_cast<void (*)()>(1);
  pid_t (*get_pid)() = nullptr;
  (*library)->Bind("stormark_no_such_function", &missing);
  (*library)->Bind("getpid", &get_pid);
  EXPECT_EQ(missing, nullptr);
  EXPECT_NE(get_pid, nullptr);
  EXPECT_EQ((*library)->Done().message(),
            "libc.so.6 has no function stormark_no_such_function: the agent needs a newer libc6 "
            "than this host's");
}

// The libraries the agent is built against load, with every function the devices call.
TEST(SharedLibraryTest, LibnbdAndLibiscsiLoadWithEveryFunction) {
  auto nbd = NbdLibrary::Load();
  ASSERT_TRUE(nbd.ok()) << nbd.status().message();
  EXPECT_NE((*nbd)->create, nullptr);
  EXPECT_NE((*nbd)->is_read_only, nullptr);  // The last bound.
  nbd_handle* handle = (*nbd)->create();
  ASSERT_NE(handle, nullptr);
  (*nbd)->close(handle);
  auto iscsi = IscsiLibrary::Load();
  ASSERT_TRUE(iscsi.ok()) << iscsi.status().message();
  EXPECT_NE((*iscsi)->scsi_free_scsi_task, nullptr);  // The last bound.
  iscsi_context* context = (*iscsi)->create_context("iqn.2026-12.test:shared-library");
  ASSERT_NE(context, nullptr);
  (*iscsi)->destroy_context(context);
}

}  // namespace
}  // namespace stormark::agent
