// Ownership and mode of what the agent trusts, checked as OpenSSH's StrictModes checks a
// user's ~/.ssh: a dir target, the config file, the TLS files and the programs a command may
// run. A root agent that writes below a directory another user controls can be made to write
// wherever that user likes: `nobody` swaps the phase directory for a symbolic link to /etc.
//
// The rules, for the path and every directory above it:
//   - each is owned by root or by the agent's user (`agent_uid`, geteuid() of the agent);
//   - none is writable by group or others, except a directory above the last component that
//     is sticky (/tmp, /var/tmp): there only an entry's owner may rename or remove it, and the
//     entry below it must pass these rules itself;
//   - the last component is a directory (kDirectory) or a regular file (kFile), and is never
//     writable by group or others, sticky or not.
// Symbolic links on the way are followed deliberately, not refused (merged /usr's /bin,
// Kubernetes' ..data links in a mounted ConfigMap): the link must be owned by root or the
// agent's user, and what it points to is walked by the same rules from the link's directory
// (or from / for an absolute link). The last component of a kDirectory path must not be a link:
// a dir target names its directory itself. Group ownership, ACLs and mount options are not
// looked at (nor does OpenSSH).
//
// The walk opens each component with openat(parent, name, O_PATH|O_NOFOLLOW) and judges the
// descriptor with fstat, so what is checked is what was reached: no component is looked up by
// path twice. Once a path passes, only root or the agent's user can change where it leads.
//
// A refusal is PERMISSION_DENIED with one line naming the path, its owner and mode, the rule and
// the commands that fix it (FAILED_PRECONDITION for the wrong kind of file, or a dir target
// that is a link):
//   "/var/tmp/stormark is owned by nobody (uid 65534), mode 0777: it must be owned by root or
//    by the agent's user (root) and not writable by group or others; fix: chown root
//    /var/tmp/stormark && chmod go-w /var/tmp/stormark"
// Callers prefix what the path is ("target 'scratch': "). A component that cannot be opened is
// the errno's status naming it (NOT_FOUND for ENOENT).
//
// Thread-safe: no state; reads the user database for names.
#ifndef STORMARK_AGENT_CONFIG_STRICT_MODES_H_
#define STORMARK_AGENT_CONFIG_STRICT_MODES_H_

#include <sys/types.h>

#include <string>

#include "agent/workloads/fd.h"
#include "common/status.h"

namespace stormark::agent {

enum class TrustedKind {
  kDirectory,  // A dir target: a real directory, not a link to one.
  kFile,       // A config, key or certificate file, or an executable.
};

// Walks absolute `path` from / as described above and returns an O_PATH descriptor of its last
// component (openat(fd, ".", O_RDONLY | O_DIRECTORY) gives a readable one for a directory).
// INVALID_ARGUMENT for a relative path.
common::StatusOr<Fd> OpenTrustedPath(const std::string& path, TrustedKind kind, uid_t agent_uid);

// OpenTrustedPath, with the descriptor closed: OK when `path` passes.
common::Status CheckTrustedPath(const std::string& path, TrustedKind kind, uid_t agent_uid);

// "nobody (uid 65534)", or "uid 4242" for a uid without a name.
std::string DescribeUser(uid_t uid);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_CONFIG_STRICT_MODES_H_
