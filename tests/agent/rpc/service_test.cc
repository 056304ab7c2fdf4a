// AgentService tested through a real AgentServer, over its in-process channel.
#include "agent/rpc/service.h"
#include "agent/workloads/factory.h"
#include "agent/workloads/workload_registry.h"

#include <arpa/inet.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/rpc/server.h"
#include "common/clock.h"
#include "common/strings.h"
#include "common/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "stormark/v1/agent.grpc.pb.h"
#include "tests/agent/test_dir.h"

namespace stormark::agent {
namespace {

using stormark::v1::PhaseResult;
using stormark::v1::StreamSpec;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::MatchesRegex;

constexpr uint64_t kMiB = 1 << 20;

stormark::v1::Version MakeVersion(uint32_t major, uint32_t minor) {
  stormark::v1::Version v;
  v.set_major(major);
  v.set_minor(minor);
  return v;
}

stormark::v1::PrepareRequest PrepareWrite(const std::string& phase_id, uint64_t size = 2 * kMiB,
                                          uint32_t bs = 64 * 1024) {
  stormark::v1::PrepareRequest request;
  *request.mutable_controller_protocol() = common::OurProtocol();
  stormark::v1::PhaseSpec* spec = request.mutable_spec();
  spec->set_phase_id(phase_id);
  spec->set_target("scratch");
  spec->set_progress_interval_ms(10);
  StreamSpec* stream = spec->mutable_stream();
  stream->set_direction(StreamSpec::WRITE);
  stream->set_size_bytes(size);
  stream->set_block_size(bs);
  return request;
}

class AgentServiceTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    StartServer(common::OurProtocol());
  }

  void TearDown() override {
    stub_.reset();
    server_.reset();
    TempDirTest::TearDown();
  }

  void StartServer(const stormark::v1::Version& protocol,
                   std::optional<AgentConfig> config = std::nullopt) {
    stub_.reset();
    server_.reset();
    AgentServerOptions options;
    options.listen = "127.0.0.1:0";
    options.insecure = true;
    options.config = config ? *config : ConfigWithTarget();
    options.protocol = protocol;
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(line);
    };
    common::StatusOr<std::unique_ptr<AgentServer>> server =
        AgentServer::Start(std::move(options), common::SystemClock());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    stub_ = stormark::v1::Agent::NewStub(server_->InProcessChannel());
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // Prepares; a successful reply's token is kept for the calls that follow.
  grpc::Status Prepare(const stormark::v1::PrepareRequest& request,
                       stormark::v1::PrepareReply* reply = nullptr) {
    grpc::ClientContext context;
    stormark::v1::PrepareReply ignored;
    if (reply == nullptr) reply = &ignored;
    grpc::Status status = stub_->Prepare(&context, request, reply);
    if (status.ok()) token_ = reply->phase_token();
    return status;
  }

  // Runs `phase_id` now and returns every update the stream carried.
  std::vector<stormark::v1::RunUpdate> Run(const std::string& phase_id, grpc::Status* status) {
    grpc::ClientContext context;
    stormark::v1::RunRequest request;
    request.set_phase_id(phase_id);
    request.set_phase_token(token_);
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos());
    auto reader = stub_->Run(&context, request);
    std::vector<stormark::v1::RunUpdate> updates;
    stormark::v1::RunUpdate update;
    while (reader->Read(&update)) updates.push_back(update);
    *status = reader->Finish();
    return updates;
  }

  stormark::v1::AgentInfo GetInfo() {
    grpc::ClientContext context;
    stormark::v1::GetInfoRequest request;
    *request.mutable_controller_protocol() = common::OurProtocol();
    stormark::v1::AgentInfo info;
    grpc::Status status = stub_->GetInfo(&context, request, &info);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return info;
  }

  std::unique_ptr<AgentServer> server_;
  std::unique_ptr<stormark::v1::Agent::Stub> stub_;
  std::string token_;  // Of the last phase prepared.
  std::mutex log_mu_;
  std::vector<std::string> log_;  // Guarded by log_mu_.
};

TEST_F(AgentServiceTest, ServerReportsTheBoundPort) {
  EXPECT_THAT(server_->address(), MatchesRegex("127\\.0\\.0\\.1:[1-9][0-9]*"));
}

