// stormark-test-phase-caller: a second controller for the integration tests. It asks an agent
// which phase it holds (GetInfo), then makes each call a controller makes on a phase of its
// own (Abort, Cleanup, Run, Heartbeat) on that phase, with the token it was given (none by
// default), and prints one line per call:
//   busy_with_phase: run-1-write
//   abort: PERMISSION_DENIED: CN=intruder may not abort phase 'run-1-write': ...
// With --heartbeat-for SECONDS it only heartbeats the phase, twice a second, and prints
//   heartbeats: 12 refused, 0 ok (last: PERMISSION_DENIED: ...)
// It exists to show that a phase belongs to the controller that prepared it. Exit status 0
// when every call got an answer (whatever it said), 1 when the agent could not be reached.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "CLI/CLI.hpp"
#include "common/tls.h"
#include "common/version.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace {

std::string Outcome(const grpc::Status& status) {
  if (status.ok()) return "OK";
  static const char* const kNames[] = {"OK",
                                       "CANCELLED",
                                       "UNKNOWN",
                                       "INVALID_ARGUMENT",
                                       "DEADLINE_EXCEEDED",
                                       "NOT_FOUND",
                                       "ALREADY_EXISTS",
                                       "PERMISSION_DENIED",
                                       "RESOURCE_EXHAUSTED",
                                       "FAILED_PRECONDITION",
                                       "ABORTED",
                                       "OUT_OF_RANGE",
                                       "UNIMPLEMENTED",
                                       "INTERNAL",
                                       "UNAVAILABLE",
                                       "DATA_LOSS",
                                       "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  const std::string name = code >= 0 && code <= 16 ? kNames[code] : std::to_string(code);
  return name + ": " + status.error_message();
}

void Deadline(grpc::ClientContext* context) {
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"stormark-test-phase-caller: a second controller, for tests"};
  std::string address, phase, token, tls_name;
  stormark::common::TlsFiles tls;
  app.add_option("--agent", address, "agent address")->required();
  app.add_option("--phase", phase, "the phase to call (default: the one GetInfo names)");
  app.add_option("--token", token, "the phase token to present (default: none)");
  app.add_option("--tls-ca", tls.ca, "CA certificate");
  app.add_option("--tls-cert", tls.cert, "this caller's certificate");
  app.add_option("--tls-key", tls.key, "this caller's key");
  app.add_option("--tls-name", tls_name, "the name the agent's certificate must hold");
  double heartbeat_for = 0;
  app.add_option("--heartbeat-for", heartbeat_for,
                 "only heartbeat the phase, twice a second, for this many seconds");
  CLI11_PARSE(app, argc, argv);

  std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
  grpc::ChannelArguments args;
  if (!tls.empty()) {
    auto pem = stormark::common::LoadTlsFiles(tls, "--tls-*");
    if (!pem.ok()) {
      std::fprintf(stderr, "%s\n", std::string(pem.status().message()).c_str());
      return 2;
    }
    credentials = stormark::common::MutualTlsChannelCredentials(*pem);
    if (!tls_name.empty()) args.SetSslTargetNameOverride(tls_name);
  }
  auto stub = stormark::v1::Agent::NewStub(grpc::CreateCustomChannel(address, credentials, args));

  grpc::ClientContext info_context;
  Deadline(&info_context);
  stormark::v1::GetInfoRequest info_request;
  *info_request.mutable_controller_protocol() = stormark::common::OurProtocol();
  stormark::v1::AgentInfo info;
  grpc::Status status = stub->GetInfo(&info_context, info_request, &info);
  std::printf("getinfo: %s\n", Outcome(status).c_str());
  if (!status.ok()) return 1;
  std::printf("busy_with_phase: %s\n", info.busy_with_phase().c_str());
  if (phase.empty()) phase = info.busy_with_phase();

  if (heartbeat_for > 0) {
    int refused = 0, ok = 0;
    std::string last;
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(heartbeat_for * 1000));
    while (std::chrono::steady_clock::now() < until) {
      grpc::ClientContext context;
      Deadline(&context);
      stormark::v1::HeartbeatRequest request;
      request.set_phase_id(phase);
      request.set_phase_token(token);
      stormark::v1::HeartbeatReply reply;
      const grpc::Status answer = stub->Heartbeat(&context, request, &reply);
      (answer.ok() ? ok : refused) += 1;
      last = Outcome(answer);
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    std::printf("heartbeats: %d refused, %d ok (last: %s)\n", refused, ok, last.c_str());
    return 0;
  }

  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::AbortRequest request;
    request.set_phase_id(phase);
    request.set_phase_token(token);
    stormark::v1::AbortReply reply;
    std::printf("abort: %s\n", Outcome(stub->Abort(&context, request, &reply)).c_str());
  }
  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::AbortRequest request;  // The wildcard that no longer is.
    stormark::v1::AbortReply reply;
    std::printf("abort-any: %s\n", Outcome(stub->Abort(&context, request, &reply)).c_str());
  }
  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::CleanupRequest request;
    request.set_phase_id(phase);
    request.set_phase_token(token);
    stormark::v1::CleanupReply reply;
    std::printf("cleanup: %s\n", Outcome(stub->Cleanup(&context, request, &reply)).c_str());
  }
  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::RunRequest request;
    request.set_phase_id(phase);
    request.set_phase_token(token);
    auto reader = stub->Run(&context, request);
    stormark::v1::RunUpdate update;
    int updates = 0;
    while (reader->Read(&update)) ++updates;
    std::printf("run: %s (%d updates)\n", Outcome(reader->Finish()).c_str(), updates);
  }
  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::HeartbeatRequest request;
    request.set_phase_id(phase);
    request.set_phase_token(token);
    stormark::v1::HeartbeatReply reply;
    std::printf("heartbeat: %s\n", Outcome(stub->Heartbeat(&context, request, &reply)).c_str());
  }
  {
    grpc::ClientContext context;
    Deadline(&context);
    stormark::v1::AbortHeldPhaseReply reply;
    std::printf(
        "abort-held-phase: %s\n",
        Outcome(stub->AbortHeldPhase(&context, stormark::v1::AbortHeldPhaseRequest(), &reply))
            .c_str());
  }
  return 0;
}
