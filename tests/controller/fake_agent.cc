#include "tests/controller/fake_agent.h"

#include "common/clock.h"
#include "common/strings.h"
#include "common/version.h"

namespace stormark::controller {

bool FakeAgent::Serve() {
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
  builder.RegisterService(this);
  server_ = builder.BuildAndStart();
  return server_ != nullptr;
}

void FakeAgent::Shutdown() {
  if (server_ == nullptr) return;
  server_->Shutdown();
  server_.reset();
}

std::unique_ptr<AgentClient> FakeAgent::Client() const {
  const std::string address = common::StrCat("127.0.0.1:", port_);
  return std::make_unique<AgentClient>(address, AgentClient::MakeChannel(address),
                                       common::SystemClock());
}

grpc::Status FakeAgent::GetInfo(grpc::ServerContext*, const stormark::v1::GetInfoRequest*,
                                stormark::v1::AgentInfo* info) {
  info->set_agent_version(common::StrCat("0.1.0-", name_));
  *info->mutable_protocol() = common::OurProtocol();
  info->set_hostname(name_);
  stormark::v1::TargetInfo* target = info->add_targets();
  target->set_name("scratch");
  target->set_kind("dir");
  info->set_now_unix_nanos(Now());
  return grpc::Status::OK;
}

grpc::Status FakeAgent::SyncClock(grpc::ServerContext*,
                                  const stormark::v1::SyncClockRequest* request,
                                  stormark::v1::SyncClockReply* reply) {
  reply->set_controller_send_unix_nanos(request->controller_send_unix_nanos());
  const int64_t now = ClockReading();
  reply->set_agent_receive_unix_nanos(now);
  reply->set_agent_send_unix_nanos(now);
  return grpc::Status::OK;
}

grpc::Status FakeAgent::Prepare(grpc::ServerContext*, const stormark::v1::PrepareRequest*,
                                stormark::v1::PrepareReply* reply) {
  reply->set_prepared_unix_nanos(Now());
  reply->set_phase_token("0123456789abcdef0123456789abcdef");
  return grpc::Status::OK;
}

grpc::Status FakeAgent::Start(grpc::ServerContext*, const stormark::v1::StartRequest*,
                              stormark::v1::StartReply* reply) {
  reply->set_received_unix_nanos(Now());
  if (!started_.HasBeenNotified()) started_.Notify();
  return grpc::Status::OK;
}

grpc::Status FakeAgent::Heartbeat(grpc::ServerContext*,
                                  const stormark::v1::HeartbeatRequest* request,
                                  stormark::v1::HeartbeatReply* reply) {
  reply->set_now_unix_nanos(Now());
  reply->set_phase_id(request->phase_id());
  return grpc::Status::OK;
}

grpc::Status FakeAgent::Abort(grpc::ServerContext*, const stormark::v1::AbortRequest*,
                              stormark::v1::AbortReply*) {
  return grpc::Status::OK;
}

grpc::Status FakeAgent::Cleanup(grpc::ServerContext*, const stormark::v1::CleanupRequest*,
                                stormark::v1::CleanupReply*) {
  return grpc::Status::OK;
}

int64_t FakeAgent::ClockReading() { return Now(); }

int64_t FakeAgent::Now() { return common::SystemClock().NowUnixNanos(); }

}  // namespace stormark::controller
