// What a failed call to an agent means for a user: gRPC's status as one line naming the host.
#include "controller/fleet/agent_client.h"

#include "common/strings.h"

namespace stormark::controller {

using common::Status;
using common::StrCat;

Status AgentClient::FromGrpc(const grpc::Status& status, std::string_view call) const {
  if (status.ok()) return absl::OkStatus();
  const auto code = static_cast<absl::StatusCode>(status.error_code());
  std::string message = status.error_message();
  auto has = [&](std::string_view text) { return message.find(text) != std::string::npos; };
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
    case grpc::StatusCode::UNKNOWN:
      // gRPC's text is long and technical; say what it means when we can tell. An agent that
      // refuses a handshake just closes the connection.
      if (tls_ && has("Peer name ") && has("is not in peer certificate")) {
        message =
            "TLS: the agent's certificate does not hold the name this controller expects "
            "(give the plan host a tls_name, or issue the agent's certificate with "
            "--dns/--ip for this address)";
      } else if (tls_ && has("certificate verify failed")) {
        message =
            "TLS: the agent's certificate does not verify against --tls-ca (signed by "
            "another CA?)";
      } else if (tls_ && has("wrong version number")) {
        message =
            "TLS: the agent speaks plain text (its config has no 'tls'); refusing to "
            "send it anything";
      } else if (tls_ && has("Socket closed")) {
        message =
            "TLS: the agent refused this controller's certificate (not signed by the "
            "agent's CA, or not a controller certificate; the agent's log says which)";
      } else if (!tls_ && has("Socket closed")) {
        message =
            "the agent closed the connection: it probably requires mutual TLS (give "
            "--tls-dir, or --tls-ca, --tls-cert and --tls-key)";
      } else if (status.error_code() == grpc::StatusCode::UNKNOWN) {
        break;
      } else if (message.find("Connection refused") != std::string::npos) {
        message = "unreachable: connection refused (is stormark-agent running there?)";
      } else if (message.find("DNS resolution failed") != std::string::npos) {
        message = "unreachable: the host name does not resolve";
      } else if (unix_socket_ && message.find("No such file") != std::string::npos) {
        // Only a unix socket's path can be missing; on TCP gRPC's words are kept whole.
        message = "unreachable: no such socket";
      } else if (message.find("Permission denied") != std::string::npos) {
        message =
            "cannot connect: permission denied on the agent's socket (it admits root and "
            "its group, usually 'stormark'; see ls -l on the socket)";
      } else {
        message = StrCat("unreachable (", message, ")");
      }
      break;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      // A listening socket whose process does not answer: the kernel accepts the connection.
      message = StrCat(call,
                       " timed out: the agent accepted the connection but did not answer (is "
                       "it stopped, hung or overloaded?)");
      break;
    case grpc::StatusCode::UNIMPLEMENTED:
      // gRPC's own words for a missing method; an agent's refusal keeps its message.
      if (message.empty() || message.starts_with("Method not found")) {
        message = StrCat("does not implement ", call, ": not a stormark agent, or too old");
      }
      break;
    default:
      break;
  }
  if (code == absl::StatusCode::kUnavailable || code == absl::StatusCode::kDeadlineExceeded) {
    message += where_;
  }
  return Status(code, StrCat("host ", host_, ": ", message));
}

}  // namespace stormark::controller
