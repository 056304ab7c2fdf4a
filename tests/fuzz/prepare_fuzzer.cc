// Fuzzes the agent's request handling: the input is a serialized PhaseSpec, sent as a Prepare
// through a real AgentService over its in-process channel (no network), then cleaned up. The
// agent's config is what a careful admin would give a shared host: one dir target in a
// private temporary directory, commands and tuning off, and small caps, so that a valid spec
// lays out at most 1 MiB and nothing runs for long.
#include <stdlib.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "agent/rpc/server.h"
#include "common/clock.h"
#include "common/version.h"
#include "stormark/v1/agent.grpc.pb.h"

namespace {

struct Harness {
  std::string dir;
  std::unique_ptr<stormark::agent::AgentServer> server;
  std::unique_ptr<stormark::v1::Agent::Stub> stub;

  Harness() {
    std::string pattern = "/var/tmp/stormark-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) abort();
    dir = pattern;
    stormark::agent::AgentServerOptions options;
    options.listen = "unix:" + dir + "/agent.sock";
    stormark::agent::TargetConfig target;
    target.name = "scratch";
    target.kind = "dir";
    target.path = dir;
    options.config.targets.push_back(target);
    options.config.allow_drop_caches = false;
    options.config.limits.max_size_bytes = 1 << 20;
    options.config.limits.max_runtime_nanos = 2'000'000'000;
    options.config.limits.max_files = 200;
    options.protocol = stormark::common::OurProtocol();
    auto started =
        stormark::agent::AgentServer::Start(std::move(options), stormark::common::SystemClock());
    if (!started.ok()) abort();
    server = std::move(*started);
    stub = stormark::v1::Agent::NewStub(server->InProcessChannel());
  }
  ~Harness() {
    server.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

// The agent and its channel live for the whole process; made before fuzzing starts, so
// gRPC's one-time allocations are not taken for leaks of the first input.
Harness& TheHarness() {
  static Harness* harness = [] {
    auto* h = new Harness();
    atexit([] { delete &TheHarness(); });
    return h;
  }();
  return *harness;
}

void Send(const stormark::v1::PhaseSpec& spec) {
  Harness& harness = TheHarness();
  stormark::v1::PrepareRequest request;
  *request.mutable_spec() = spec;
  *request.mutable_controller_protocol() = stormark::common::OurProtocol();
  grpc::ClientContext prepare_context;
  stormark::v1::PrepareReply reply;
  harness.stub->Prepare(&prepare_context, request, &reply);
  // The in-process channel is the agent's own: the local operator, who may end any phase.
  grpc::ClientContext abort_context;
  stormark::v1::AbortHeldPhaseRequest abort_request;
  stormark::v1::AbortHeldPhaseReply abort_reply;
  harness.stub->AbortHeldPhase(&abort_context, abort_request, &abort_reply);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  stormark::v1::PhaseSpec warm_up;
  warm_up.set_phase_id("warm-up");
  warm_up.set_target("scratch");
  Send(warm_up);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  stormark::v1::PhaseSpec spec;
  if (!spec.ParseFromArray(data, static_cast<int>(size))) return 0;
  Send(spec);
  return 0;
}
