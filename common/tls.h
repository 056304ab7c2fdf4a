// Mutual TLS between controller and agents: the three PEM files each side holds, checked
// before gRPC sees them so that a wrong file is one clear line, and gRPC credentials made
// from them. Both sides verify the peer against the same CA (`stormark certs init`): the agent
// requires a controller certificate (extended key usage clientAuth), the controller checks
// the agent's name against its certificate (serverAuth, subjectAltName).
#ifndef STORMARK_COMMON_TLS_H_
#define STORMARK_COMMON_TLS_H_

#include <memory>
#include <string>
#include <string_view>

#include <grpcpp/grpcpp.h>

#include "common/status.h"

namespace stormark::common {

// Paths of a CA certificate, this side's certificate and its private key. All three or none.
struct TlsFiles {
  std::string ca;
  std::string cert;
  std::string key;

  bool empty() const { return ca.empty() && cert.empty() && key.empty(); }
};

// The files' contents, checked: each parses, and the key matches the certificate.
struct TlsPem {
  std::string ca;
  std::string cert;
  std::string key;
  // The certificate's subject common name, for log lines ("controller", "db1").
  std::string common_name;
  // Set when the certificate is not signed by the CA: peers that trust only that CA will
  // refuse it. A warning, not an error: the CA file is for checking the peer.
  std::string warning;
};

// Reads and checks the files. `where` names their origin in errors ("agent.yaml tls",
// "--tls-*"): "--tls-*: key /etc/x.key does not match certificate /etc/x.crt". INVALID_ARGUMENT
// when some but not all of the paths are given.
StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files, std::string_view where);

// Agent side: require a client certificate signed by the CA.
std::shared_ptr<grpc::ServerCredentials> MutualTlsServerCredentials(const TlsPem& pem);

// Controller side: present our certificate, trust only the CA.
std::shared_ptr<grpc::ChannelCredentials> MutualTlsChannelCredentials(const TlsPem& pem);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_TLS_H_
