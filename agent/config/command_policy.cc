#include "agent/config/command_policy.h"

#include <fnmatch.h>

#include <algorithm>

#include "agent/config/credentials.h"
#include "agent/config/executables.h"
#include "agent/config/yaml_error.h"
#include "common/strings.h"
#include "common/units.h"
#include "yaml-cpp/yaml.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

constexpr char kAnyRest[] = "**";
// How much of one argument a refusal repeats.
constexpr size_t kShownBytes = 120;

bool IsPlain(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._/=:,+@%^-").find(static_cast<char>(c)) != std::string_view::npos;
}

// `text` as one readable token: bare when it is plain, else in double quotes, with a
// backslash before '"' and '\\', and \xNN for control and non-ASCII bytes; cut at
// kShownBytes.
std::string Shown(std::string_view text) {
  const bool cut = text.size() > kShownBytes;
  if (cut) text = text.substr(0, kShownBytes);
  if (!text.empty() && !cut && std::all_of(text.begin(), text.end(), [](char c) {
        return IsPlain(static_cast<unsigned char>(c));
      })) {
    return std::string(text);
  }
  std::string out = "\"";
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20 || c >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
  }
  out += cut ? "\"..." : "\"";
  return out;
}

std::string RuleList(const std::vector<CommandRule>& rules) {
  std::string list;
  for (const CommandRule& rule : rules) list += StrCat(list.empty() ? "" : "; ", rule.ToString());
  return list;
}

// How far `argv` gets in `rule`: the index of the first argument that does not match (or
// argv.size() when one is missing), and *why says what went wrong there; argv.size() + 1
// when the rule matches.
size_t Mismatch(const CommandRule& rule, const std::vector<std::string>& argv, std::string* why) {
  const std::vector<std::string>& p = rule.patterns;
  const bool rest = p.back() == kAnyRest;
  const size_t fixed = rest ? p.size() - 1 : p.size();
  for (size_t i = 1; i < argv.size(); ++i) {
    if (i >= fixed) {
      if (rest) return argv.size() + 1;  // "**" takes the rest.
      *why = StrCat("argv[", i, "] ", Shown(argv[i]), " is more than rule ", rule.ToString(),
                    " takes (", fixed - 1, " argument", fixed == 2 ? "" : "s", ")");
      return i;
    }
    if (!ArgumentMatches(p[i], argv[i])) {
      *why = StrCat("argv[", i, "] ", Shown(argv[i]), " does not match ", Shown(p[i]), " in rule ",
                    rule.ToString());
      return i;
    }
  }
  if (argv.size() < fixed) {
    *why = StrCat("argv[", argv.size(), "] is missing: rule ", rule.ToString(), " takes ",
                  fixed - 1, " argument", fixed == 2 ? "" : "s", rest ? " or more" : "");
    return argv.size();
  }
  return argv.size() + 1;  // A match.
}

}  // namespace

std::string CommandRule::ToString() const {
  std::string out = "[";
  for (size_t i = 0; i < patterns.size(); ++i) {
    out += StrCat(i == 0 ? "" : ", ", Shown(patterns[i]));
  }
  return out + "]";
}

StatusOr<CommandRule> MakeCommandRule(std::vector<std::string> patterns) {
  if (patterns.empty()) return absl::InvalidArgumentError("a rule needs at least the program");
  for (size_t i = 0; i + 1 < patterns.size(); ++i) {
    if (patterns[i] == kAnyRest) {
      return absl::InvalidArgumentError(StrCat(
          "\"**\" (any further arguments) may only be a rule's last element, not element ", i));
    }
  }
  if (patterns[0] == kAnyRest) {
    return absl::InvalidArgumentError("a rule's first element names a program, not \"**\"");
  }
  CommandRule rule;
  std::string found;
  ASSIGN_OR_RETURN(rule.program, FindExecutable(patterns[0], &found));
  for (const std::string& name : {patterns[0], found, rule.program}) {
    if (std::find(rule.names.begin(), rule.names.end(), name) == rule.names.end()) {
      rule.names.push_back(name);
    }
  }
  rule.patterns = std::move(patterns);
  return rule;
}

bool ArgumentMatches(const std::string& pattern, const std::string& arg) {
  return fnmatch(pattern.c_str(), arg.c_str(), FNM_EXTMATCH) == 0;
}

