// AgentService with several callers: each call says who it is in a test-only metadata entry
// that the test's identify function reads (the real one reads the transport). A phase
// belongs to the caller that prepared it; the others are refused, and the log says so.
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/runner/phase_runner.h"
#include "agent/rpc/server.h"
#include "agent/rpc/service.h"
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
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kWho[] = "x-test-identity";

// "operator" is root on the unix socket; any other value is a certificate's CN.
PeerIdentity FromMetadata(const grpc::ServerContext& context) {
  PeerIdentity peer;
  const auto found = context.client_metadata().find(kWho);
  const std::string who = found == context.client_metadata().end()
                              ? "nobody"
                              : std::string(found->second.data(), found->second.size());
  if (who == "operator") {
    peer.kind = PeerIdentity::Kind::kUnixUser;
    peer.uid = 0;
    peer.gid = 0;
    peer.user = "root";
  } else {
    peer.kind = PeerIdentity::Kind::kCertificate;
    peer.common_name = who;
    peer.address = "test";
  }
  return peer;
}

class ServiceOwnershipTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    Start(ConfigWithTarget());
  }

  void TearDown() override {
    Stop();
    TempDirTest::TearDown();
  }

  void Stop() {
    stub_.reset();
    if (server_) server_->Shutdown();
    server_.reset();
    service_.reset();
    runner_.reset();
  }

  void Start(AgentConfig config) {
    Stop();
    HostFacts host;
    host.ram_bytes = uint64_t{64} << 30;
    runner_ = std::make_unique<PhaseRunner>(std::move(config), host, common::SystemClock());
    service_ = std::make_unique<AgentService>(
        *runner_, common::SystemClock(),
        [this](const std::string& line) {
          std::lock_guard<std::mutex> lock(log_mu_);
          log_.push_back(line);
        },
        common::OurProtocol(), FromMetadata);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = stormark::v1::Agent::NewStub(server_->InProcessChannel(grpc::ChannelArguments()));
  }

  std::unique_ptr<grpc::ClientContext> As(const std::string& who) {
    auto context = std::make_unique<grpc::ClientContext>();
    context->AddMetadata(kWho, who);
    return context;
  }

  std::vector<std::string> Log() {
    std::lock_guard<std::mutex> lock(log_mu_);
    return log_;
  }

  // Prepares a small stream write as `who`; returns the reply.
  stormark::v1::PrepareReply Prepare(const std::string& who, grpc::Status* status,
                                     bool write = true, const std::string& target = "scratch") {
    stormark::v1::PrepareRequest request;
    *request.mutable_controller_protocol() = common::OurProtocol();
    stormark::v1::PhaseSpec* spec = request.mutable_spec();
    spec->set_phase_id("p1");
    spec->set_target(target);
    spec->set_progress_interval_ms(10);
    spec->mutable_stream()->set_direction(write ? stormark::v1::StreamSpec::WRITE
                                                : stormark::v1::StreamSpec::READ);
    spec->mutable_stream()->set_size_bytes(2 << 20);
    spec->mutable_stream()->set_block_size(1 << 16);
    stormark::v1::PrepareReply reply;
    *status = stub_->Prepare(As(who).get(), request, &reply);
    return reply;
  }

  grpc::Status Run(const std::string& who, const std::string& token,
                   stormark::v1::PhaseResult* result = nullptr) {
    auto context = As(who);
    stormark::v1::RunRequest request;
    request.set_phase_id("p1");
    request.set_phase_token(token);
    request.set_start_at_unix_nanos(common::SystemClock().NowUnixNanos());
    auto reader = stub_->Run(context.get(), request);
    stormark::v1::RunUpdate update;
    while (reader->Read(&update)) {
      if (update.has_result() && result != nullptr) *result = update.result();
    }
    return reader->Finish();
  }

  grpc::Status Abort(const std::string& who, const std::string& phase, const std::string& token,
                     bool* aborted = nullptr) {
    stormark::v1::AbortRequest request;
    request.set_phase_id(phase);
    request.set_phase_token(token);
    stormark::v1::AbortReply reply;
    grpc::Status status = stub_->Abort(As(who).get(), request, &reply);
    if (aborted != nullptr) *aborted = reply.aborted();
    return status;
  }

  grpc::Status Cleanup(const std::string& who, const std::string& token) {
    stormark::v1::CleanupRequest request;
    request.set_phase_id("p1");
    request.set_phase_token(token);
    stormark::v1::CleanupReply reply;
    return stub_->Cleanup(As(who).get(), request, &reply);
  }

  grpc::Status Heartbeat(const std::string& who, const std::string& token) {
    stormark::v1::HeartbeatRequest request;
    request.set_phase_id("p1");
    request.set_phase_token(token);
    stormark::v1::HeartbeatReply reply;
    return stub_->Heartbeat(As(who).get(), request, &reply);
  }

  std::unique_ptr<PhaseRunner> runner_;
  std::unique_ptr<AgentService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<stormark::v1::Agent::Stub> stub_;
  std::mutex log_mu_;
  std::vector<std::string> log_;  // Guarded by log_mu_.
};

