#include "agent/devices/net_uri.h"

#include <charconv>

#include "common/strings.h"

namespace stormark::agent {
namespace {

constexpr char kNbdForms[] =
    "nbd://HOST[:PORT]/EXPORT, nbds://HOST[:PORT]/EXPORT or nbd+unix:///EXPORT?socket=PATH";
constexpr char kIscsiForm[] = "iscsi://HOST[:PORT]/IQN/LUN";

// The URI with any user part ("alice:secret@") shown as "***@": errors never echo a secret.
std::string Redacted(std::string_view uri) {
  const size_t start = uri.find("://");
  if (start == std::string_view::npos) return std::string(uri);
  const size_t end = uri.find_first_of("/?", start + 3);
  const size_t at = uri.substr(0, end).rfind('@');
  if (at == std::string_view::npos || at < start) return std::string(uri);
  return common::StrCat(uri.substr(0, start + 3), "***", uri.substr(at));
}

common::Status Bad(std::string_view uri, std::string_view what, std::string_view forms) {
  return absl::InvalidArgumentError(
      common::StrCat("URI '", Redacted(uri), "': ", what, " (expected ", forms, ")"));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decodes %XX escapes; false on a malformed one.
bool PercentDecode(std::string_view in, std::string* out) {
  out->clear();
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out->push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = HexValue(in[i + 1]), lo = HexValue(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

// The parts of SCHEME://AUTHORITY/PATH?QUERY.
struct Parts {
  std::string_view scheme, authority, path, query;
};

bool Split(std::string_view uri, Parts* parts) {
  const size_t colon = uri.find("://");
  if (colon == std::string_view::npos) return false;
  parts->scheme = uri.substr(0, colon);
  std::string_view rest = uri.substr(colon + 3);
  const size_t question = rest.find('?');
  if (question != std::string_view::npos) {
    parts->query = rest.substr(question + 1);
    rest = rest.substr(0, question);
  }
  const size_t slash = rest.find('/');
  parts->authority = rest.substr(0, slash);
  parts->path = slash == std::string_view::npos ? "" : rest.substr(slash + 1);
  return true;
}

// HOST[:PORT] with an IPv6 host in brackets.
common::Status ParseHostPort(std::string_view uri, std::string_view authority,
                             std::string_view forms, std::string* host, uint16_t* port) {
  if (authority.find('@') != std::string_view::npos) {
    return Bad(uri, "credentials do not belong in the URI; put them in the target's config", forms);
  }
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return Bad(uri, "unclosed '[' in the host", forms);
    *host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Bad(uri, "unexpected text after the IPv6 host", forms);
      port_text = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    *host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port_text = authority.substr(colon + 1);
  }
  if (host->empty()) return Bad(uri, "no host", forms);
  if (!port_text.empty() || authority.ends_with(':')) {
    unsigned value = 0;
    const auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || value == 0 ||
        value > 65535) {
      return Bad(uri, common::StrCat("port '", port_text, "' is not a number from 1 to 65535"),
                 forms);
    }
    *port = static_cast<uint16_t>(value);
  }
  return absl::OkStatus();
}

}  // namespace

std::string NbdUri::Endpoint() const {
  if (!socket.empty()) return common::StrCat("unix socket ", socket);
  if (host.find(':') != std::string::npos) return common::StrCat("[", host, "]:", port);
  return common::StrCat(host, ":", port);
}

std::string IscsiUri::Portal() const {
  if (host.find(':') != std::string::npos) return common::StrCat("[", host, "]:", port);
  return common::StrCat(host, ":", port);
}

common::StatusOr<NbdUri> ParseNbdUri(std::string_view uri) {
  Parts parts;
  if (!Split(uri, &parts)) return Bad(uri, "not a URI", kNbdForms);
  NbdUri out;
  const std::string_view scheme = parts.scheme;
  const bool unix_socket = scheme == "nbd+unix" || scheme == "nbds+unix";
  if (scheme != "nbd" && scheme != "nbds" && !unix_socket) {
    return Bad(uri,
               common::StrCat("scheme '", scheme, "' is not one of nbd, nbds, nbd+unix, nbds+unix"),
               kNbdForms);
  }
  out.tls = scheme.starts_with("nbds");
  if (!PercentDecode(parts.path, &out.export_name)) {
    return Bad(uri, "malformed %-escape in the export name", kNbdForms);
  }
  if (unix_socket) {
    if (!parts.authority.empty()) {
      return Bad(uri, "a unix-socket URI has no host: write nbd+unix:///EXPORT?socket=PATH",
                 kNbdForms);
    }
    if (!parts.query.starts_with("socket=") || parts.query.find('&') != std::string_view::npos) {
      return Bad(uri, "a unix-socket URI needs exactly '?socket=PATH'", kNbdForms);
    }
    if (!PercentDecode(parts.query.substr(7), &out.socket) || !out.socket.starts_with('/')) {
      return Bad(uri, "the socket must be an absolute path", kNbdForms);
    }
    return out;
  }
  if (!parts.query.empty()) {
    return Bad(uri,
               common::StrCat("query '?", parts.query,
                              "' is not accepted; TLS settings go under the target's 'tls:'"),
               kNbdForms);
  }
  RETURN_IF_ERROR(ParseHostPort(uri, parts.authority, kNbdForms, &out.host, &out.port));
  return out;
}

common::StatusOr<IscsiUri> ParseIscsiUri(std::string_view uri) {
  Parts parts;
  if (!Split(uri, &parts) || parts.scheme != "iscsi") {
    return Bad(uri, "not an iscsi:// URI", kIscsiForm);
  }
  IscsiUri out;
  if (!parts.query.empty()) return Bad(uri, "a query ('?...') is not accepted", kIscsiForm);
  RETURN_IF_ERROR(ParseHostPort(uri, parts.authority, kIscsiForm, &out.host, &out.port));
  const size_t slash = parts.path.rfind('/');
  if (slash == std::string_view::npos || slash == 0) {
    return Bad(uri, "it needs both the target's IQN and a LUN", kIscsiForm);
  }
  if (!PercentDecode(parts.path.substr(0, slash), &out.iqn)) {
    return Bad(uri, "malformed %-escape in the IQN", kIscsiForm);
  }
  const std::string_view lun = parts.path.substr(slash + 1);
  const auto [end, ec] = std::from_chars(lun.data(), lun.data() + lun.size(), out.lun);
  if (lun.empty() || ec != std::errc() || end != lun.data() + lun.size() || out.lun < 0 ||
      out.lun > 16383) {
    return Bad(uri, common::StrCat("LUN '", lun, "' is not a number from 0 to 16383"), kIscsiForm);
  }
  return out;
}

}  // namespace stormark::agent
