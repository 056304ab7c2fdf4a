// The real Dir (agent/dir/dir.h): a phase directory on a mounted filesystem, reached only
// through descriptors. See dir.h for what it guarantees; beneath.h for how names resolve.
#ifndef STORMARK_AGENT_DIR_OS_DIR_H_
#define STORMARK_AGENT_DIR_OS_DIR_H_

#include <sys/stat.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
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
  void ExpectFiles(uint64_t count) override { names_.ReserveFiles(count); }
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
  // directory's own for "", else the subdirectory's, kept open (up to kKeptDirs of them), so
  // that a test walking its directories' files (bonnie's, PostMark's) opens and checks each
  // directory once, not once per file. A descriptor keeps meaning the directory the phase made,
  // wherever it is moved.
  common::StatusOr<int> DirFd(std::string_view dir);
  // Closes the kept descriptors of `dir` and of what is below it (before `dir` is removed).
  void ForgetDirFd(std::string_view dir);
  // Opens `name` by its last component beneath its parent's kept descriptor. An exclusive
  // create (O_CREAT | O_EXCL) is a new regular file of the agent's, with one link, by
  // construction, and is not stat'ed. Anything else is checked with fstat: a regular file on the
  // target's filesystem with one link, owned by the agent, and inode `*known` if that is not
  // PhaseNames::kNotSeen (which the inode opened then replaces). Sets `*blksize` if given.
  common::StatusOr<Fd> OpenChecked(std::string_view name, int flags, mode_t mode, ino_t* known,
                                   std::string_view what, blksize_t* blksize = nullptr);
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
  const blksize_t blksize_;  // The phase directory's st_blksize: its filesystem's.
  PhaseNames names_;
  // Subdirectories' descriptors kept open by DirFd, by name; emptied when full.
  static constexpr size_t kKeptDirs = 64;
  absl::flat_hash_map<std::string, Fd> kept_dirs_;
  bool adopt_contents_ = false;
  bool phase_dir_removed_ = false;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_OS_DIR_H_