TEST_F(AgentServiceTest, GetInfoDescribesAgentHostAndTargets) {
  const int64_t before = common::SystemClock().NowUnixNanos();
  stormark::v1::AgentInfo info = GetInfo();
  const int64_t after = common::SystemClock().NowUnixNanos();
  EXPECT_EQ(info.agent_version(), common::kSoftwareVersion);
  EXPECT_EQ(info.protocol().major(), common::kProtocolMajor);
  EXPECT_EQ(info.protocol().minor(), common::kProtocolMinor);
  EXPECT_FALSE(info.hostname().empty());
  EXPECT_THAT(info.kernel(), HasSubstr("Linux"));
  EXPECT_GT(info.cpu_count(), 0u);
  EXPECT_GT(info.ram_bytes(), 0u);
  EXPECT_GE(info.now_unix_nanos(), before);
  EXPECT_LE(info.now_unix_nanos(), after);
  EXPECT_EQ(info.busy_with_phase(), "");
  EXPECT_THAT(info.workloads(), ElementsAreArray(KnownWorkloads()));
  EXPECT_THAT(info.workloads(),
              ::testing::IsSupersetOf({"stream", "bonnie", "command", "postmark", "randio"}));
  ASSERT_EQ(info.targets_size(), 1);
  const stormark::v1::TargetInfo& target = info.targets(0);
  EXPECT_EQ(target.name(), "scratch");
  EXPECT_EQ(target.kind(), "dir");
  EXPECT_EQ(target.path(), dir());
  EXPECT_FALSE(target.filesystem().empty());
  EXPECT_GT(target.total_bytes(), 0u);
  EXPECT_LE(target.free_bytes(), target.total_bytes());
}

TEST_F(AgentServiceTest, GetInfoShowsTheBusyPhase) {
  ASSERT_TRUE(Prepare(PrepareWrite("p1")).ok());
  EXPECT_EQ(GetInfo().busy_with_phase(), "p1");
}

TEST_F(AgentServiceTest, SyncClockEchoesAndTimestamps) {
  grpc::ClientContext context;
  stormark::v1::SyncClockRequest request;
  const int64_t before = common::SystemClock().NowUnixNanos();
  request.set_controller_send_unix_nanos(before);
  stormark::v1::SyncClockReply reply;
  ASSERT_TRUE(stub_->SyncClock(&context, request, &reply).ok());
  const int64_t after = common::SystemClock().NowUnixNanos();
  EXPECT_EQ(reply.controller_send_unix_nanos(), before);
  EXPECT_GE(reply.agent_receive_unix_nanos(), before);
  EXPECT_LE(reply.agent_receive_unix_nanos(), reply.agent_send_unix_nanos());
  EXPECT_LE(reply.agent_send_unix_nanos(), after);
}

