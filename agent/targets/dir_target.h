// A `dir:` target: a directory on a mounted filesystem, in which one phase creates files.
//
// Every file a phase creates lives in its own subdirectory, <dir>/.stormark-<phase_id>/, and
// is remembered, so that Cleanup removes exactly what this phase created and nothing else.
// File names are chosen by workloads, never by the network.
//
// A name is relative to the phase directory: "data", or "files/00003/0000000001ab" below
// directories this phase made with CreateDirectory. Every component must pass IsValidName, so
// a name can never climb out of the phase directory, and a name's parent must be a directory
// this phase created.
//
// Not thread-safe: owned by one phase. The const calls may run concurrently with each other.
#ifndef STORMARK_AGENT_TARGETS_DIR_TARGET_H_
#define STORMARK_AGENT_TARGETS_DIR_TARGET_H_

#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>

#include "agent/config.h"
#include "common/status.h"

namespace stormark::agent {

class DirTarget {
 public:
  // Creates the phase's subdirectory under the target's directory.
  static common::StatusOr<std::unique_ptr<DirTarget>> Create(const TargetConfig& target,
                                                             std::string_view phase_id);
  ~DirTarget();  // Calls Cleanup().

  DirTarget(const DirTarget&) = delete;
  DirTarget& operator=(const DirTarget&) = delete;

  const TargetConfig& config() const { return config_; }
  // The phase's subdirectory.
  const std::string& phase_dir() const { return phase_dir_; }

  // Creates (or truncates) `name` and returns its descriptor, opened with O_CREAT|O_TRUNC plus
  // `flags` (add O_EXCL to insist on a new file). The caller closes it. The file is removed by
  // Cleanup unless RemoveFile removed it first.
  common::StatusOr<int> CreateFile(std::string_view name, int flags);
  // Opens a file this phase created.
  common::StatusOr<int> OpenFile(std::string_view name, int flags) const;
  // Removes a file this phase created: NOT_FOUND for any other name.
  common::Status RemoveFile(std::string_view name);

  // Makes directory `name` (mode 0700). It is removed by Cleanup, after the files in it,
  // unless RemoveDirectory removed it first.
  common::Status CreateDirectory(std::string_view name);
  // Opens a directory this phase created, read-only (for listing, fsync, and *at calls that
  // read). The caller closes the descriptor.
  common::StatusOr<int> OpenDirectory(std::string_view name) const;
  // Removes an empty directory this phase created: NOT_FOUND for any other name.
  common::Status RemoveDirectory(std::string_view name);

  // Full path of a name in the phase directory.
  std::string PathOf(std::string_view name) const;

  // From now on, Cleanup also removes what others wrote in the phase directory (a command's
  // output), without following symbolic links or entering other filesystems.
  void AdoptContents() { adopt_contents_ = true; }

  // Removes every file and directory this phase created and still holds (and, after
  // AdoptContents, everything else in the phase directory), then the phase directory.
  // Returns how many entries were removed. Idempotent.
  int Cleanup();

 private:
  DirTarget(TargetConfig config, std::string phase_dir);

  // INVALID_ARGUMENT unless every component of `name` is valid and its parent is the phase
  // directory or a directory this phase created.
  common::Status CheckName(std::string_view name) const;
  common::Status OpenError(std::string_view what, std::string_view name, int flags, int err) const;

  const TargetConfig config_;
  const std::string phase_dir_;
  bool dir_exists_ = true;
  bool adopt_contents_ = false;
  // Names relative to phase_dir_.
  std::unordered_set<std::string> files_;
  std::unordered_set<std::string> dirs_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_DIR_TARGET_H_
