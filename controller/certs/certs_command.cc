#include "controller/certs/certs_command.h"

#include <cstdlib>
#include <filesystem>

#include "common/strings.h"
#include "controller/certs/cert_authority.h"

namespace stormark::controller {
namespace {

using common::StrCat;

int Fail(std::FILE* err, const common::Status& status) {
  std::fprintf(err, "stormark: %s\n", std::string(status.message()).c_str());
  return absl::IsInvalidArgument(status) || absl::IsNotFound(status) ||
                 absl::IsAlreadyExists(status)
             ? 2
             : 1;
}

std::string DirOf(const CertsOptions& options) {
  return options.dir.empty() ? DefaultCertsDir() : options.dir;
}

}  // namespace

std::string DefaultCertsDir() {
  const char* config_home = std::getenv("XDG_CONFIG_HOME");
  if (config_home != nullptr && config_home[0] == '/') return StrCat(config_home, "/stormark/pki");
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] != '\0') return StrCat(home, "/.config/stormark/pki");
  return "stormark-pki";
}

int CertsInit(const CertsOptions& options, std::FILE* out, std::FILE* err) {
  auto type = ParseKeyType(options.key_type);
  if (!type.ok()) return Fail(err, type.status());
  const std::string dir = DirOf(options);
  const std::filesystem::path parent = std::filesystem::path(dir).parent_path();
  std::error_code error;
  if (!parent.empty()) std::filesystem::create_directories(parent, error);
  if (error)
    return Fail(err, common::ErrnoError(StrCat("cannot create ", parent.string()), error.value()));
  auto files = InitCertificateAuthority(dir, *type, options.days);
  if (!files.ok()) return Fail(err, files.status());
  std::fprintf(out,
               "CA certificate: %s\nCA key:         %s (mode 0600; keep it on this machine only)\n"
               "Next: stormark certs issue --dir %s --agent HOST  (one per agent)\n"
               "      stormark certs issue --dir %s --controller\n",
               files->cert.c_str(), files->key.c_str(), dir.c_str(), dir.c_str());
  return 0;
}

int CertsIssue(const CertsOptions& options, std::FILE* out, std::FILE* err) {
  const bool agent = !options.agent.empty();
  if (agent == options.for_controller) {
    return Fail(err, absl::InvalidArgumentError(
                         "certs issue: give exactly one of --agent NAME and --controller [NAME]"));
  }
  auto type = ParseKeyType(options.key_type);
  if (!type.ok()) return Fail(err, type.status());
  CertificateRequest request;
  request.role = agent ? CertificateRequest::Role::kAgent : CertificateRequest::Role::kController;
  request.name =
      agent ? options.agent : (options.controller.empty() ? "controller" : options.controller);
  request.ips = options.ips;
  request.dns = options.dns;
  request.type = *type;
  request.days = options.days;
  const std::string dir = DirOf(options);
  auto files = IssueCertificate(dir, request);
  if (!files.ok()) return Fail(err, files.status());
  std::fprintf(out, "%s certificate for %s: %s\nkey: %s (mode 0600)\n",
               agent ? "Agent" : "Controller", request.name.c_str(), files->cert.c_str(),
               files->key.c_str());
  if (agent) {
    // Only the files above were written; the paths on the agent's host are for the admin to
    // choose, so they are given as a copy to make, never as if they existed.
    std::fprintf(out,
                 "On %s, copy them where its agent.yaml will name them, for example:\n"
                 "  %s/ca.crt -> /etc/stormark/ca.crt\n"
                 "  %s -> /etc/stormark/agent.crt\n"
                 "  %s -> /etc/stormark/agent.key  (mode 0600, readable by the agent only)\n"
                 "and give its agent.yaml:\n"
                 "  tls: {ca: /etc/stormark/ca.crt, cert: /etc/stormark/agent.crt, "
                 "key: /etc/stormark/agent.key}\n",
                 request.name.c_str(), dir.c_str(), files->cert.c_str(), files->key.c_str());
  } else {
    std::fprintf(out,
                 "Use it with: stormark run --tls-ca %s/ca.crt --tls-cert %s --tls-key %s ...\n",
                 dir.c_str(), files->cert.c_str(), files->key.c_str());
  }
  return 0;
}

}  // namespace stormark::controller