TEST_F(AgentServiceTest, PrepareRunCleanup) {
  const uint64_t size = 4 * kMiB;
  stormark::v1::PrepareReply prepared;
  grpc::Status status = Prepare(PrepareWrite("p1", size), &prepared);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_GT(prepared.prepared_unix_nanos(), 0);
  EXPECT_THAT(prepared.warnings(), Contains(HasSubstr("possibly cache-dominated")));
  EXPECT_THAT(ListDir(dir()), ElementsAre(".stormark-p1"));

  std::vector<stormark::v1::RunUpdate> updates = Run("p1", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(updates.empty());
  // Progress first, then exactly one result, last.
  for (size_t i = 0; i + 1 < updates.size(); ++i) EXPECT_TRUE(updates[i].has_progress()) << i;
  ASSERT_TRUE(updates.back().has_result());
  const PhaseResult& result = updates.back().result();
  EXPECT_EQ(result.state(), PhaseResult::SUCCEEDED) << result.error();
  EXPECT_EQ(result.bytes(), size);
  EXPECT_EQ(result.ops(), size / (64 * 1024));
  EXPECT_EQ(result.latency().count(), result.ops());
  EXPECT_EQ(result.latency().sub_bucket_bits(), 7u);

  grpc::ClientContext context;
  stormark::v1::CleanupRequest cleanup;
  cleanup.set_phase_id("p1");
  cleanup.set_phase_token(prepared.phase_token());
  stormark::v1::CleanupReply cleaned;
  status = stub_->Cleanup(&context, cleanup, &cleaned);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(cleaned.removed(), 2u);
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_EQ(GetInfo().busy_with_phase(), "");

  std::vector<std::string> log = Log();
  EXPECT_THAT(log, Contains(HasSubstr("prepared phase 'p1' on target 'scratch'")));
  EXPECT_THAT(log, Contains(HasSubstr("phase 'p1' SUCCEEDED")));
}

TEST_F(AgentServiceTest, CleanupIsIdempotentOverTheWire) {
  for (int i = 0; i < 2; ++i) {
    grpc::ClientContext context;
    stormark::v1::CleanupRequest request;
    request.set_phase_id("p1");
    stormark::v1::CleanupReply reply;
    grpc::Status status = stub_->Cleanup(&context, request, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(reply.removed(), 0u);
  }
}

TEST_F(AgentServiceTest, SecondPrepareIsFailedPrecondition) {
  ASSERT_TRUE(Prepare(PrepareWrite("first")).ok());
  grpc::Status status = Prepare(PrepareWrite("second"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("busy with phase 'first'"));
  EXPECT_THAT(Log(), Contains(HasSubstr("refused prepare of phase 'second'")));
}

TEST_F(AgentServiceTest, UnknownTargetIsNotFound) {
  stormark::v1::PrepareRequest request = PrepareWrite("p1");
  request.mutable_spec()->set_target("nvme");
  grpc::Status status = Prepare(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("configured: scratch"));
}

// Names, never paths, cross the wire: no target name or phase id reaches outside the
// target's directory, and a refused one creates nothing anywhere.
TEST_F(AgentServiceTest, NamesThatWouldEscapeTheTargetAreRefused) {
  // Other tests share the parent directory; only phase directories matter there.
  const std::string parent = dir().substr(0, dir().rfind('/'));
  auto phase_dirs = [&] {
    std::vector<std::string> found;
    for (const std::string& name : ListDir(parent)) {
      if (name.starts_with(".stormark-")) found.push_back(name);
    }
    return found;
  };
  const std::vector<std::string> before = phase_dirs();
  for (const std::string& target :
       std::vector<std::string>{"..", ".", "", "../scratch", "scratch/..", "scratch/../..", "/etc",
                                "/", std::string("scratch\0x", 9), "scratch/", "SCRATCH"}) {
    stormark::v1::PrepareRequest request = PrepareWrite("p1");
    request.mutable_spec()->set_target(target);
    grpc::Status status = Prepare(request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << target;
  }
  for (const std::string& id :
       std::vector<std::string>{"..", ".", "", "../x", "a/b", "/var/tmp/x", "x\ny",
                                std::string("p\0", 2), std::string(65, 'a')}) {
    grpc::Status status = Prepare(PrepareWrite(id));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << id;
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_EQ(phase_dirs(), before);
  EXPECT_THAT(Log(),
              Contains(AllOf(HasSubstr("refused prepare of phase '../x'"), HasSubstr("[peer "))));
}

// What the caller sends names nothing in the log by itself: every value is escaped and cut
// short, so each call adds exactly one bounded line, and that line still names the peer.
class HostileTextTest : public AgentServiceTest {
 protected:
  // Values a caller might send as a phase id or a target name. (Invalid UTF-8 never reaches
  // the service: protobuf refuses to parse such a string field.)
  static std::vector<std::string> Hostile() {
    return {
        "nightly' on target 'prod' [peer ipv4:10.0.0.1:1 CN=admin]\n"
        "prepared phase 'nightly' on target 'prod",
        std::string("p1\0 [peer hidden]", 17), "\x1b[2J\x1b[H\r",
        // Near the request size limit, which refuses 1 MiB before the service sees it.
        std::string(kMiB - 4096, 'a')};
  }

  // Asserts the log grew by `lines` lines since `before`, each one a single, bounded line
  // with the peer part at its end; returns the new lines.
  std::vector<std::string> NewLines(size_t before, size_t lines) {
    const std::vector<std::string> log = Log();
    EXPECT_EQ(log.size(), before + lines);
    std::vector<std::string> added(log.begin() + std::min(before, log.size()), log.end());
    for (const std::string& line : added) {
      EXPECT_LT(line.size(), 512u) << line.substr(0, 600);
      EXPECT_EQ(line.find_first_of(std::string("\n\r\x1b\0", 4)), std::string::npos) << line;
      EXPECT_THAT(line, HasSubstr(" [peer "));
      EXPECT_TRUE(line.ends_with("]")) << line;
      // No line begins the way a genuine success line does.
      EXPECT_FALSE(line.starts_with("prepared phase")) << line;
    }
    return added;
  }

  static void ExpectShort(const grpc::Status& status) {
    EXPECT_LT(status.error_message().size(), 512u);
    EXPECT_EQ(status.error_message().find_first_of(std::string("\n\r\x1b\0", 4)), std::string::npos)
        << status.error_message().substr(0, 600);
  }
};

TEST_F(HostileTextTest, PrepareLogsOneEscapedLinePerCall) {
  for (const std::string& value : Hostile()) {
    size_t before = Log().size();
    grpc::Status status = Prepare(PrepareWrite(value));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ExpectShort(status);
    NewLines(before, 1);

    before = Log().size();
    stormark::v1::PrepareRequest request = PrepareWrite("p1");
    request.mutable_spec()->set_target(value);
    status = Prepare(request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    ExpectShort(status);
    NewLines(before, 1);
  }
  EXPECT_EQ(GetInfo().busy_with_phase(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_THAT(Log(), Contains(HasSubstr("refused prepare of phase '\\x1b[2J\\x1b[H\\x0d'")));
  EXPECT_THAT(Log(), Contains(HasSubstr("on target 'p1\\x00 [peer hidden]'")));
  EXPECT_THAT(Log(), Contains(HasSubstr("…(+")));
}

TEST_F(HostileTextTest, RunAbortAndCleanupCheckTheIdBeforeLoggingIt) {
  for (const std::string& value : Hostile()) {
    size_t before = Log().size();
    grpc::Status status;
    EXPECT_THAT(Run(value, &status), IsEmpty());
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ExpectShort(status);
    std::vector<std::string> added = NewLines(before, 1);
    if (!added.empty()) {
      EXPECT_THAT(added[0], ::testing::StartsWith("refused run: phase id '"));
    }

    before = Log().size();
    {
      grpc::ClientContext context;
      stormark::v1::AbortRequest request;
      request.set_phase_id(value);
      stormark::v1::AbortReply reply;
      status = stub_->Abort(&context, request, &reply);
    }
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ExpectShort(status);
    NewLines(before, 1);

    before = Log().size();
    {
      grpc::ClientContext context;
      stormark::v1::CleanupRequest request;
      request.set_phase_id(value);
      stormark::v1::CleanupReply reply;
      status = stub_->Cleanup(&context, request, &reply);
    }
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ExpectShort(status);
    NewLines(before, 1);

    before = Log().size();
    {
      grpc::ClientContext context;
      stormark::v1::HeartbeatRequest request;
      request.set_phase_id(value);
      stormark::v1::HeartbeatReply reply;
      status = stub_->Heartbeat(&context, request, &reply);
    }
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    ExpectShort(status);
    NewLines(before, 0);
  }
}

TEST_F(HostileTextTest, AHeldPhaseIsNotDisturbedByABadId) {
  ASSERT_TRUE(Prepare(PrepareWrite("p1")).ok());
  for (const std::string& value : Hostile()) {
    grpc::ClientContext context;
    stormark::v1::AbortRequest request;
    request.set_phase_id(value);
    stormark::v1::AbortReply reply;
    EXPECT_FALSE(stub_->Abort(&context, request, &reply).ok());
  }
  EXPECT_EQ(GetInfo().busy_with_phase(), "p1");
  // An empty heartbeat is one between phases; an empty abort is no wildcard, and is refused.
  grpc::ClientContext heartbeat_context;
  stormark::v1::HeartbeatReply heartbeat;
  ASSERT_TRUE(
      stub_->Heartbeat(&heartbeat_context, stormark::v1::HeartbeatRequest(), &heartbeat).ok());
  EXPECT_EQ(heartbeat.phase_id(), "p1");
  grpc::ClientContext abort_context;
  stormark::v1::AbortReply aborted;
  EXPECT_FALSE(stub_->Abort(&abort_context, stormark::v1::AbortRequest(), &aborted).ok());
  EXPECT_EQ(GetInfo().busy_with_phase(), "p1");
}

TEST_F(AgentServiceTest, OversizedRequestIsRefusedBeforeParsing) {
  stormark::v1::PrepareRequest request;
  *request.mutable_controller_protocol() = common::OurProtocol();
  request.mutable_spec()->set_phase_id("big");
  request.mutable_spec()->set_target("scratch");
  request.mutable_spec()->mutable_command()->add_argv(std::string(2 << 20, 'x'));
  grpc::Status status = Prepare(request);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_EQ(GetInfo().busy_with_phase(), "");
}

TEST_F(AgentServiceTest, PolicyRefusalIsPermissionDeniedAndLogged) {
  AgentConfig config = ConfigWithTarget();
  config.limits.max_size_bytes = kMiB;
  StartServer(common::OurProtocol(), config);
  grpc::Status status = Prepare(PrepareWrite("big", 2 * kMiB));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("limits.max_size (1 MiB)"));
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_THAT(Log(), Contains(AllOf(HasSubstr("refused prepare of phase 'big'"),
                                    HasSubstr("limits.max_size"), HasSubstr("[peer "))));
}

TEST_F(AgentServiceTest, PhaseRunningPastMaxRuntimeIsAborted) {
  AgentConfig config = ConfigWithTarget();
  config.commands.enabled = true;
  config.limits.max_runtime_nanos = 300'000'000;
  StartServer(common::OurProtocol(), config);
  stormark::v1::PrepareRequest request = PrepareWrite("slow");
  request.mutable_spec()->mutable_command()->set_shell("sleep 20");
  ASSERT_TRUE(Prepare(request).ok());
  const auto start = std::chrono::steady_clock::now();
  grpc::Status status;
  std::vector<stormark::v1::RunUpdate> updates = Run("slow", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  ASSERT_FALSE(updates.empty());
  const PhaseResult& result = updates.back().result();
  EXPECT_EQ(result.state(), PhaseResult::ABORTED);
  EXPECT_THAT(result.error(), HasSubstr("limits.max_runtime"));
}

TEST_F(AgentServiceTest, RunOfAnUnpreparedPhaseIsFailedPrecondition) {
  grpc::Status status;
  std::vector<stormark::v1::RunUpdate> updates = Run("p1", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("not prepared"));
  EXPECT_THAT(updates, IsEmpty());
}

TEST_F(AgentServiceTest, IncompatibleProtocolIsRefusedNamingBothVersions) {
  StartServer(MakeVersion(2, 0));
  stormark::v1::AgentInfo info = GetInfo();
  EXPECT_EQ(info.protocol().major(), 2u);

  grpc::Status status = Prepare(PrepareWrite("p1"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(),
              HasSubstr(common::StrCat("speaks protocol ", common::kProtocolMajor, ".",
                                       common::kProtocolMinor)));
  EXPECT_THAT(status.error_message(), HasSubstr("2.0"));
  EXPECT_THAT(status.error_message(), HasSubstr("major versions differ"));
  EXPECT_EQ(GetInfo().busy_with_phase(), "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_THAT(Log(), Contains(HasSubstr("refused prepare")));
}

TEST_F(AgentServiceTest, NewerMinorProtocolIsAccepted) {
  stormark::v1::PrepareRequest request = PrepareWrite("p1");
  *request.mutable_controller_protocol() = MakeVersion(common::kProtocolMajor, 99);
  grpc::Status status = Prepare(request);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AgentServiceTest, AbortReportsWhetherThereWasAPhase) {
  ASSERT_TRUE(Prepare(PrepareWrite("p1")).ok());
  for (bool expected : {true, false}) {
    grpc::ClientContext context;
    stormark::v1::AbortRequest request;
    request.set_phase_id("p1");
    request.set_phase_token(token_);
    stormark::v1::AbortReply reply;
    ASSERT_TRUE(stub_->Abort(&context, request, &reply).ok());
    EXPECT_EQ(reply.aborted(), expected);
  }
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST_F(AgentServiceTest, CancelledRunCallFreesTheSlot) {
  ASSERT_TRUE(Prepare(PrepareWrite("p1", uint64_t{1} << 30, 4096)).ok());
  grpc::ClientContext context;
  stormark::v1::RunRequest request;
  request.set_phase_id("p1");
  request.set_phase_token(token_);
  request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos());
  auto reader = stub_->Run(&context, request);
  stormark::v1::RunUpdate update;
  ASSERT_TRUE(reader->Read(&update));
  EXPECT_TRUE(update.has_progress());
  context.TryCancel();
  while (reader->Read(&update)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);

  // The agent notices within a poll or two and frees the slot by itself.
  std::string busy = "p1";
  for (int i = 0; i < 250 && !busy.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    busy = GetInfo().busy_with_phase();
  }
  EXPECT_EQ(busy, "");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_TRUE(Prepare(PrepareWrite("p2")).ok());
}

TEST_F(AgentServiceTest, ShutdownRemovesTheHeldPhasesFiles) {
  ASSERT_TRUE(Prepare(PrepareWrite("p1")).ok());
  server_->Shutdown();
  EXPECT_THAT(ListDir(dir()), IsEmpty());
}

TEST(ToGrpc, KeepsCodeAndMessage) {
  EXPECT_TRUE(ToGrpc(absl::OkStatus()).ok());
  grpc::Status status = ToGrpc(absl::NotFoundError("no such target"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "no such target");
  EXPECT_EQ(ToGrpc(absl::FailedPreconditionError("x")).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

class AgentServerTest : public TempDirTest {};

TEST_F(AgentServerTest, RefusesANonLoopbackAddressWithoutInsecure) {
  AgentServerOptions options;
  options.listen = "0.0.0.0:0";
  options.config = ConfigWithTarget();
  options.protocol = common::OurProtocol();
  common::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(std::move(options), common::SystemClock());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(server.status().message(), HasSubstr("--insecure"));
}

TEST_F(AgentServerTest, RefusesABadAddress) {
  AgentServerOptions options;
  options.listen = "::1";
  options.config = ConfigWithTarget();
  common::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(std::move(options), common::SystemClock());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(AgentServerTest, ListensOnAUnixSocket) {
  AgentServerOptions options;
  options.listen = common::StrCat("unix:", dir(), "/agent.sock");
  options.config = ConfigWithTarget();
  options.protocol = common::OurProtocol();
  common::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(std::move(options), common::SystemClock());
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->address(), common::StrCat("unix:", dir(), "/agent.sock"));

  auto stub = stormark::v1::Agent::NewStub(
      grpc::CreateChannel((*server)->address(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  stormark::v1::AgentInfo info;
  grpc::Status status = stub->GetInfo(&context, stormark::v1::GetInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(info.targets_size(), 1);
}

// Leftover phase directories are named in the start-up warning as read from disk, where
// anyone may have made them: escaped, and only the first few of many.
TEST_F(AgentServerTest, LeftoverDirectoryNamesAreEscapedAndFewAreListed) {
  auto start = [&] {
    std::vector<std::string> log;
    AgentServerOptions options;
    options.listen = "127.0.0.1:0";
    options.insecure = true;
    options.config = ConfigWithTarget();
    options.protocol = common::OurProtocol();
    options.log = [&log](const std::string& line) { log.push_back(line); };
    common::StatusOr<std::unique_ptr<AgentServer>> server =
        AgentServer::Start(std::move(options), common::SystemClock());
    EXPECT_TRUE(server.ok()) << server.status();
    if (server.ok()) server->reset();  // Before `log` is handed back.
    // Only the leftovers' line: --insecure adds its own warning.
    std::erase_if(
        log, [](const std::string& line) { return line.find(".stormark-") == std::string::npos; });
    return log;
  };
  ASSERT_EQ(mkdir((dir() + "/.stormark-x\nstormark-agent: forged \x1b[2J").c_str(), 0700), 0);
  std::vector<std::string> log = start();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_THAT(log[0], HasSubstr(".stormark-x\\x0astormark-agent: forged \\x1b[2J"));
  EXPECT_EQ(log[0].find_first_of("\n\x1b"), std::string::npos) << log[0];

  for (int i = 0; i < 11; ++i) {
    ASSERT_EQ(mkdir(common::StrCat(dir(), "/.stormark-p", i).c_str(), 0700), 0);
  }
  log = start();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_THAT(log[0], HasSubstr(" and 4 more; remove them by hand"));
  EXPECT_EQ(log[0].find('\n'), std::string::npos) << log[0];
}

TEST_F(AgentServerTest, PortInUseIsUnavailable) {
  // A plain listening socket without SO_REUSEPORT, so gRPC cannot share the port.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof(addr);
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);

  AgentServerOptions options;
  options.listen = common::StrCat("127.0.0.1:", ntohs(addr.sin_port));
  options.insecure = true;
  options.config = ConfigWithTarget();
  options.protocol = common::OurProtocol();
  common::StatusOr<std::unique_ptr<AgentServer>> server =
      AgentServer::Start(std::move(options), common::SystemClock());
  close(fd);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(server.status().message(), HasSubstr("cannot listen"));
  EXPECT_THAT(server.status().message(), HasSubstr("the port is in use"));
}

class ServerOnUnixSocketTest : public TempDirTest {
 protected:
  common::StatusOr<std::unique_ptr<AgentServer>> Start(AgentServerOptions options) {
    options.config = ConfigWithTarget();
    options.protocol = common::OurProtocol();
    options.log = [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(log_mu_);
      log_.push_back(line);
    };
    return AgentServer::Start(std::move(options), common::SystemClock());
  }

  AgentServerOptions Options(const std::string& listen, bool insecure = false) {
    AgentServerOptions options;
    options.listen = listen;
    options.insecure = insecure;
    return options;
  }

  std::string Socket() const { return common::StrCat("unix:", dir(), "/agent.sock"); }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  static grpc::Status GetInfo(const std::string& address, stormark::v1::AgentInfo* info) {
    auto stub = stormark::v1::Agent::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return stub->GetInfo(&context, stormark::v1::GetInfoRequest(), info);
  }

  std::mutex log_mu_;
  std::vector<std::string> log_;  // Guarded by log_mu_.
};

TEST_F(ServerOnUnixSocketTest, TheDefaultIsAUnixSocketUnderRun) {
  EXPECT_EQ(AgentServerOptions().listen, "unix:/run/stormark/agent.sock");
  EXPECT_FALSE(AgentServerOptions().insecure);
}

TEST_F(ServerOnUnixSocketTest, PlainTextOnLoopbackNeedsInsecure) {
  auto server = Start(Options("127.0.0.1:0"));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(server.status().message(),
              AllOf(HasSubstr("every local user"), HasSubstr("--insecure"),
                    HasSubstr("unix:/run/stormark/agent.sock")));
  EXPECT_THAT(Log(), IsEmpty());
}

TEST_F(ServerOnUnixSocketTest, InsecureTcpWarnsThatEveryLocalUserMayCommandIt) {
  auto server = Start(Options("127.0.0.1:0", /*insecure=*/true));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_EQ((*server)->security(), "plain text, --insecure");
  EXPECT_THAT(Log(),
              Contains(AllOf(HasSubstr("warning: --insecure"), HasSubstr("every local user"))));
}

TEST_F(ServerOnUnixSocketTest, ASecondAgentOnAHeldPortFailsAndTheFirstKeepsServing) {
  auto first = Start(Options("127.0.0.1:0", true));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Start(Options((*first)->address(), true));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(second.status().message(), HasSubstr("the port is in use"));
  stormark::v1::AgentInfo info;
  EXPECT_TRUE(GetInfo((*first)->address(), &info).ok());
}

TEST_F(ServerOnUnixSocketTest, ASecondAgentOnAHeldSocketFailsAndTheFirstKeepsServing) {
  auto first = Start(Options(Socket()));
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = Start(Options(Socket()));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr("another stormark-agent serves"));
  for (int i = 0; i < 3; ++i) {
    stormark::v1::AgentInfo info;
    grpc::Status status = GetInfo(Socket(), &info);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
}

TEST_F(ServerOnUnixSocketTest, TheCallerIsNamedByItsUnixCredentials) {
  auto server = Start(Options(Socket()));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->security(), HasSubstr("peer credentials checked, socket 0660"));
  auto stub = stormark::v1::Agent::NewStub(
      grpc::CreateChannel(Socket(), grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  stormark::v1::PrepareReply reply;
  grpc::Status status = stub->Prepare(&context, PrepareWrite("p1"), &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(Log(), Contains(AllOf(HasSubstr("prepared phase 'p1'"),
                                    HasSubstr(common::StrCat("[peer uid ", geteuid())),
                                    HasSubstr(common::StrCat(" pid ", getpid(), "]")))));
  (*server)->Shutdown();
  struct stat st;
  EXPECT_NE(lstat((dir() + "/agent.sock").c_str(), &st), 0) << "the socket outlives the agent";
}

}  // namespace
}  // namespace stormark::agent
