// A Dir that passes every call to another one, except the faults a test asks for, as
// leveldb's FaultInjectionTestEnv does: the disk filling up at the Nth create, an fsync that
// fails, writes cut short. Workloads are tested with it for their error paths, without root
// or disks (usually over a MemoryDir).
#ifndef STORMARK_AGENT_DIR_FAULT_DIR_H_
#define STORMARK_AGENT_DIR_FAULT_DIR_H_

#include <cstdint>
#include <memory>

#include "agent/dir/dir.h"

namespace stormark::agent {

struct DirFaults {
  // CreateFile fails with this errno (ENOSPC, say) once `creates_before_error` creates have
  // succeeded; 0: never.
  int create_errno = 0;
  uint64_t creates_before_error = 0;
  // Every File's Sync and DataSync (and SyncDirectory, SyncFilesystem) fail with this errno
  // (EIO, say); 0: never.
  int sync_errno = 0;
  // Every write does at most this many bytes (a short write); 0: whole writes.
  size_t max_write_bytes = 0;
  // Writes fail with this errno once `bytes_before_write_error` bytes were written through
  // this Dir's files, all together; 0: never.
  int write_errno = 0;
  uint64_t bytes_before_write_error = 0;
};

class FaultDir final : public Dir {
 public:
  // `base` must outlive this object.
  FaultDir(Dir* base, DirFaults faults) : base_(base), faults_(faults) {}

  common::StatusOr<std::unique_ptr<File>> CreateFile(std::string_view name, int flags) override;
  common::StatusOr<std::unique_ptr<File>> OpenFile(std::string_view name, int flags) override;
  common::Status RemoveFile(std::string_view name) override { return base_->RemoveFile(name); }
  common::Status CreateDirectory(std::string_view name) override {
    return base_->CreateDirectory(name);
  }
  common::Status RemoveDirectory(std::string_view name) override {
    return base_->RemoveDirectory(name);
  }
  common::StatusOr<std::unique_ptr<DirListing>> List(std::string_view dir) override {
    return base_->List(dir);
  }
  common::Status SyncDirectory(std::string_view dir) override;
  common::StatusOr<std::unique_ptr<File>> OpenDirectory(std::string_view dir) override;
  common::Status SyncFilesystem() override;
  common::StatusOr<FileInfo> Stat(std::string_view name) override { return base_->Stat(name); }
  std::optional<uint64_t> FreeBytes() override { return base_->FreeBytes(); }
  void ExpectFiles(uint64_t count) override { base_->ExpectFiles(count); }
  void AdoptContents() override { base_->AdoptContents(); }
  CleanupReport Cleanup() override { return base_->Cleanup(); }
  int fd() const override { return base_->fd(); }
  std::string Describe(std::string_view name) const override { return base_->Describe(name); }
  const std::string& target_name() const override { return base_->target_name(); }

  DirFaults& faults() { return faults_; }
  uint64_t bytes_written() const { return bytes_written_; }

 private:
  friend class FaultFile;

  Dir* const base_;
  DirFaults faults_;
  uint64_t creates_ = 0;
  uint64_t bytes_written_ = 0;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_FAULT_DIR_H_
