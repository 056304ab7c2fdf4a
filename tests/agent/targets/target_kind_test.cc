#include "agent/targets/target_kind.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <set>
#include <string>

#include "agent/targets/block/block_target.h"
#include "agent/targets/target_caps.h"
#include "common/strings.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TargetConfig OfKind(const char* kind) { return TargetConfig{"t", kind, ""}; }

bool Takes(const TargetKind& kind, std::string_view key) {
  return std::find(kind.keys.begin(), kind.keys.end(), key) != kind.keys.end();
}

TEST(TargetKinds, AreTheSixKindsEachFoundByItsName) {
  EXPECT_EQ(TargetKindNames(), "dir, block, aoe, null, nbd, iscsi");
  std::set<std::string_view> names;
  for (const TargetKind* kind : TargetKinds()) {
    EXPECT_TRUE(names.insert(kind->name).second) << kind->name << " is registered twice";
    EXPECT_EQ(FindTargetKind(kind->name), kind);
  }
  EXPECT_EQ(FindTargetKind("tape"), nullptr);
  EXPECT_EQ(FindTargetKind(""), nullptr);
}

// What one kind declares must agree with itself: the policy and the workloads rely on each
// capability meaning what the kind then does.
TEST(TargetKinds, DeclareCapabilitiesThatAgreeWithWhatTheyProvide) {
  for (const TargetKind* kind : TargetKinds()) {
    SCOPED_TRACE(kind->name);
    const TargetCaps& caps = kind->caps;
    EXPECT_FALSE(kind->value.empty());
    EXPECT_NE(kind->parse, nullptr);
    EXPECT_NE(kind->read_facts, nullptr);
    // A phase either makes files below it or uses its device in place.
    EXPECT_NE(caps.files, caps.device);
    EXPECT_EQ(kind->open_device != nullptr, caps.device);
    // Only a path of this host has an owner to check, and strict_modes to turn that off.
    EXPECT_EQ(kind->check_ownership != nullptr, caps.local_path);
    EXPECT_EQ(Takes(*kind, "strict_modes"), caps.local_path);
    if (caps.page_cache || caps.engines) {
      EXPECT_TRUE(caps.local_path);
    }
    // The agent's own initiator: a transport of its own, timeouts, and no local path.
    EXPECT_EQ(!kind->transport.empty(), caps.remote);
    EXPECT_EQ(Takes(*kind, "io_timeout"), caps.remote);
    EXPECT_EQ(Takes(*kind, "connect_timeout"), caps.remote);
    if (caps.remote) {
      EXPECT_FALSE(caps.local_path);
    }
    if (caps.discards) {
      EXPECT_TRUE(caps.device);
      EXPECT_FALSE(caps.remote || caps.local_path || caps.page_cache);
    }
    // A device is addressed up to a size and written only when disposable.
    EXPECT_EQ(Takes(*kind, "size"), caps.device);
    EXPECT_EQ(Takes(*kind, "disposable"), caps.device);
    for (std::string_view key : kind->keys) {
      EXPECT_EQ(FindTargetKind(key), nullptr) << key << " is both a key and a kind";
    }
  }
}

TEST(CapsOf, AnswersEachKindWithItsModulesCaps) {
  for (const TargetKind* kind : TargetKinds()) {
    TargetConfig target;
    target.kind = std::string(kind->name);
    EXPECT_EQ(CapsOf(target), kind->caps) << kind->name;
  }
  // What workloads and the policy rely on, kind by kind.
  EXPECT_TRUE(CapsOf(OfKind("dir")).files);
  EXPECT_TRUE(CapsOf(OfKind("dir")).page_cache);
  EXPECT_TRUE(CapsOf(OfKind("block")).device);
  EXPECT_TRUE(CapsOf(OfKind("block")).engines);
  EXPECT_TRUE(CapsOf(OfKind("null")).discards);
  for (const char* remote : {"aoe", "nbd", "iscsi"}) {
    EXPECT_TRUE(CapsOf(OfKind(remote)).remote) << remote;
    EXPECT_FALSE(CapsOf(OfKind(remote)).page_cache) << remote;
  }
  EXPECT_EQ(CapsOf(OfKind("tape")), TargetCaps());
}

class ParsedTargetKindTest : public TempDirTest {};

TEST_F(ParsedTargetKindTest, CapsOfEachParsedTargetAreItsKindsCaps) {
  std::ofstream(dir() + "/disk.img") << std::string(4096, 'x');
  auto config = ParseAgentConfig(common::StrCat("targets:\n"
                                                "  d: {dir: ",
                                                dir(),
                                                "}\n"
                                                "  b: {block: ",
                                                dir(),
                                                "/disk.img}\n"
                                                "  s: {aoe: aoe://lo/1.0}\n"
                                                "  z: {null: true}\n"
                                                "  n: {nbd: nbd://127.0.0.1/e}\n"
                                                "  i: {iscsi: iscsi://127.0.0.1/iqn.a:b/0}\n"),
                                 "agent.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_EQ(config->targets.size(), TargetKinds().size());
  std::set<std::string> kinds;
  for (const TargetConfig& target : config->targets) {
    const TargetKind* kind = FindTargetKind(target.kind);
    ASSERT_NE(kind, nullptr) << target.kind;
    EXPECT_EQ(CapsOf(target), kind->caps) << target.kind;
    kinds.insert(target.kind);
  }
  EXPECT_EQ(kinds.size(), TargetKinds().size());
}

TEST(KindsTaking, ListsTheKindsThatTakeAKeyInRegistryOrder) {
  EXPECT_EQ(KindsTaking("io_timeout"), "aoe, nbd and iscsi");
  EXPECT_EQ(KindsTaking("strict_modes"), "dir and block");
  EXPECT_EQ(KindsTaking("tls"), "nbd");
  EXPECT_EQ(KindsTaking("speed"), "");
}

TEST(OpenTargetDevice, ADirTargetHasNoDeviceAndSaysSo) {
  auto block = BlockTarget::Resolve(TargetConfig{"scratch", "dir", "/nonexistent"});
  ASSERT_TRUE(block.ok()) << block.status();
  const std::atomic<bool> cancelled{false};
  std::vector<std::string> warnings;
  auto device = OpenTargetDevice(**block, BlockOpenOptions(), cancelled, &warnings);
  ASSERT_FALSE(device.ok());
  EXPECT_EQ(device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(device.status().message(), HasSubstr("target 'scratch' is a dir target"));
}

TEST(OpenTargetDevice, ANullTargetOpensTheNullDeviceOfItsSize) {
  auto block = BlockTarget::Resolve(TargetConfig{"z", "null", "", 1 << 20});
  ASSERT_TRUE(block.ok()) << block.status();
  EXPECT_FALSE((*block)->has_path());
  const std::atomic<bool> cancelled{false};
  std::vector<std::string> warnings;
  auto device = OpenTargetDevice(**block, BlockOpenOptions{.write = true}, cancelled, &warnings);
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->size(), uint64_t{1} << 20);
  EXPECT_FALSE((*device)->caps().file_backed);
}

TEST(CheckTargetOwner, KindsWithoutALocalPathHaveNothingToCheck) {
  for (const char* kind : {"null", "aoe", "nbd", "iscsi", "tape"}) {
    EXPECT_TRUE(CheckTargetOwner(TargetConfig{"t", kind, "/nonexistent"}, 0).ok()) << kind;
  }
  EXPECT_FALSE(CheckTargetOwner(TargetConfig{"t", "dir", "/nonexistent/x"}, 0).ok());
}

}  // namespace
}  // namespace stormark::agent