StatusOr<ApprovedCommand> CommandPolicy::Approve(const stormark::v1::CommandSpec& spec) const {
  // Decided from the request's strings alone, before anything on this host is looked at.
  if (!enabled) {
    return absl::PermissionDeniedError(
        "commands are disabled on this agent: its config must set 'commands: {enabled: true}'");
  }
  const bool shell = !spec.shell().empty();
  std::vector<std::string> argv;
  if (shell) {
    argv = {"sh", "-c", spec.shell()};
  } else {
    argv.assign(spec.argv().begin(), spec.argv().end());
  }
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("command: no program");
  if (allow.empty()) return ApprovedCommand{shell ? "/bin/sh" : argv[0], argv};

  // A shell line runs /bin/sh, which a rule may spell sh or /bin/sh.
  const std::vector<std::string> spellings =
      shell ? std::vector<std::string>{"sh", "/bin/sh"} : std::vector<std::string>{argv[0]};
  const CommandRule* nearest = nullptr;
  size_t nearest_at = 0;
  std::string nearest_why;
  for (const CommandRule& rule : allow) {
    const bool names_it =
        std::any_of(spellings.begin(), spellings.end(), [&](const std::string& s) {
          return std::find(rule.names.begin(), rule.names.end(), s) != rule.names.end();
        });
    if (!names_it) continue;
    std::string why;
    const size_t at = Mismatch(rule, argv, &why);
    if (at > argv.size()) return ApprovedCommand{rule.program, argv};
    if (nearest == nullptr || at > nearest_at) {
      nearest = &rule;
      nearest_at = at;
      nearest_why = std::move(why);
    }
  }
  const std::string prefix = shell ? "a shell command line runs as [sh, -c, LINE]: " : "";
  if (nearest == nullptr) {
    return absl::PermissionDeniedError(
        StrCat(prefix, "argv[0] ", Shown(shell ? "sh" : argv[0]),
               " is no program in this agent's 'commands.allow' (rules: ", RuleList(allow), ")"));
  }
  return absl::PermissionDeniedError(StrCat(prefix, "this agent's 'commands.allow' refuses it: ",
                                            nearest_why, " (rules: ", RuleList(allow), ")"));
}

StatusOr<CommandPolicy> ParseCommandPolicy(const YAML::Node& node, std::string_view source) {
  CommandPolicy policy;
  if (!node.IsMap())
    return YamlErrorAt(source, node, "'commands' must be a map such as {enabled: true}");
  YAML::Node user_node;
  for (const auto& field : node) {
    const std::string key = field.first.IsScalar() ? field.first.as<std::string>() : "?";
    const YAML::Node value = field.second;
    if (key == "enabled") {
      auto enabled =
          common::ParseBool("commands.enabled", value.IsScalar() ? value.as<std::string>() : "?");
      if (!enabled.ok()) return YamlErrorAt(source, value, std::string(enabled.status().message()));
      policy.enabled = *enabled;
    } else if (key == "user") {
      policy.user = value.IsScalar() ? value.as<std::string>() : "";
      if (policy.user.empty()) {
        return YamlErrorAt(source, value, "'commands.user' must name a user (nobody, root, ...)");
      }
      user_node = value;
    } else if (key == "allow") {
      if (!value.IsSequence() || value.size() == 0) {
        return YamlErrorAt(source, value,
                           "'commands.allow' must be a non-empty list of rules such as "
                           "[tar, -xf, \"*.tar\"]");
      }
      for (const auto& item : value) {
        if (item.IsScalar()) {
          const std::string name = item.as<std::string>();
          return YamlErrorAt(
              source, item,
              StrCat("commands.allow: '", name,
                     "' is a bare program name; a rule is now a list that pins the whole argument "
                     "vector, such as [",
                     name, ", -xf, \"*.tar\"] or [", name, "] for no arguments ([", name,
                     ", \"**\"] allows any arguments, which for many programs is a shell)"));
        }
        if (!item.IsSequence() || item.size() == 0) {
          return YamlErrorAt(source, item,
                             "commands.allow: a rule is a list such as [tar, -xf, \"*.tar\"]");
        }
        std::vector<std::string> patterns;
        for (const auto& element : item) {
          if (!element.IsScalar()) {
            return YamlErrorAt(source, element,
                               "commands.allow: each element of a rule is a string (a glob)");
          }
          patterns.push_back(element.as<std::string>());
        }
        auto rule = MakeCommandRule(std::move(patterns));
        if (!rule.ok())
          return YamlErrorAt(source, item, StrCat("commands.allow: ", rule.status().message()));
        policy.allow.push_back(std::move(*rule));
      }
    } else {
      return YamlErrorAt(
          source, field.first,
          StrCat("unknown field 'commands.", key, "' (known: enabled, user, allow)"));
    }
  }
  if (policy.enabled) {
    // A user that does not exist is found now, not at the first command.
    auto user = LookUpCommandUser(policy.user);
    if (!user.ok())
      return YamlErrorAt(source, user_node ? user_node : node,
                         std::string(user.status().message()));
  }
  return policy;
}

}  // namespace stormark::agent
