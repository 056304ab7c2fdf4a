// The Dir seam: the one way a phase reaches its files, as leveldb's Env is for leveldb.
//
// A phase that works in a `dir:` target gets one Dir: its own phase directory,
// <target>/.stormark-<phase id>/. Every file and subdirectory the phase makes or opens is named
// relative to it ("data", "files/00003/0000000001ab"), and every component of a name must pass
// IsValidName, so no name can climb out. The guarantees of the real implementation (OsDir,
// agent/dir/os_dir.h), which no workload can get around because no workload ever builds a path
// to reach its own files:
//
//   - The target directory is opened once, as a descriptor, when it is checked; the phase
//     directory is made and opened relative to that descriptor. Renaming, replacing or
//     symlinking either path afterwards changes nothing the phase reaches.
//   - Every file or directory is opened relative to the phase directory's descriptor, with no
//     symbolic link followed in any component, and never on another filesystem (openat2's
//     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV, or
//     O_NOFOLLOW per component where the kernel has no openat2).
//   - A file is made by an exclusive create (O_CREAT | O_EXCL), which opens nothing that was in
//     place. Every other descriptor, and every Stat, is checked: a regular file (or directory)
//     on the target's filesystem, with one link, and the very inode this phase saw first under
//     that name. Anything else fails the call with one line naming the file and what it is.
//   - A phase reaches only what it created: opening, listing or removing anything else is
//     NOT_FOUND. Removal is one unlinkat of the name below its parent's descriptor (as an
//     unlink is one call): it follows no link, removes no directory, frees no data another
//     name holds, and never leaves the phase directory.
//
// File calls return what the system call would: a byte count or 0, or -errno. They are
// cheap to call in a timed loop (one virtual call over the system call).
//
// A Dir and its Files are used by one phase: not thread-safe, except that distinct Files may
// be used from distinct threads.
#ifndef STORMARK_AGENT_DIR_DIR_H_
#define STORMARK_AGENT_DIR_DIR_H_

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace stormark::agent {

// One open file of a phase. Closes itself when destroyed.
class File {
 public:
  virtual ~File() = default;

  // As read(2) and write(2) at the file position (a write may be short): bytes done, or
  // -errno.
  virtual ssize_t Read(void* buf, size_t n) = 0;
  virtual ssize_t Write(const void* buf, size_t n) = 0;
  // As pread(2) and pwrite(2).
  virtual ssize_t ReadAt(void* buf, size_t n, uint64_t offset) = 0;
  virtual ssize_t WriteAt(const void* buf, size_t n, uint64_t offset) = 0;
  // As lseek(2): the new position, or -errno.
  virtual int64_t Seek(int64_t offset, int whence) = 0;
  // fsync(2), fdatasync(2), ftruncate(2): 0 or -errno.
  virtual int Sync() = 0;
  virtual int DataSync() = 0;
  virtual int Truncate(uint64_t size) = 0;
  // The file's size in bytes, or -errno.
  virtual int64_t Size() = 0;
  // Closes now: 0, or the -errno of close(2), which can be the first sign of a lost write.
  // Every later call fails with -EBADF. Idempotent.
  virtual int Close() = 0;

  // A C stdio stream over this file, for workloads that measure stdio as their reference
  // tool does (PostMark's fwrite). `mode` as fdopen's. The stream is the file from then on:
  // fclose it, and use nothing else of this File but its destruction. nullptr with errno set
  // on failure.
  virtual std::FILE* OpenStream(const char* mode) = 0;

  // The operating system's descriptor, for what only a descriptor can do (io_uring,
  // posix_fadvise, mincore); -1 for a file that has none (MemoryDir).
  virtual int fd() const = 0;
  // Gives up the descriptor to the caller, who closes it (a FileDevice adopts it); -1 when
  // there is none. The File is closed afterwards.
  virtual int ReleaseFd() = 0;
};

// What a name in a Dir is.
struct FileInfo {
  bool is_directory = false;
  uint64_t size = 0;
};

// The entries of one directory of a phase, in the order the filesystem gives them (as
// readdir's), names starting with '.' left out.
class DirListing {
 public:
  virtual ~DirListing() = default;
  // The next name (without its directory), or nullopt at the end; -errno in the status.
  virtual common::StatusOr<std::optional<std::string>> Next() = 0;
};

// What Cleanup did.
struct CleanupReport {
  int removed = 0;  // Files and directories removed, the phase directory included.
  // What could not be removed, each "name: why"; empty when everything was.
  std::vector<std::string> left;
};

class Dir {
 public:
  virtual ~Dir() = default;

  // Creates `name` as an empty regular file and opens it with `flags` (O_RDONLY, O_WRONLY or
  // O_RDWR, plus O_DIRECT or O_APPEND; O_CREAT, O_TRUNC and O_EXCL are implied). A name this
  // phase created before is truncated, provided it is still the file the phase created.
  // Its parent must be the phase directory or a directory this phase created.
  virtual common::StatusOr<std::unique_ptr<File>> CreateFile(std::string_view name, int flags) = 0;
  // Opens a file this phase created, with `flags` as above but O_CREAT; NOT_FOUND for any
  // other name.
  virtual common::StatusOr<std::unique_ptr<File>> OpenFile(std::string_view name, int flags) = 0;
  // Removes a file this phase created: NOT_FOUND for any other name.
  virtual common::Status RemoveFile(std::string_view name) = 0;

  // Makes directory `name` (mode 0700); its parent as for CreateFile.
  virtual common::Status CreateDirectory(std::string_view name) = 0;
  // Removes an empty directory this phase created: NOT_FOUND for any other name.
  virtual common::Status RemoveDirectory(std::string_view name) = 0;
  // Lists a directory this phase created ("" is the phase directory).
  virtual common::StatusOr<std::unique_ptr<DirListing>> List(std::string_view dir) = 0;
  // fsync(2) of a directory this phase created ("" is the phase directory).
  virtual common::Status SyncDirectory(std::string_view dir) = 0;
  // Opens such a directory and holds it, as a tool that keeps its directories open for fsync
  // does: the File's Sync() is fsync(2) of the directory; its reads and writes fail.
  virtual common::StatusOr<std::unique_ptr<File>> OpenDirectory(std::string_view dir) = 0;
  // syncfs(2) of the filesystem the phase directory is on.
  virtual common::Status SyncFilesystem() = 0;

  // What `name` is, for a file or directory this phase created: NOT_FOUND otherwise. Reads
  // what is there now (as stat(2)), after the same identity checks as an open.
  virtual common::StatusOr<FileInfo> Stat(std::string_view name) = 0;
  // Bytes free to an unprivileged user on the phase directory's filesystem, if known.
  virtual std::optional<uint64_t> FreeBytes() = 0;

  // A hint before a timed loop: about `count` more files are about to be created, so that the
  // Dir's own table of names grows once, now, not in the middle of the loop. The caller has
  // counted their memory (common/memory_estimate.h).
  virtual void ExpectFiles(uint64_t count) {}

  // From now on, Cleanup also removes what others wrote in the phase directory (a command's
  // output), without following symbolic links or entering other filesystems.
  virtual void AdoptContents() = 0;
  // Removes every file and directory this phase created and still holds (after
  // AdoptContents, everything in the phase directory), then the phase directory. Idempotent:
  // a second call removes nothing.
  virtual CleanupReport Cleanup() = 0;

  // The phase directory's descriptor (a command's working directory, syncfs); -1 for a Dir
  // with none (MemoryDir).
  virtual int fd() const = 0;
  // Where `name` is, for messages and for a command's environment: "/srv/t/.stormark-p1/x".
  // Never used to reach the file.
  virtual std::string Describe(std::string_view name) const = 0;
  // The target's name, for messages ("target 'scratch': ...").
  virtual const std::string& target_name() const = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_DIR_H_
