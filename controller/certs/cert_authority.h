// The certificates of a stormark fleet, made with OpenSSL's API: a private CA, agent
// certificates (serverAuth, subjectAltName = the agent's name and any --dns/--ip), and
// controller certificates (clientAuth). Keys are written with mode 0600 and never overwritten.
//
//   DIR/ca.crt  DIR/ca.key                       stormark certs init --dir DIR
//   DIR/agent-NAME.crt  DIR/agent-NAME.key       stormark certs issue --agent NAME
//   DIR/controller.crt  DIR/controller.key       stormark certs issue --controller
//   DIR/controller-NAME.crt ...                  stormark certs issue --controller NAME
#ifndef STORMARK_CONTROLLER_CERTS_CERT_AUTHORITY_H_
#define STORMARK_CONTROLLER_CERTS_CERT_AUTHORITY_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace stormark::controller {

enum class KeyType { kEcP256, kRsa2048 };

// "ec" (P-256) or "rsa" (2048 bits); INVALID_ARGUMENT otherwise.
common::StatusOr<KeyType> ParseKeyType(const std::string& text);

struct IssuedFiles {
  std::string cert;
  std::string key;
};

// Creates DIR (mode 0700) if needed, and a self-signed CA in it. ALREADY_EXISTS when DIR
// already holds a CA key.
common::StatusOr<IssuedFiles> InitCertificateAuthority(const std::string& dir, KeyType type,
                                                       int days);

struct CertificateRequest {
  enum class Role { kAgent, kController };
  Role role = Role::kAgent;
  // The agent's name (its subject CN and first subjectAltName), or the controller's
  // ("controller" by default). [A-Za-z0-9._-].
  std::string name;
  // More subjectAltNames: IP addresses and DNS names the agent is reached by.
  std::vector<std::string> ips;
  std::vector<std::string> dns;
  KeyType type = KeyType::kEcP256;
  int days = 825;
};

// The files IssueCertificate writes for `request` in `dir`.
IssuedFiles IssuedPaths(const std::string& dir, const CertificateRequest& request);

// Signs a new key pair with the CA in `dir`. ALREADY_EXISTS when the files exist;
// INVALID_ARGUMENT for a bad name, IP or DNS name.
common::StatusOr<IssuedFiles> IssueCertificate(const std::string& dir,
                                               const CertificateRequest& request);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_CERTS_CERT_AUTHORITY_H_
