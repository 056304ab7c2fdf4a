// Who a command or hook runs as: the agent config's `commands.user`, looked up in the
// system's user database before the fork, so that the child between fork and exec only
// makes system calls (setgroups, setresgid, setresuid).
//
// A root agent runs commands as `commands.user`, or as `nobody` when the config does not
// say (root must be written out: `user: root`). An agent that is not root cannot switch
// users: its commands run as itself, and a config naming another user is refused.
#ifndef STORMARK_AGENT_CONFIG_CREDENTIALS_H_
#define STORMARK_AGENT_CONFIG_CREDENTIALS_H_

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace stormark::agent {

// The user commands run as when the config names none (on a root agent).
inline constexpr char kDefaultCommandUser[] = "nobody";

struct Credentials {
  std::string name;
  uid_t uid = 0;
  // The primary group, from the user's passwd entry.
  gid_t gid = 0;
  // The supplementary groups, as initgroups(3) would set them (getgrouplist(3)).
  std::vector<gid_t> groups;
  // The user's home directory, for $HOME.
  std::string home;
  // False when the agent already is this user: there is nothing to switch.
  bool switch_user = false;

  bool is_root() const { return uid == 0; }
};

// The credentials for `configured` (commands.user; empty when the config does not say), as
// the rules above decide. NOT_FOUND when no such user exists; FAILED_PRECONDITION when an
// agent that is not root is asked to run as someone else. Errors name commands.user.
// Thread-safe (getpwnam_r).
common::StatusOr<Credentials> LookUpCommandUser(std::string_view configured);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_CREDENTIALS_H_
