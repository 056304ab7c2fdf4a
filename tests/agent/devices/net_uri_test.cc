#include "agent/devices/net_uri.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stormark::agent {
namespace {

using ::testing::HasSubstr;

TEST(ParseNbdUri, TcpWithAndWithoutPort) {
  auto uri = ParseNbdUri("nbd://127.0.0.1:10810/scratch");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_FALSE(uri->tls);
  EXPECT_EQ(uri->host, "127.0.0.1");
  EXPECT_EQ(uri->port, 10810);
  EXPECT_EQ(uri->export_name, "scratch");
  EXPECT_EQ(uri->Endpoint(), "127.0.0.1:10810");

  uri = ParseNbdUri("nbds://storage.example");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_TRUE(uri->tls);
  EXPECT_EQ(uri->port, 10809);
  EXPECT_EQ(uri->export_name, "");
}

TEST(ParseNbdUri, Ipv6HostAndEscapedExport) {
  auto uri = ParseNbdUri("nbd://[::1]:1234/a%20b");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(uri->host, "::1");
  EXPECT_EQ(uri->export_name, "a b");
  EXPECT_EQ(uri->Endpoint(), "[::1]:1234");
}

TEST(ParseNbdUri, UnixSocket) {
  auto uri = ParseNbdUri("nbds+unix:///disk?socket=/run/nbd.sock");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_TRUE(uri->tls);
  EXPECT_EQ(uri->socket, "/run/nbd.sock");
  EXPECT_EQ(uri->export_name, "disk");
  EXPECT_EQ(uri->Endpoint(), "unix socket /run/nbd.sock");
}

TEST(ParseNbdUri, RefusesWhatItCannotUse) {
  const std::pair<const char*, const char*> cases[] = {
      {"nbd:/x", "not a URI"},
      {"nfs://h/x", "scheme 'nfs'"},
      {"nbd://alice:secret@h/x", "credentials do not belong in the URI"},
      {"nbd://h:0/x", "port '0'"},
      {"nbd://h:99999/x", "port '99999'"},
      {"nbd://h:ab/x", "port 'ab'"},
      {"nbd:///x", "no host"},
      {"nbd://[::1/x", "unclosed '['"},
      {"nbd://h/x?tls-psk-file=/k", "TLS settings go under the target's 'tls:'"},
      {"nbd+unix://h/x?socket=/s", "has no host"},
      {"nbd+unix:///x", "needs exactly '?socket=PATH'"},
      {"nbd+unix:///x?socket=rel", "absolute path"},
      {"nbd://h/%zz", "malformed %-escape"},
  };
  for (const auto& [text, what] : cases) {
    auto uri = ParseNbdUri(text);
    ASSERT_FALSE(uri.ok()) << text;
    EXPECT_EQ(uri.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(uri.status().message(), HasSubstr(what)) << text;
  }
}

TEST(ParseNbdUri, ErrorsNeverShowAPassword) {
  auto uri = ParseNbdUri("nbd://alice:secret@h/x");
  ASSERT_FALSE(uri.ok());
  EXPECT_THAT(uri.status().message(), HasSubstr("'nbd://***@h/x'"));
  EXPECT_THAT(std::string(uri.status().message()), ::testing::Not(HasSubstr("secret")));
}

TEST(ParseIscsiUri, TargetAndLun) {
  auto uri = ParseIscsiUri("iscsi://192.0.2.7/iqn.2003-01.org.example:disk1/3");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(uri->host, "192.0.2.7");
  EXPECT_EQ(uri->port, 3260);
  EXPECT_EQ(uri->iqn, "iqn.2003-01.org.example:disk1");
  EXPECT_EQ(uri->lun, 3);
  EXPECT_EQ(uri->Portal(), "192.0.2.7:3260");

  uri = ParseIscsiUri("iscsi://[::1]:3261/iqn.2003-01.org.example%3Adisk1/0");
  ASSERT_TRUE(uri.ok()) << uri.status();
  EXPECT_EQ(uri->iqn, "iqn.2003-01.org.example:disk1");
  EXPECT_EQ(uri->Portal(), "[::1]:3261");
}

TEST(ParseIscsiUri, RefusesWhatItCannotUse) {
  const std::pair<const char*, const char*> cases[] = {
      {"nbd://h/iqn.a:b/0", "not an iscsi:// URI"},
      {"iscsi://u%p@h/iqn.a:b/0", "credentials do not belong"},
      {"iscsi://h/iqn.a:b", "needs both the target's IQN and a LUN"},
      {"iscsi://h/0", "needs both the target's IQN and a LUN"},
      {"iscsi://h/iqn.a:b/x", "LUN 'x'"},
      {"iscsi://h/iqn.a:b/99999", "LUN '99999'"},
      {"iscsi://h/iqn.a:b/0?x=1", "a query"},
  };
  for (const auto& [text, what] : cases) {
    auto uri = ParseIscsiUri(text);
    ASSERT_FALSE(uri.ok()) << text;
    EXPECT_THAT(uri.status().message(), HasSubstr(what)) << text;
  }
}

}  // namespace
}  // namespace stormark::agent
