// A `dir:` target: a directory on a mounted filesystem, in which one phase creates files.
//
// Every file a phase creates lives in its own subdirectory, <dir>/.stormark-<phase_id>/, and
// is remembered, so that Cleanup removes exactly what this phase created and nothing else.
// File names are chosen by workloads, never by the network.
//
// Not thread-safe: owned by one phase.
#ifndef STORMARK_AGENT_TARGETS_DIR_TARGET_H_
#define STORMARK_AGENT_TARGETS_DIR_TARGET_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

  // Creates (or truncates) `name` in the phase directory and returns its descriptor, opened
  // with O_CREAT|O_TRUNC plus `flags`. The caller closes it. The file is removed by Cleanup.
  common::StatusOr<int> CreateFile(std::string_view name, int flags);
  // Opens a file this phase created.
  common::StatusOr<int> OpenFile(std::string_view name, int flags) const;
  // Full path of a file in the phase directory.
  std::string PathOf(std::string_view name) const;

  // Removes every file this phase created and the phase directory. Returns how many entries
  // were removed. Idempotent.
  int Cleanup();

 private:
  DirTarget(TargetConfig config, std::string phase_dir);

  const TargetConfig config_;
  const std::string phase_dir_;
  bool dir_exists_ = true;
  std::vector<std::string> files_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_DIR_TARGET_H_
