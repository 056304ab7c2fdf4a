// unique_ptr types for the OpenSSL objects stormark uses (TLS checks, the certificate tools).
#ifndef STORMARK_COMMON_OPENSSL_PTR_H_
#define STORMARK_COMMON_OPENSSL_PTR_H_

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>

namespace stormark::common {

template <typename T, void (*Free)(T*)>
struct OpenSslDeleter {
  void operator()(T* p) const { Free(p); }
};

inline void FreeBio(BIO* b) { BIO_free(b); }

using BioPtr = std::unique_ptr<BIO, OpenSslDeleter<BIO, FreeBio>>;
using X509Ptr = std::unique_ptr<X509, OpenSslDeleter<X509, X509_free>>;
using KeyPtr = std::unique_ptr<EVP_PKEY, OpenSslDeleter<EVP_PKEY, EVP_PKEY_free>>;
using StorePtr = std::unique_ptr<X509_STORE, OpenSslDeleter<X509_STORE, X509_STORE_free>>;
using StoreCtxPtr =
    std::unique_ptr<X509_STORE_CTX, OpenSslDeleter<X509_STORE_CTX, X509_STORE_CTX_free>>;

}  // namespace stormark::common

#endif  // STORMARK_COMMON_OPENSSL_PTR_H_
