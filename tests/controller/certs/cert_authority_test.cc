#include "controller/certs/cert_authority.h"

#include <sys/stat.h>

#include "common/strings.h"
#include "common/tls.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/agent/test_dir.h"

namespace stormark::controller {
namespace {

using ::testing::HasSubstr;

class CertAuthorityTest : public agent::TempDirTest {};

TEST_F(CertAuthorityTest, IssuedPairsLoadAndVerifyAgainstTheirCa) {
  const std::string pki = dir() + "/pki";
  auto ca = InitCertificateAuthority(pki, KeyType::kEcP256, 30);
  ASSERT_TRUE(ca.ok()) << ca.status();
  for (KeyType type : {KeyType::kEcP256, KeyType::kRsa2048}) {
    CertificateRequest request;
    request.name = type == KeyType::kEcP256 ? "db1" : "db2";
    request.ips = {"127.0.0.1", "::1"};
    request.dns = {"db1.example.com"};
    request.type = type;
    auto files = IssueCertificate(pki, request);
    ASSERT_TRUE(files.ok()) << files.status();
    struct stat st;
    ASSERT_EQ(stat(files->key.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    auto pem = common::LoadTlsFiles({ca->cert, files->cert, files->key}, "test");
    ASSERT_TRUE(pem.ok()) << pem.status();
    EXPECT_EQ(pem->common_name, request.name);
    EXPECT_EQ(pem->warning, "");
  }
}

TEST_F(CertAuthorityTest, ACertificateFromAnotherCaIsFlagged) {
  ASSERT_TRUE(InitCertificateAuthority(dir() + "/a", KeyType::kEcP256, 30).ok());
  ASSERT_TRUE(InitCertificateAuthority(dir() + "/b", KeyType::kEcP256, 30).ok());
  CertificateRequest request;
  request.role = CertificateRequest::Role::kController;
  request.name = "controller";
  auto files = IssueCertificate(dir() + "/b", request);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->cert, dir() + "/b/controller.crt");
  auto pem = common::LoadTlsFiles({dir() + "/a/ca.crt", files->cert, files->key}, "--tls-*");
  ASSERT_TRUE(pem.ok()) << pem.status();
  EXPECT_THAT(pem->warning, HasSubstr("does not verify against CA"));
}

TEST_F(CertAuthorityTest, RefusesToOverwriteAndBadNames) {
  const std::string pki = dir() + "/pki";
  ASSERT_TRUE(InitCertificateAuthority(pki, KeyType::kEcP256, 30).ok());
  EXPECT_EQ(InitCertificateAuthority(pki, KeyType::kEcP256, 30).status().code(),
            absl::StatusCode::kAlreadyExists);
  CertificateRequest request;
  request.name = "db1";
  ASSERT_TRUE(IssueCertificate(pki, request).ok());
  EXPECT_EQ(IssueCertificate(pki, request).status().code(), absl::StatusCode::kAlreadyExists);
  for (const char* name : {"../x", "a,DNS:evil", "", "a b"}) {
    request.name = name;
    EXPECT_EQ(IssueCertificate(pki, request).status().code(), absl::StatusCode::kInvalidArgument)
        << name;
  }
  request.name = "db9";
  request.ips = {"10.0.0.1,DNS:evil"};
  EXPECT_EQ(IssueCertificate(pki, request).status().code(), absl::StatusCode::kInvalidArgument);
  request.ips = {};
  request.dns = {"evil,IP:1.2.3.4"};
  EXPECT_EQ(IssueCertificate(pki, request).status().code(), absl::StatusCode::kInvalidArgument);
  request.dns = {};
  EXPECT_EQ(IssueCertificate(dir() + "/none", request).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(CertAuthorityTest, KeyReadableByOthersIsRefused) {
  const std::string pki = dir() + "/pki";
  auto ca = InitCertificateAuthority(pki, KeyType::kEcP256, 30);
  ASSERT_TRUE(ca.ok());
  ASSERT_EQ(chmod(ca->key.c_str(), 0644), 0);
  auto pem = common::LoadTlsFiles({ca->cert, ca->cert, ca->key}, "tls");
  EXPECT_EQ(pem.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(pem.status().message(), HasSubstr("chmod 600"));
}

}  // namespace
}  // namespace stormark::controller
