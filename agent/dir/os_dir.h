// The real Dir (agent/dir/dir.h): a phase directory on a mounted filesystem, reached only
// through descriptors. See dir.h for what it guarantees; beneath.h for how names resolve.
#ifndef STORMARK_AGENT_DIR_OS_DIR_H_
#define STORMARK_AGENT_DIR_OS_DIR_H_

#include <sys/stat.h>

#include <memory>
#include <string>
#include <string_view>

#include "agent/dir/beneath.h"
#include "agent/dir/dir.h"
#include "agent/dir/phase_names.h"
#include "agent/workloads/fd.h"

namespace stormark::agent {

class OsDir final : public Dir {
 public:
  // Makes the phase directory `.stormark-<phase_id>` (mode 0700) in the directory `target_fd`
  // refers to (opened by the caller with O_DIRECTORY | O_NOFOLLOW, and checked), and opens it.
  // `target_name` and `target_path` are for messages only. ALREADY_EXISTS when a directory of
  // that name is left over; FAILED_PRECONDITION when what was made is not the directory
  // asked for (replaced at once by someone else).
  static common::StatusOr<std::unique_ptr<OsDir>> Create(std::string target_name,
                                                         std::string target_path, Fd target_fd,
                                                         std::string_view phase_id,
                                                         Resolver resolver = Resolver::kOpenat2);
  ~OsDir() override;  // Calls Cleanup().

  common::StatusOr<std::unique_ptr<File>> CreateFile(std::string_view name, int flags) override;
  common::StatusOr<std::unique_ptr<File>> OpenFile(std::string_view name, int flags) override;
  common::Status RemoveFile(std::string_view name) override;
  common::Status CreateDirectory(std::string_view name) override;
  common::Status RemoveDirectory(std::string_view name) override;
  common::StatusOr<std::unique_ptr<DirListing>> List(std::string_view dir) override;
  common::Status SyncDirectory(std::string_view dir) override;
  common::StatusOr<std::unique_ptr<File>> OpenDirectory(std::string_view dir) override;
  common::Status SyncFilesystem() override;
  common::StatusOr<FileInfo> Stat(std::string_view name) override;
  std::optional<uint64_t> FreeBytes() override;
  void AdoptContents() override { adopt_contents_ = true; }
  CleanupReport Cleanup() override;
  int fd() const override { return phase_fd_.get(); }
  std::string Describe(std::string_view name) const override;
  const std::string& target_name() const override { return target_name_; }

 private:
  OsDir(std::string target_name, std::string target_path, Fd target_fd, std::string phase_name,
        Fd phase_fd, const struct stat& phase, Resolver resolver);

  // Opens a directory of the phase ("" is the phase directory itself: a new descriptor of
  // it), checked to be the one the phase made.
  common::StatusOr<Fd> OpenDirFd(std::string_view dir) const;
  // The same directory as a borrowed descriptor, valid until the next call: the phase
  // directory's own for "", else the last subdirectory asked for, kept open, so that a test
  // walking one directory's files (bonnie's, PostMark's) opens and checks it once, not once
  // per file. A descriptor keeps meaning the directory the phase made, wherever it is moved.
  common::StatusOr<int> DirFd(std::string_view dir);
  // Closes the kept descriptor if it is `dir` or below it (before `dir` is removed).
  void ForgetDirFd(std::string_view dir);
  // Opens `name` beneath the phase directory and checks what it got: a regular file on the
  // target's filesystem with one link, owned by the agent, and inode `*expected` if given.
  // Sets `*ino` and `*blksize` (if given) to the inode opened and its st_blksize.
  common::StatusOr<Fd> OpenChecked(std::string_view name, int flags, mode_t mode,
                                   const ino_t* expected, std::string_view what,
                                   ino_t* ino = nullptr, blksize_t* blksize = nullptr) const;
  // The error for a descriptor (or an open's errno) that is not what the phase made.
  common::Status NotOurs(std::string_view name, std::string_view is) const;
  common::Status Errno(std::string_view what, std::string_view name, int err, int flags = 0) const;

  const std::string target_name_;
  const std::string target_path_;
  const Fd target_fd_;
  const std::string phase_name_;  // ".stormark-<id>", in the target directory.
  const Fd phase_fd_;
  const dev_t dev_;
  const ino_t phase_ino_;
  const uid_t owner_;
  const Resolver resolver_;
  PhaseNames names_;
  std::string kept_dir_;  // The subdirectory kept_dir_fd_ is (DirFd).
  Fd kept_dir_fd_;
  bool adopt_contents_ = false;
  bool phase_dir_removed_ = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_OS_DIR_H_
