// A `dir:` target: a directory on a mounted filesystem, in which each phase gets a Dir of its
// own (agent/dir/dir.h), <dir>/.stormark-<phase_id>/, and creates files only there. Cleanup
// removes exactly what the phase created and nothing else. File names are chosen by
// workloads, never by the network.
#ifndef STORMARK_AGENT_TARGETS_DIR_DIR_TARGET_H_
#define STORMARK_AGENT_TARGETS_DIR_DIR_TARGET_H_

#include <memory>
#include <string>
#include <string_view>

#include "agent/config/config.h"
#include "agent/devices/file_device.h"
#include "agent/dir/dir.h"
#include "agent/workloads/fd.h"
#include "common/status.h"

namespace stormark::agent {

// Opens target `name`'s directory `path` once, as the one descriptor everything below it is
// reached through: O_DIRECTORY|O_NOFOLLOW, so a path that is itself a symbolic link is refused
// (naming the directory to configure instead). The directories above it are the admin's, as
// StrictModes checks them (agent/config/strict_modes.h).
common::StatusOr<Fd> OpenTargetDir(std::string_view name, const std::string& path);

// Opens the target's directory once (O_DIRECTORY | O_NOFOLLOW: the configured path itself must
// not be a symbolic link), checks it, and makes the phase's directory below that descriptor.
// Fails with one line naming the target: NOT_FOUND for a missing directory,
// FAILED_PRECONDITION for a symbolic link or anything not a directory, ALREADY_EXISTS for a
// phase directory left over from an earlier run.
common::StatusOr<std::unique_ptr<Dir>> OpenPhaseDir(const TargetConfig& target,
                                                    std::string_view phase_id);

// A FileDevice over `name`, a file the phase created in `dir`, opened through the Dir (so with
// all of its checks) with the access `options` asks for (writable, direct). FAILED_PRECONDITION
// for a Dir whose files have no descriptor (MemoryDir).
common::StatusOr<std::unique_ptr<FileDevice>> OpenFileDevice(Dir& dir, std::string_view name,
                                                             const FileDeviceOptions& options);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_TARGETS_DIR_DIR_TARGET_H_
