#include "controller/certs/cert_authority.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <memory>

#include "common/openssl_ptr.h"
#include "common/spec_check.h"
#include "common/strings.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

using Key = common::KeyPtr;
using Cert = common::X509Ptr;
using common::BioPtr;

Status SslError(std::string_view what) {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  char text[256] = "unknown OpenSSL error";
  if (code != 0) ERR_error_string_n(code, text, sizeof(text));
  return absl::InternalError(StrCat(what, ": ", text));
}

StatusOr<Key> NewKey(KeyType type) {
  Key key(type == KeyType::kEcP256 ? EVP_EC_gen("P-256") : EVP_RSA_gen(2048));
  if (!key) return SslError("cannot generate a key");
  return key;
}

Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str());
  if (ext == nullptr) return SslError(StrCat("bad certificate extension '", value, "'"));
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (added != 1) return SslError("cannot add a certificate extension");
  return absl::OkStatus();
}

// A certificate for `key` named `cn`, valid from 5 minutes ago (clock skew) for `days`, with
// a random 127-bit serial. Not yet signed, issuer not yet set.
StatusOr<Cert> NewCertificate(EVP_PKEY* key, const std::string& cn, int days) {
  Cert cert(X509_new());
  if (!cert) return SslError("X509_new");
  X509_set_version(cert.get(), 2);
  std::unique_ptr<BIGNUM, decltype(&BN_free)> serial(BN_new(), BN_free);
  if (!serial || BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) != 1 ||
      BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) == nullptr) {
    return SslError("cannot pick a serial number");
  }
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -300);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), static_cast<long>(days) * 86400);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>("stormark"), -1, -1, 0);
  if (X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                 reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1,
                                 0) != 1) {
    return SslError(StrCat("bad common name '", cn, "'"));
  }
  return cert;
}

// Writes `text` to a new file with `mode`; never replaces an existing one.
Status WriteNewFile(const std::string& path, const std::string& text, mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
  if (fd < 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(
          StrCat(path, " already exists; remove it first to replace it"));
    }
    return common::ErrnoError(StrCat("cannot create ", path), errno);
  }
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      close(fd);
      unlink(path.c_str());
      return common::ErrnoError(StrCat("cannot write ", path), err);
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0)
    return common::ErrnoError(StrCat("cannot write ", path), errno);
  return absl::OkStatus();
}

std::string BioText(BIO* bio) {
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

// Writes the key (0600) and then the certificate (0644). Both paths are checked first, so a
// refusal leaves nothing behind.
Status WritePair(const IssuedFiles& files, EVP_PKEY* key, X509* cert) {
  for (const std::string* path : {&files.key, &files.cert}) {
    struct stat st;
    if (lstat(path->c_str(), &st) == 0) {
      return absl::AlreadyExistsError(
          StrCat(*path, " already exists; remove it first to replace it"));
    }
  }
  BioPtr key_bio(BIO_new(BIO_s_mem()));
  BioPtr cert_bio(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_PrivateKey(key_bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1 ||
      PEM_write_bio_X509(cert_bio.get(), cert) != 1) {
    return SslError("cannot encode PEM");
  }
  RETURN_IF_ERROR(WriteNewFile(files.key, BioText(key_bio.get()), 0600));
  Status cert_written = WriteNewFile(files.cert, BioText(cert_bio.get()), 0644);
  if (!cert_written.ok()) unlink(files.key.c_str());
  return cert_written;
}

StatusOr<std::string> ReadFile(const std::string& path) {
  BioPtr bio(BIO_new_file(path.c_str(), "r"));
  if (!bio) {
    ERR_clear_error();
    return common::ErrnoError(StrCat("cannot read ", path), errno);
  }
  std::string text;
  char buffer[4096];
  int n;
  while ((n = BIO_read(bio.get(), buffer, sizeof(buffer))) > 0) text.append(buffer, n);
  return text;
}

bool IsDnsName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '*') {
      return false;
    }
  }
  return true;
}

}  // namespace

StatusOr<KeyType> ParseKeyType(const std::string& text) {
  if (text == "ec") return KeyType::kEcP256;
  if (text == "rsa") return KeyType::kRsa2048;
  return absl::InvalidArgumentError(
      StrCat("bad key type '", text, "': use ec (P-256) or rsa (2048 bits)"));
}

