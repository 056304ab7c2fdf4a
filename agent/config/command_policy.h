// The agent config's `commands:`: whether the `command` workload and plan hooks may run, as
// whom, and which argument vectors.
//
//   commands:
//     enabled: true                  # default false
//     user: nobody                   # default nobody; `root` must be written out (hooks that
//                                    # format or mount filesystems need it)
//     allow:                         # optional; without it, any program (as `user`)
//       - [tar, -xf, "[!-/]*.tar"]   # argv[0], then one glob per argument
//       - [dd, if=/dev/zero, "of=[!-/]*", "bs=+([0-9])[kM]", "count=+([0-9])", conv=fdatasync]
//       - [sh, -c, "sync"]           # a shell line (`command:`, a hook) is [sh, -c, LINE]
//       - [make, -j4, "**"]          # "**", last only: any further arguments (a shell, often)
//
// A rule is a list: its first element names a program (found in PATH as today, and resolved
// to its real path when the config is read); a request's argv[0] matches it when it is
// spelled as the rule spells it, as PATH found it, or as its real path. Every further element
// is an fnmatch(3) pattern for the argument at that index, with FNM_EXTMATCH and no other
// flag: `*` matches any string, '/' and a leading '.' included; `[!-/]*` refuses options and
// absolute paths; `+([0-9])` is one or more digits; a backslash quotes. A request matches a
// rule when it has exactly as many arguments and each matches, or, when the rule ends in
// "**", at least the ones before it.
//
// A bare program name (`allow: [tar]`) is refused when the config is read: it used to mean
// "tar with any arguments", which is a shell (tar --checkpoint-action=exec=...), and giving
// it a new meaning silently would change what running configs allow.
//
// The policy decides from the request's strings alone: nothing is looked up on this host
// before a request is approved, so a refusal reads the same whether or not a named file
// exists.
#ifndef STORMARK_AGENT_CONFIG_COMMAND_POLICY_H_
#define STORMARK_AGENT_CONFIG_COMMAND_POLICY_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace YAML {
class Node;
}

namespace stormark::agent {

struct CommandRule {
  // As written: the program, then one pattern per argument ("**" last: any further ones).
  std::vector<std::string> patterns;
  // The real path of patterns[0], which is what runs.
  std::string program;
  // The spellings of argv[0] that name this rule's program: as written, as found in PATH,
  // and the real path.
  std::vector<std::string> names;

  // The rule as the config would write it: [tar, -xf, "*.tar"].
  std::string ToString() const;
};

// A rule for `patterns` (the program first). INVALID_ARGUMENT when it is empty, "**" is not
// last, or the program cannot be found or is not executable.
common::StatusOr<CommandRule> MakeCommandRule(std::vector<std::string> patterns);

// Whether `arg` matches the glob `pattern`, as the rules match arguments.
bool ArgumentMatches(const std::string& pattern, const std::string& arg);

// What an approved request runs.
struct ApprovedCommand {
  // The program to execute: the real path from the matching rule; without an allow-list,
  // argv[0] as given (a name without '/' is looked up in PATH by the child, as the command
  // user).
  std::string program;
  std::vector<std::string> argv;
};

struct CommandPolicy {
  bool enabled = false;
  // commands.user; empty when the config does not say (see agent/config/credentials.h).
  std::string user;
  // Empty: any program may run (when enabled).
  std::vector<CommandRule> allow;

  // The program and argv `spec` runs (a shell line runs /bin/sh as [sh, -c, LINE]), or
  // PERMISSION_DENIED: commands disabled (one fixed message), or no rule matches (naming the
  // argv index and value that did not match, and the rules). Touches no file. Thread-safe.
  common::StatusOr<ApprovedCommand> Approve(const stormark::v1::CommandSpec& spec) const;
};

// Parses the config's `commands:` map. Errors name `source`, the line and the field.
common::StatusOr<CommandPolicy> ParseCommandPolicy(const YAML::Node& node, std::string_view source);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_COMMAND_POLICY_H_
