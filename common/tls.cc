#include "common/tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include "common/openssl_ptr.h"
#include "common/strings.h"
#include "common/text_file.h"

namespace stormark::common {
namespace {

// PEM files are small; anything bigger is not one.
constexpr size_t kMaxPemBytes = 1 << 20;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

StatusOr<std::string> ReadPemFile(const std::string& path, std::string_view what,
                                  std::string_view where) {
  StatusOr<std::string> text = ReadTextFile(path, what, kMaxPemBytes);
  if (!text.ok()) return Annotate(text.status(), where);
  return text;
}

// OpenSSL's last error as text, and the queue cleared.
std::string SslError() {
  const unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

std::string CommonName(X509* cert) {
  char name[256] = "";
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, name, sizeof(name));
  return name;
}

}  // namespace

StatusOr<TlsPem> LoadTlsFiles(const TlsFiles& files, std::string_view where) {
  if (files.ca.empty() || files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError(StrCat(
        where, ": give all three of ca, cert and key (missing: ", files.ca.empty() ? "ca " : "",
        files.cert.empty() ? "cert " : "", files.key.empty() ? "key" : "", ")"));
  }
  TlsPem pem;
  ASSIGN_OR_RETURN(pem.ca, ReadPemFile(files.ca, "CA certificate", where));
  ASSIGN_OR_RETURN(pem.cert, ReadPemFile(files.cert, "certificate", where));
  ASSIGN_OR_RETURN(pem.key, ReadPemFile(files.key, "key", where));
  struct stat st;
  if (stat(files.key.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    return absl::PermissionDeniedError(
        StrCat(where, ": key ", files.key, " is readable by other users; chmod 600 ", files.key));
  }

  StorePtr store(X509_STORE_new());
  {
    auto bio = MemoryBio(pem.ca);
    int loaded = 0;
    while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
      X509_STORE_add_cert(store.get(), ca);
      X509_free(ca);
      ++loaded;
    }
    ERR_clear_error();  // The end of the file reads as an error.
    if (loaded == 0) {
      return absl::InvalidArgumentError(
          StrCat(where, ": CA certificate ", files.ca, " holds no PEM certificate"));
    }
  }
  X509Ptr cert(PEM_read_bio_X509(MemoryBio(pem.cert).get(), nullptr, nullptr, nullptr));
  if (!cert) {
    return absl::InvalidArgumentError(
        StrCat(where, ": certificate ", files.cert, " does not parse: ", SslError()));
  }
  KeyPtr key(PEM_read_bio_PrivateKey(MemoryBio(pem.key).get(), nullptr, nullptr, nullptr));
  if (!key) {
    return absl::InvalidArgumentError(
        StrCat(where, ": key ", files.key, " does not parse: ", SslError()));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(
        StrCat(where, ": key ", files.key, " does not match certificate ", files.cert));
  }
  StoreCtxPtr ctx(X509_STORE_CTX_new());
  X509_STORE_CTX_init(ctx.get(), store.get(), cert.get(), nullptr);
  if (X509_verify_cert(ctx.get()) != 1) {
    const int err = X509_STORE_CTX_get_error(ctx.get());
    ERR_clear_error();
    pem.warning = StrCat(where, ": certificate ", files.cert, " does not verify against CA ",
                         files.ca, " (", X509_verify_cert_error_string(err),
                         "): peers that trust only that CA will refuse it");
  }
  pem.common_name = CommonName(cert.get());
  return pem;
}

std::shared_ptr<grpc::ServerCredentials> MutualTlsServerCredentials(const TlsPem& pem) {
  grpc::SslServerCredentialsOptions options(
      GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  options.pem_root_certs = pem.ca;
  options.pem_key_cert_pairs.push_back({pem.key, pem.cert});
  return grpc::SslServerCredentials(options);
}

std::shared_ptr<grpc::ChannelCredentials> MutualTlsChannelCredentials(const TlsPem& pem) {
  grpc::SslCredentialsOptions options;
  options.pem_root_certs = pem.ca;
  options.pem_private_key = pem.key;
  options.pem_cert_chain = pem.cert;
  return grpc::SslCredentials(options);
}

}  // namespace stormark::common