StatusOr<IssuedFiles> InitCertificateAuthority(const std::string& dir, KeyType type, int days) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return common::ErrnoError(StrCat("cannot create ", dir), errno);
  }
  const IssuedFiles files{StrCat(dir, "/ca.crt"), StrCat(dir, "/ca.key")};
  ASSIGN_OR_RETURN(Key key, NewKey(type));
  ASSIGN_OR_RETURN(Cert cert, NewCertificate(key.get(), "stormark CA", days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(
      AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage, "critical,keyCertSign,cRLSign"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return SslError("cannot sign the CA");
  RETURN_IF_ERROR(WritePair(files, key.get(), cert.get()));
  return files;
}

IssuedFiles IssuedPaths(const std::string& dir, const CertificateRequest& request) {
  std::string base;
  if (request.role == CertificateRequest::Role::kAgent) {
    base = StrCat("agent-", request.name);
  } else {
    base = request.name == "controller" ? "controller" : StrCat("controller-", request.name);
  }
  return {StrCat(dir, "/", base, ".crt"), StrCat(dir, "/", base, ".key")};
}

StatusOr<IssuedFiles> IssueCertificate(const std::string& dir, const CertificateRequest& request) {
  if (!common::IsValidName(request.name)) {
    return absl::InvalidArgumentError(StrCat(
        "bad name '", request.name, "': 1-64 characters of A-Z a-z 0-9 . _ - (a host name)"));
  }
  std::string san = StrCat("DNS:", request.name);
  for (const std::string& ip : request.ips) {
    in_addr v4;
    in6_addr v6;
    if (inet_pton(AF_INET, ip.c_str(), &v4) != 1 && inet_pton(AF_INET6, ip.c_str(), &v6) != 1) {
      return absl::InvalidArgumentError(StrCat("--ip ", ip, ": not an IPv4 or IPv6 address"));
    }
    san += StrCat(",IP:", ip);
  }
  for (const std::string& name : request.dns) {
    if (!IsDnsName(name))
      return absl::InvalidArgumentError(StrCat("--dns ", name, ": not a DNS name"));
    san += StrCat(",DNS:", name);
  }

  const std::string ca_cert_path = StrCat(dir, "/ca.crt"), ca_key_path = StrCat(dir, "/ca.key");
  auto ca_cert_text = ReadFile(ca_cert_path);
  auto ca_key_text = ReadFile(ca_key_path);
  if (!ca_cert_text.ok() || !ca_key_text.ok()) {
    return absl::NotFoundError(StrCat("no CA in ", dir, " (", ca_cert_path, ", ", ca_key_path,
                                      "); create one with: stormark certs init --dir ", dir));
  }
  BioPtr cert_bio(BIO_new_mem_buf(ca_cert_text->data(), static_cast<int>(ca_cert_text->size())));
  BioPtr key_bio(BIO_new_mem_buf(ca_key_text->data(), static_cast<int>(ca_key_text->size())));
  Cert ca(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  Key ca_key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca || !ca_key) return SslError(StrCat("the CA in ", dir, " does not parse"));
  if (X509_check_private_key(ca.get(), ca_key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(StrCat(ca_key_path, " does not match ", ca_cert_path));
  }

  const IssuedFiles files = IssuedPaths(dir, request);
  const bool agent = request.role == CertificateRequest::Role::kAgent;
  ASSIGN_OR_RETURN(Key key, NewKey(request.type));
  ASSIGN_OR_RETURN(Cert cert, NewCertificate(key.get(), request.name, request.days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca.get()));
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, ca.get(), cert.get(), nullptr, nullptr, 0);
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_basic_constraints, "critical,CA:FALSE"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_key_usage,
                               request.type == KeyType::kRsa2048
                                   ? "critical,digitalSignature,keyEncipherment"
                                   : "critical,digitalSignature"));
  // An agent's certificate cannot act as a controller's, nor the other way round: OpenSSL
  // checks the purpose on both ends of the handshake.
  RETURN_IF_ERROR(
      AddExtension(cert.get(), &ctx, NID_ext_key_usage, agent ? "serverAuth" : "clientAuth"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_alt_name, san));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_subject_key_identifier, "hash"));
  RETURN_IF_ERROR(AddExtension(cert.get(), &ctx, NID_authority_key_identifier, "keyid:always"));
  if (X509_sign(cert.get(), ca_key.get(), EVP_sha256()) == 0) {
    return SslError("cannot sign the certificate");
  }
  RETURN_IF_ERROR(WritePair(files, key.get(), cert.get()));
  return files;
}

}  // namespace stormark::controller
