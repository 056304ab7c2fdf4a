// `stormark certs init|issue`: the fleet's private CA and the key pairs it signs
// (controller/certs/cert_authority.h), with the next step printed for the user.
#ifndef STORMARK_CONTROLLER_CERTS_CERTS_COMMAND_H_
#define STORMARK_CONTROLLER_CERTS_CERTS_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace stormark::controller {

struct CertsOptions {
  // --dir: where the CA and the issued files live.
  std::string dir;
  // --key-type ec|rsa, --days.
  std::string key_type = "ec";
  int days = 825;
  // issue: exactly one of --agent NAME and --controller [NAME].
  std::string agent;
  std::string controller;
  bool for_controller = false;
  std::vector<std::string> ips;
  std::vector<std::string> dns;
};

// The default --dir: $XDG_CONFIG_HOME/stormark/pki, or ~/.config/stormark/pki.
std::string DefaultCertsDir();

// Exit codes: 0, 1 (could not write), 2 (bad input).
int CertsInit(const CertsOptions& options, std::FILE* out, std::FILE* err);
int CertsIssue(const CertsOptions& options, std::FILE* out, std::FILE* err);

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_CERTS_CERTS_COMMAND_H_