TEST_F(ServiceOwnershipTest, AnotherIdentityCannotTakeOverThePhase) {
  grpc::Status status;
  const std::string token = Prepare("controller", &status).phase_token();
  ASSERT_TRUE(status.ok()) << status.error_message();

  // What the second controller can see: the phase id, never the token.
  stormark::v1::AgentInfo info;
  stormark::v1::GetInfoRequest info_request;
  ASSERT_TRUE(stub_->GetInfo(As("intruder").get(), info_request, &info).ok());
  EXPECT_EQ(info.busy_with_phase(), "p1");
  EXPECT_THAT(info.SerializeAsString(), Not(HasSubstr(token)));

  for (const std::string& presented : {std::string(), token}) {
    std::vector<grpc::Status> refusals = {
        Abort("intruder", "p1", presented), Cleanup("intruder", presented),
        Run("intruder", presented), Heartbeat("intruder", presented)};
    for (const grpc::Status& refused : refusals) {
      EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED)
          << refused.error_message();
      EXPECT_THAT(refused.error_message(),
                  AllOf(HasSubstr("CN=intruder may not"), HasSubstr("another identity"),
                        Not(HasSubstr("CN=controller")), Not(HasSubstr(token))));
    }
  }
  // There is no wildcard.
  grpc::Status wildcard = Abort("intruder", "", "");
  EXPECT_EQ(wildcard.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ListDir(dir()), Contains(".stormark-p1"));

  // The owner's phase is untouched.
  ASSERT_TRUE(Heartbeat("controller", token).ok());
  PhaseResult result;
  status = Run("controller", token, &result);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(result.state(), PhaseResult::SUCCEEDED) << result.error();
  ASSERT_TRUE(Cleanup("controller", token).ok());
  EXPECT_THAT(ListDir(dir()), IsEmpty());

  // Every refusal is in the log with the caller, and the owner for the operator to see.
  const std::vector<std::string> log = Log();
  for (const char* verb : {"abort", "cleanup", "run", "heartbeat for"}) {
    EXPECT_THAT(log, Contains(AllOf(HasSubstr(common::StrCat("refused ", verb, " ")),
                                    HasSubstr("(held by CN=controller)"),
                                    HasSubstr("[peer test CN=intruder]"))))
        << verb;
  }
  EXPECT_THAT(log, Contains(AllOf(HasSubstr("refused abort of phase ''"),
                                  HasSubstr("[peer test CN=intruder]"))));
  EXPECT_THAT(log, Contains(AllOf(HasSubstr("cleaned up phase 'p1'"),
                                  HasSubstr("[peer test CN=controller]"))));
  for (const std::string& line : log) EXPECT_THAT(line, Not(HasSubstr(token)));
}

