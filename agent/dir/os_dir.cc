#include "agent/dir/os_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/dir/c_name.h"
#include "agent/dir/os_file.h"
#include "agent/dir/remove_tree.h"
#include "common/log_text.h"
#include "common/spec_check.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// What a file that is not a regular file is, for messages.
const char* KindOf(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "a regular file";
    case S_IFDIR:
      return "a directory";
    case S_IFLNK:
      return "a symbolic link";
    case S_IFBLK:
      return "a block device";
    case S_IFCHR:
      return "a character device";
    case S_IFIFO:
      return "a FIFO";
    case S_IFSOCK:
      return "a socket";
  }
  return "of an unknown type";
}

// The access mode and the flags a caller may add; the rest are the Dir's to choose.
int CallerFlags(int flags) { return flags & (O_ACCMODE | O_DIRECT | O_APPEND | O_SYNC | O_DSYNC); }

class OsListing final : public DirListing {
 public:
  explicit OsListing(DIR* dir) : dir_(dir) {}
  ~OsListing() override { closedir(dir_); }
  OsListing(const OsListing&) = delete;
  OsListing& operator=(const OsListing&) = delete;

  StatusOr<std::optional<std::string>> Next() override {
    for (;;) {
      errno = 0;
      const dirent* entry = readdir(dir_);
      if (entry == nullptr) {
        if (errno != 0) return common::ErrnoError("readdir", errno);
        return std::optional<std::string>();
      }
      if (entry->d_name[0] != '.') return std::optional<std::string>(entry->d_name);
    }
  }

 private:
  DIR* const dir_;
};

}  // namespace

