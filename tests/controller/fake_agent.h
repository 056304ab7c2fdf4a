// An agent of this protocol in this process, for attacks on the controller: it answers every
// call at once as an agent does, and a test derives from it to make its agent misbehave in one
// way (never arm, lie in its result or its progress, read a clock no host has).
#ifndef STORMARK_TESTS_CONTROLLER_FAKE_AGENT_H_
#define STORMARK_TESTS_CONTROLLER_FAKE_AGENT_H_

#include <cstdint>
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/synchronization/notification.h"
#include "controller/fleet/agent_client.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace stormark::controller {

class FakeAgent : public stormark::v1::Agent::Service {
 public:
  // `name` is its hostname and the tail of its version ("0.1.0-NAME").
  explicit FakeAgent(std::string name) : name_(std::move(name)) {}
  ~FakeAgent() override { Shutdown(); }

  // Listens on 127.0.0.1 at a port the kernel picks. False when it cannot.
  bool Serve();
  // Stops listening, ending every call; also done on destruction.
  void Shutdown();
  // A controller's client for it.
  std::unique_ptr<AgentClient> Client() const;

  grpc::Status GetInfo(grpc::ServerContext*, const stormark::v1::GetInfoRequest*,
                       stormark::v1::AgentInfo* info) override;
  grpc::Status SyncClock(grpc::ServerContext*, const stormark::v1::SyncClockRequest* request,
                         stormark::v1::SyncClockReply* reply) override;
  grpc::Status Prepare(grpc::ServerContext*, const stormark::v1::PrepareRequest*,
                       stormark::v1::PrepareReply* reply) override;
  // Notifies started().
  grpc::Status Start(grpc::ServerContext*, const stormark::v1::StartRequest*,
                     stormark::v1::StartReply* reply) override;
  grpc::Status Heartbeat(grpc::ServerContext*, const stormark::v1::HeartbeatRequest* request,
                         stormark::v1::HeartbeatReply* reply) override;
  grpc::Status Abort(grpc::ServerContext*, const stormark::v1::AbortRequest*,
                     stormark::v1::AbortReply*) override;
  grpc::Status Cleanup(grpc::ServerContext*, const stormark::v1::CleanupRequest*,
                       stormark::v1::CleanupReply*) override;

 protected:
  // What its clock reads in SyncClock; the system's clock unless a test says otherwise.
  virtual int64_t ClockReading();
  static int64_t Now();
  // Notified by the first Start.
  absl::Notification& started() { return started_; }

 private:
  const std::string name_;
  absl::Notification started_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace stormark::controller

#endif  // STORMARK_TESTS_CONTROLLER_FAKE_AGENT_H_