TEST_F(ServiceOwnershipTest, OnlyTheLocalOperatorMayAbortTheHeldPhase) {
  grpc::Status status;
  Prepare("controller", &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  stormark::v1::AbortHeldPhaseRequest request;
  request.set_reason("stuck controller");
  stormark::v1::AbortHeldPhaseReply reply;
  status = stub_->AbortHeldPhase(As("controller").get(), request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("only the local operator"));
  EXPECT_THAT(ListDir(dir()), Contains(".stormark-p1"));

  status = stub_->AbortHeldPhase(As("operator").get(), request, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.phase_id(), "p1");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  status = stub_->AbortHeldPhase(As("operator").get(), request, &reply);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(reply.phase_id(), "");

  const std::vector<std::string> log = Log();
  EXPECT_THAT(log, Contains(AllOf(HasSubstr("refused forced abort"),
                                  HasSubstr("[peer test CN=controller]"))));
  EXPECT_THAT(log, Contains(AllOf(HasSubstr("forced abort of phase 'p1' (held by CN=controller): "
                                            "stuck controller"),
                                  HasSubstr("[peer uid 0 (root) gid 0]"))));
}

TEST_F(ServiceOwnershipTest, ReadOnlyIdentityIsRefusedAWritePhaseNamingTheRule) {
  AgentConfig config = ConfigWithTarget();
  IdentityRule rule;
  rule.cn = "reader";
  rule.targets = {"scratch"};
  rule.where = "agent.yaml:7";
  config.identities.push_back(rule);
  Start(config);
  grpc::Status status;
  Prepare("reader", &status, /*write=*/true);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(),
            "CN=reader may not write to target 'scratch' (stream): identities rule at "
            "agent.yaml:7 (cn: reader) has write: false");
  EXPECT_THAT(ListDir(dir()), IsEmpty());
  EXPECT_THAT(Log(), Contains(AllOf(HasSubstr("refused prepare of phase 'p1'"),
                                    HasSubstr("[peer test CN=reader]"))));
  // A read is allowed; another identity nothing.
  const std::string token = Prepare("reader", &status, /*write=*/false).phase_token();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(Cleanup("reader", token).ok());
  Prepare("writer", &status);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("CN=writer may not prepare phases"));
}

TEST_F(ServiceOwnershipTest, AControllerWithoutPhaseTokensIsRefusedAtPrepare) {
  stormark::v1::PrepareRequest request;
  request.mutable_controller_protocol()->set_major(common::kProtocolMajor);
  request.mutable_controller_protocol()->set_minor(1);
  request.mutable_spec()->set_phase_id("p1");
  request.mutable_spec()->set_target("scratch");
  stormark::v1::PrepareReply reply;
  grpc::Status status = stub_->Prepare(As("controller").get(), request, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("no phase tokens"));
  EXPECT_THAT(status.error_message(), HasSubstr("upgrade the controller"));
}

class CallerIdentityTest : public TempDirTest {
 protected:
  std::unique_ptr<AgentServer> Serve(const std::string& listen) {
    AgentServerOptions options;
    options.listen = listen;
    options.insecure = true;  // Plain text on loopback TCP, for the test.
    options.config = ConfigWithTarget();
    options.protocol = common::OurProtocol();
    common::StatusOr<std::unique_ptr<AgentServer>> server =
        AgentServer::Start(std::move(options), common::SystemClock());
    EXPECT_TRUE(server.ok()) << server.status();
    return server.ok() ? std::move(*server) : nullptr;
  }

  static grpc::Status ForceAbort(const std::shared_ptr<grpc::Channel>& channel) {
    auto stub = stormark::v1::Agent::NewStub(channel);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    stormark::v1::AbortHeldPhaseReply reply;
    return stub->AbortHeldPhase(&context, stormark::v1::AbortHeldPhaseRequest(), &reply);
  }
};

TEST_F(CallerIdentityTest, PlainTextTcpIsAnAddressWithoutItsPort) {
  std::unique_ptr<AgentServer> server = Serve("127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  grpc::Status refused =
      ForceAbort(grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials()));
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(refused.error_message(),
              HasSubstr("unauthenticated ipv4:127.0.0.1 may not abort the held phase"));
}

TEST_F(CallerIdentityTest, TheAgentsOwnInProcessChannelIsTheLocalOperator) {
  std::unique_ptr<AgentServer> server = Serve("127.0.0.1:0");
  ASSERT_NE(server, nullptr);
  grpc::Status status = ForceAbort(server->InProcessChannel());
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(CallerIdentityTest, RootOnTheUnixSocketIsTheLocalOperator) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: the operator is root or the agent's user";
  std::unique_ptr<AgentServer> server = Serve("unix:" + dir() + "/agent.sock");
  ASSERT_NE(server, nullptr);
  grpc::Status status =
      ForceAbort(grpc::CreateChannel(server->address(), grpc::InsecureChannelCredentials()));
  EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
}  // namespace stormark::agent