StatusOr<std::unique_ptr<OsDir>> OsDir::Create(std::string target_name, std::string target_path,
                                               Fd target_fd, std::string_view phase_id,
                                               Resolver resolver) {
  if (!common::IsValidName(phase_id)) {
    return absl::InvalidArgumentError(StrCat("bad phase id '", common::LogSafe(phase_id), "'"));
  }
  const std::string phase_name = StrCat(".stormark-", phase_id);
  const std::string where = StrCat(target_path, "/", phase_name);
  const std::string on = StrCat("target '", target_name, "': ");
  struct stat target;
  if (fstat(target_fd.get(), &target) != 0 || !S_ISDIR(target.st_mode)) {
    return absl::FailedPreconditionError(StrCat(on, target_path, " is not an open directory"));
  }
  if (mkdirat(target_fd.get(), phase_name.c_str(), 0700) != 0) {
    const int err = errno;
    if (err == EEXIST) {
      return absl::AlreadyExistsError(
          StrCat(on, where, " already exists (left over from an earlier run? remove it by hand)"));
    }
    return common::ErrnoError(StrCat(on, "cannot create ", where), err);
  }
  Fd phase_fd(
      openat(target_fd.get(), phase_name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat phase;
  if (phase_fd.get() < 0 || fstat(phase_fd.get(), &phase) != 0 || !S_ISDIR(phase.st_mode) ||
      phase.st_dev != target.st_dev || phase.st_uid != geteuid() || (phase.st_mode & 077) != 0) {
    // Someone replaced the directory between mkdirat and openat: touch nothing of theirs.
    return absl::FailedPreconditionError(
        StrCat(on, where, " was replaced as soon as it was made; someone else can write to ",
               target_path, ", so the agent will not use it"));
  }
  return std::unique_ptr<OsDir>(new OsDir(std::move(target_name), std::move(target_path),
                                          std::move(target_fd), phase_name, std::move(phase_fd),
                                          phase, resolver));
}

OsDir::OsDir(std::string target_name, std::string target_path, Fd target_fd, std::string phase_name,
             Fd phase_fd, const struct stat& phase, Resolver resolver)
    : target_name_(std::move(target_name)),
      target_path_(std::move(target_path)),
      target_fd_(std::move(target_fd)),
      phase_name_(std::move(phase_name)),
      phase_fd_(std::move(phase_fd)),
      dev_(phase.st_dev),
      phase_ino_(phase.st_ino),
      owner_(phase.st_uid),
      resolver_(resolver),
      blksize_(phase.st_blksize > 0 ? phase.st_blksize : BUFSIZ) {}

OsDir::~OsDir() { Cleanup(); }

std::string OsDir::Describe(std::string_view name) const {
  if (name.empty()) return StrCat(target_path_, "/", phase_name_);
  return StrCat(target_path_, "/", phase_name_, "/", name);
}

Status OsDir::NotOurs(std::string_view name, std::string_view is) const {
  return absl::FailedPreconditionError(
      StrCat("target '", target_name_, "': ", Describe(name), " is ", is,
             ", not what this phase created there; the agent does not follow or use it"));
}

Status OsDir::Errno(std::string_view what, std::string_view name, int err, int flags) const {
  if (err == EINVAL && (flags & O_DIRECT)) {
    return absl::InvalidArgumentError(StrCat("target '", target_name_, "': the filesystem under ",
                                             target_path_,
                                             " does not support O_DIRECT (direct: true)"));
  }
  if (err == ELOOP) return NotOurs(name, "a symbolic link");
  // O_NONBLOCK's answer for a FIFO nobody reads, or a device with nothing behind it.
  if (err == ENXIO) return NotOurs(name, "a FIFO or a device");
  if (err == EXDEV) return NotOurs(name, "on another filesystem (a mount point) or outside it");
  return common::ErrnoError(
      StrCat("target '", target_name_, "': cannot ", what, " ", Describe(name)), err);
}

StatusOr<Fd> OsDir::OpenDirFd(std::string_view dir) const {
  if (dir.empty()) {
    Fd fd(openat(phase_fd_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) return Errno("open", dir, errno);
    return fd;
  }
  const ino_t* expected = names_.Directory(dir);
  if (expected == nullptr) {
    return absl::NotFoundError(StrCat("directory '", dir, "' was not created by this phase"));
  }
  Fd fd(OpenBeneath(phase_fd_.get(), dir, O_RDONLY | O_DIRECTORY, 0, resolver_));
  if (fd.get() < 0) return Errno("open", dir, errno);
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Errno("stat", dir, errno);
  if (!S_ISDIR(st.st_mode) || st.st_ino != *expected || st.st_dev != dev_) {
    return NotOurs(dir, S_ISDIR(st.st_mode) ? "another directory" : KindOf(st.st_mode));
  }
  return fd;
}

StatusOr<int> OsDir::DirFd(std::string_view dir) {
  if (dir.empty()) return phase_fd_.get();
  if (auto it = kept_dirs_.find(absl::string_view(dir.data(), dir.size()));
      it != kept_dirs_.end()) {
    return it->second.get();
  }
  ASSIGN_OR_RETURN(Fd fd, OpenDirFd(dir));
  if (kept_dirs_.size() >= kKeptDirs) kept_dirs_.clear();
  const int kept = fd.get();
  kept_dirs_.emplace(std::string(dir), std::move(fd));
  return kept;
}

void OsDir::ForgetDirFd(std::string_view dir) {
  absl::erase_if(kept_dirs_, [dir](const auto& entry) {
    const std::string& kept = entry.first;
    return kept == dir ||
           (kept.size() > dir.size() && kept.starts_with(dir) && kept[dir.size()] == '/');
  });
}

StatusOr<Fd> OsDir::OpenChecked(std::string_view name, int flags, mode_t mode, ino_t* known,
                                std::string_view what, blksize_t* blksize) {
  ASSIGN_OR_RETURN(const int parent, DirFd(PhaseNames::Parent(name)));
  // O_NONBLOCK: opening a FIFO or a device put in our place must not block or act; the
  // descriptor is refused below before anything reads or writes it. An exclusive create opens
  // nothing that was in place (it fails on any name that exists, a FIFO or a symlink too), so it
  // needs neither O_NONBLOCK nor the fcntl that takes it off again.
  const bool exclusive = (flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL);
  Fd fd(OpenBeneath(parent, PhaseNames::Base(name), flags | O_NOCTTY | (exclusive ? 0 : O_NONBLOCK),
                    mode, resolver_));
  if (fd.get() < 0) return Errno(what, name, errno, flags);
  if (blksize != nullptr) *blksize = blksize_;
  // What O_EXCL made is a new regular file in the checked parent, the agent's, with one link:
  // an fstat would tell nothing more than its inode, which the first call to stat it learns.
  if (exclusive) return fd;
  struct stat st;
  if (fstat(fd.get(), &st) != 0) return Errno("stat", name, errno);
  if (!S_ISREG(st.st_mode)) return NotOurs(name, KindOf(st.st_mode));
  if (st.st_dev != dev_) return NotOurs(name, "on another filesystem");
  if (known != nullptr && *known != PhaseNames::kNotSeen && st.st_ino != *known) {
    return NotOurs(name, "another file");
  }
  // A second link would make a write here a write to someone else's file.
  if (st.st_nlink != 1 || st.st_uid != owner_) {
    return NotOurs(name, StrCat("a file with ", st.st_nlink, " links owned by uid ", st.st_uid));
  }
  if (known != nullptr) *known = st.st_ino;
  if (blksize != nullptr) *blksize = st.st_blksize;
  // Off again (io_uring would answer EAGAIN on a non-blocking file); F_SETFL sets these only.
  if (fcntl(fd.get(), F_SETFL, flags & (O_APPEND | O_DIRECT)) != 0) {
    return Errno(what, name, errno);
  }
  return fd;
}

StatusOr<std::unique_ptr<File>> OsDir::CreateFile(std::string_view name, int flags) {
  const int caller = CallerFlags(flags);
  blksize_t blksize = blksize_;
  auto [known, added] = names_.FindOrAddFile(name);
  if (!added) {
    // Created before: the same inode, emptied, as O_TRUNC would (which is not given to open,
    // so that nothing is emptied before it is known to be ours).
    const int access = (caller & O_ACCMODE) == O_RDONLY ? (caller & ~O_ACCMODE) | O_RDWR : caller;
    StatusOr<Fd> fd = OpenChecked(name, access, 0, known, "create", &blksize);
    if (fd.ok()) {
      if (ftruncate(fd->get(), 0) != 0) return Errno("truncate", name, errno);
      if (access != caller) {
        // Asked for read-only: reopen so, checked again to be the inode just emptied.
        ASSIGN_OR_RETURN(Fd again, OpenChecked(name, caller, 0, known, "open"));
        return std::unique_ptr<File>(new OsFile(again.Release(), blksize));
      }
      return std::unique_ptr<File>(new OsFile(fd->Release(), blksize));
    }
    if (!absl::IsNotFound(fd.status())) return fd.status();
    *known = PhaseNames::kNotSeen;  // Gone (removed by hand): made anew below.
  }
  // Made anew: the name stays in the table only if the exclusive create succeeds.
  if (Status valid = names_.CheckNew(name); !valid.ok()) {
    names_.RemoveFile(name);
    return valid;
  }
  StatusOr<Fd> fd = OpenChecked(name, caller | O_CREAT | O_EXCL, 0600, nullptr, "create");
  if (!fd.ok()) {
    names_.RemoveFile(name);
    return fd.status();
  }
  return std::unique_ptr<File>(new OsFile(fd->Release(), blksize));
}

StatusOr<std::unique_ptr<File>> OsDir::OpenFile(std::string_view name, int flags) {
  ino_t* known = names_.File(name);
  if (known == nullptr) {
    return absl::NotFoundError(StrCat("file '", name, "' was not created by this phase"));
  }
  blksize_t blksize = blksize_;
  ASSIGN_OR_RETURN(Fd fd, OpenChecked(name, CallerFlags(flags), 0, known, "open", &blksize));
  return std::unique_ptr<File>(new OsFile(fd.Release(), blksize));
}

Status OsDir::RemoveFile(std::string_view name) {
  const std::optional<ino_t> known = names_.TakeFile(name);  // Put back unless removed.
  if (!known) {
    return absl::NotFoundError(StrCat("file '", name, "' was not created by this phase"));
  }
  // One unlinkat of the name below its parent's checked descriptor, as bonnie++'s and
  // PostMark's delete is one unlink. unlinkat follows no link, removes no directory (EISDIR),
  // crosses no mount (EBUSY), and frees no data another name still holds: whatever was put in
  // the phase's place (which only the agent's user can do: the phase directory is its own,
  // mode 0700), what is removed is that name, in the phase's own directory, and nothing it
  // points to. A stat before it would cost a call per file that bonnie++ does not make.
  StatusOr<int> parent = DirFd(PhaseNames::Parent(name));
  if (!parent.ok()) {
    names_.AddFile(name, *known);
    return parent.status();
  }
  const CName base(PhaseNames::Base(name));
  if (unlinkat(*parent, base.c_str(), 0) != 0) {
    const int err = errno;
    if (err != ENOENT) names_.AddFile(name, *known);  // Still there: still the phase's.
    if (err == EISDIR) return NotOurs(name, "a directory");
    return Errno("remove", name, err);
  }
  return absl::OkStatus();
}

Status OsDir::CreateDirectory(std::string_view name) {
  RETURN_IF_ERROR(names_.CheckNew(name));
  ASSIGN_OR_RETURN(const int parent, DirFd(PhaseNames::Parent(name)));
  const CName base(PhaseNames::Base(name));
  if (mkdirat(parent, base.c_str(), 0700) != 0) return Errno("create", name, errno);
  Fd made(openat(parent, base.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (made.get() < 0) return Errno("open", name, errno);
  struct stat st;
  if (fstat(made.get(), &st) != 0) return Errno("stat", name, errno);
  if (st.st_dev != dev_) return NotOurs(name, "on another filesystem");
  names_.AddDirectory(name, st.st_ino);
  return absl::OkStatus();
}

Status OsDir::RemoveDirectory(std::string_view name) {
  const ino_t* known = names_.Directory(name);
  if (known == nullptr) {
    return absl::NotFoundError(StrCat("directory '", name, "' was not created by this phase"));
  }
  const ino_t expected = *known;
  ForgetDirFd(name);
  ASSIGN_OR_RETURN(const int parent, DirFd(PhaseNames::Parent(name)));
  const CName base(PhaseNames::Base(name));
  struct stat st;
  if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    const int err = errno;
    if (err == ENOENT) names_.RemoveDirectory(name);
    return Errno("remove", name, err);
  }
  if (st.st_ino != expected || !S_ISDIR(st.st_mode)) {
    return NotOurs(name, S_ISDIR(st.st_mode) ? "another directory" : KindOf(st.st_mode));
  }
  if (unlinkat(parent, base.c_str(), AT_REMOVEDIR) != 0) {
    return Errno("remove", name, errno);
  }
  names_.RemoveDirectory(name);
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<DirListing>> OsDir::List(std::string_view dir) {
  ASSIGN_OR_RETURN(Fd fd, OpenDirFd(dir));
  DIR* stream = fdopendir(fd.get());
  if (stream == nullptr) return Errno("list", dir, errno);
  fd.Release();
  return std::unique_ptr<DirListing>(new OsListing(stream));
}

Status OsDir::SyncDirectory(std::string_view dir) {
  ASSIGN_OR_RETURN(Fd fd, OpenDirFd(dir));
  if (fsync(fd.get()) != 0) return Errno("fsync", dir, errno);
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<File>> OsDir::OpenDirectory(std::string_view dir) {
  ASSIGN_OR_RETURN(Fd fd, OpenDirFd(dir));
  return std::unique_ptr<File>(new OsFile(fd.Release()));
}

Status OsDir::SyncFilesystem() {
  if (syncfs(phase_fd_.get()) != 0) return Errno("syncfs the filesystem of", "", errno);
  return absl::OkStatus();
}

StatusOr<FileInfo> OsDir::Stat(std::string_view name) {
  ino_t* file = names_.File(name);
  const ino_t* dir = file == nullptr ? names_.Directory(name) : nullptr;
  if (file == nullptr && dir == nullptr) {
    return absl::NotFoundError(StrCat("'", name, "' was not created by this phase"));
  }
  // One fstatat below the checked parent, as stat(2) is one call: a link is stat'ed as the
  // link (refused below), and a mount over the name shows as another filesystem.
  ASSIGN_OR_RETURN(const int parent, DirFd(PhaseNames::Parent(name)));
  const CName base(PhaseNames::Base(name));
  struct stat st;
  if (fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Errno("stat", name, errno);
  }
  const bool is_dir = S_ISDIR(st.st_mode);
  if ((file != nullptr && !S_ISREG(st.st_mode)) || (dir != nullptr && !is_dir)) {
    return NotOurs(name, KindOf(st.st_mode));
  }
  if (st.st_dev != dev_) return NotOurs(name, "on another filesystem");
  if (file != nullptr && *file == PhaseNames::kNotSeen) {
    // First seen now (an exclusive create does not stat): from here on, the phase's file.
    if (st.st_nlink != 1 || st.st_uid != owner_) {
      return NotOurs(name, StrCat("a file with ", st.st_nlink, " links owned by uid ", st.st_uid));
    }
    *file = st.st_ino;
  } else if (st.st_ino != (file != nullptr ? *file : *dir)) {
    return NotOurs(name, is_dir ? "another directory" : "another file");
  }
  FileInfo info;
  info.is_directory = is_dir;
  info.size = static_cast<uint64_t>(st.st_size);
  return info;
}

std::optional<uint64_t> OsDir::FreeBytes() {
  struct statvfs vfs;
  if (fstatvfs(phase_fd_.get(), &vfs) != 0) return std::nullopt;
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

CleanupReport OsDir::Cleanup() {
  CleanupReport report;
  kept_dirs_.clear();  // Cleanup opens each directory afresh, checked again.
  if (phase_dir_removed_) return report;
  auto leave = [&](std::string_view name, std::string_view why) {
    report.left.push_back(StrCat(name.empty() ? phase_name_ : name, ": ", why));
  };
  // Files, one parent directory at a time, each only if it is still the inode this phase made.
  Fd parent;
  std::string parent_name = "\x01";  // No real parent is called so.
  bool parent_ok = false;
  for (const auto& [name, ino] : names_.FilesByParent()) {
    const std::string_view dir = PhaseNames::Parent(name);
    if (dir != parent_name) {
      parent_name = std::string(dir);
      StatusOr<Fd> opened = OpenDirFd(dir);
      parent_ok = opened.ok();
      if (parent_ok) parent = std::move(*opened);
    }
    if (!parent_ok) {
      leave(name, "its directory is gone or was replaced");
      continue;
    }
    const CName base(PhaseNames::Base(name));
    struct stat st;
    if (fstatat(parent.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) leave(name, std::strerror(errno));
      continue;  // Already gone: nothing to do.
    }
    if ((ino != PhaseNames::kNotSeen && st.st_ino != ino) || !S_ISREG(st.st_mode)) {
      leave(name, StrCat("replaced by ", KindOf(st.st_mode), " this phase did not create"));
      continue;
    }
    if (unlinkat(parent.get(), base.c_str(), 0) == 0) {
      ++report.removed;
    } else {
      leave(name, std::strerror(errno));
    }
  }
  parent = Fd();
  for (const auto& [name, ino] : names_.DirectoriesDeepestFirst()) {
    StatusOr<Fd> above = OpenDirFd(PhaseNames::Parent(name));
    if (!above.ok()) {
      leave(name, "its directory is gone or was replaced");
      continue;
    }
    const CName base(PhaseNames::Base(name));
    struct stat st;
    if (fstatat(above->get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno != ENOENT) leave(name, std::strerror(errno));
      continue;
    }
    if (st.st_ino != ino || !S_ISDIR(st.st_mode)) {
      leave(name, StrCat("replaced by ", KindOf(st.st_mode), " this phase did not create"));
      continue;
    }
    if (unlinkat(above->get(), base.c_str(), AT_REMOVEDIR) == 0) {
      ++report.removed;
    } else {
      leave(name,
            errno == ENOTEMPTY ? "holds files this phase did not create" : std::strerror(errno));
    }
  }
  names_.Clear();
  if (adopt_contents_) report.removed += RemoveDirectoryContents(phase_fd_.get());
  // The phase directory itself, by its name in the target directory, if that name is still it.
  struct stat st;
  if (fstatat(target_fd_.get(), phase_name_.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    leave("", errno == ENOENT ? "the phase directory was moved away or removed by someone else"
                              : std::strerror(errno));
  } else if (st.st_ino != phase_ino_ || st.st_dev != dev_) {
    leave("", StrCat("the phase directory was replaced by ", KindOf(st.st_mode),
                     "; the agent left it alone"));
  } else if (unlinkat(target_fd_.get(), phase_name_.c_str(), AT_REMOVEDIR) == 0) {
    ++report.removed;
  } else {
    leave("", errno == ENOTEMPTY ? "holds files this phase did not create" : std::strerror(errno));
  }
  phase_dir_removed_ = true;
  return report;
}

}  // namespace stormark::agent
