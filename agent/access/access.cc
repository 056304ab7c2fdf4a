#include "agent/access/access.h"

#include <grp.h>
#include <pwd.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "agent/config/yaml_error.h"
#include "common/strings.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StrCat;

std::optional<uint32_t> Number(std::string_view text) {
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// The id of user (or group) `text`, a name or a number, with its name.
std::optional<AccessConfig::Id> LookUp(const std::string& text, bool group) {
  std::vector<char> buffer(16384);
  if (std::optional<uint32_t> number = Number(text)) {
    AccessConfig::Id id{*number, ""};
    if (group) {
      struct group entry, *found = nullptr;
      if (getgrgid_r(*number, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
        id.name = found->gr_name;
      }
    } else {
      passwd entry, *found = nullptr;
      if (getpwuid_r(*number, &entry, buffer.data(), buffer.size(), &found) == 0 && found) {
        id.name = found->pw_name;
      }
    }
    return id;
  }
  if (group) {
    struct group entry, *found = nullptr;
    if (getgrnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
      return std::nullopt;
    }
    return AccessConfig::Id{found->gr_gid, text};
  }
  passwd entry, *found = nullptr;
  if (getpwnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found) != 0 || !found) {
    return std::nullopt;
  }
  return AccessConfig::Id{found->pw_uid, text};
}

Status ParseIds(const YAML::Node& node, std::string_view source, std::string_view key,
                std::vector<AccessConfig::Id>* ids) {
  const bool group = key == "groups";
  if (!node.IsSequence()) {
    return YamlErrorAt(source, node,
                       StrCat("'access.", key, "' must be a list of ",
                              group ? "group names or gids" : "user names or uids"));
  }
  for (const auto& item : node) {
    const std::string text = item.IsScalar() ? item.as<std::string>() : "";
    std::optional<AccessConfig::Id> id = LookUp(text, group);
    if (!id) {
      return YamlErrorAt(
          source, item,
          StrCat("access.", key, ": no ", group ? "group" : "user", " '", text, "' on this host"));
    }
    ids->push_back(std::move(*id));
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<AccessConfig::Id>& ids, uint32_t id) {
  return std::any_of(ids.begin(), ids.end(),
                     [id](const AccessConfig::Id& i) { return i.id == id; });
}

std::string List(const std::vector<AccessConfig::Id>& ids) {
  if (ids.empty()) return "(none)";
  std::string text;
  for (const AccessConfig::Id& id : ids) {
    text += StrCat(text.empty() ? "" : ", ", id.name.empty() ? std::to_string(id.id) : id.name);
  }
  return StrCat("[", text, "]");
}

}  // namespace

Status ParseAccess(const YAML::Node& node, std::string_view source, AccessConfig* access) {
  if (!node.IsMap()) {
    return YamlErrorAt(source, node,
                       "'access' must be a map such as {users: [alice], groups: [stormark]}");
  }
  for (const auto& field : node) {
    const std::string key = field.first.IsScalar() ? field.first.as<std::string>() : "";
    if (key == "users") {
      RETURN_IF_ERROR(ParseIds(field.second, source, key, &access->users));
    } else if (key == "groups") {
      RETURN_IF_ERROR(ParseIds(field.second, source, key, &access->groups));
    } else {
      return YamlErrorAt(source, field.first,
                         StrCat("unknown field 'access.", key, "' (known: users, groups)"));
    }
  }
  return absl::OkStatus();
}

Status CheckUnixPeer(const AccessConfig& access, const PeerIdentity& peer, uid_t agent_uid) {
  if (peer.kind == PeerIdentity::Kind::kUnixUser) {
    if (peer.uid == 0 || peer.uid == agent_uid || Contains(access.users, peer.uid) ||
        Contains(access.groups, peer.gid)) {
      return absl::OkStatus();
    }
    for (gid_t gid : peer.groups) {
      if (Contains(access.groups, gid)) return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError(
      StrCat(peer.Describe(), " may not use this agent: it admits root, its own user (uid ",
             agent_uid, ") and the config's access.users ", List(access.users),
             " and access.groups ", List(access.groups)));
}

}  // namespace stormark::agent
