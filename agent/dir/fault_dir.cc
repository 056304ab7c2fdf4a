#include "agent/dir/fault_dir.h"

#include <cerrno>
#include <cstring>

#include "agent/dir/file_stream.h"
#include "common/strings.h"

namespace stormark::agent {

// A File of the base Dir, with the Dir's faults applied to its writes and syncs.
class FaultFile final : public File {
 public:
  FaultFile(std::unique_ptr<File> base, FaultDir* dir) : base_(std::move(base)), dir_(dir) {}

  ssize_t Read(void* buf, size_t n) override { return base_->Read(buf, n); }
  ssize_t Write(const void* buf, size_t n) override {
    if (const ssize_t fault = WriteFault(&n); fault != 0) return fault;
    return Count(base_->Write(buf, n));
  }
  ssize_t ReadAt(void* buf, size_t n, uint64_t offset) override {
    return base_->ReadAt(buf, n, offset);
  }
  ssize_t WriteAt(const void* buf, size_t n, uint64_t offset) override {
    if (const ssize_t fault = WriteFault(&n); fault != 0) return fault;
    return Count(base_->WriteAt(buf, n, offset));
  }
  int64_t Seek(int64_t offset, int whence) override { return base_->Seek(offset, whence); }
  int Sync() override {
    return dir_->faults_.sync_errno ? -dir_->faults_.sync_errno : base_->Sync();
  }
  int DataSync() override {
    return dir_->faults_.sync_errno ? -dir_->faults_.sync_errno : base_->DataSync();
  }
  int Truncate(uint64_t size) override { return base_->Truncate(size); }
  int64_t Size() override { return base_->Size(); }
  int Close() override { return base_->Close(); }
  // Through these calls, so that stdio meets the faults too.
  std::FILE* OpenStream(const char* mode) override { return OpenFileStream(this, mode); }
  int fd() const override { return -1; }  // A descriptor would bypass the faults.
  int ReleaseFd() override {
    Close();
    return -1;
  }

 private:
  // -errno when the write must fail; else 0, with `n` cut to the short-write limit.
  ssize_t WriteFault(size_t* n) const {
    const DirFaults& faults = dir_->faults_;
    if (faults.write_errno != 0 && dir_->bytes_written_ >= faults.bytes_before_write_error) {
      return -faults.write_errno;
    }
    if (faults.max_write_bytes != 0 && *n > faults.max_write_bytes) *n = faults.max_write_bytes;
    return 0;
  }
  ssize_t Count(ssize_t r) {
    if (r > 0) dir_->bytes_written_ += static_cast<uint64_t>(r);
    return r;
  }

  std::unique_ptr<File> base_;
  FaultDir* const dir_;
};

common::StatusOr<std::unique_ptr<File>> FaultDir::CreateFile(std::string_view name, int flags) {
  if (faults_.create_errno != 0 && creates_ >= faults_.creates_before_error) {
    return common::ErrnoError(
        common::StrCat("target '", target_name(), "': cannot create ", Describe(name)),
        faults_.create_errno);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, base_->CreateFile(name, flags));
  ++creates_;
  return std::unique_ptr<File>(new FaultFile(std::move(file), this));
}

common::StatusOr<std::unique_ptr<File>> FaultDir::OpenFile(std::string_view name, int flags) {
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, base_->OpenFile(name, flags));
  return std::unique_ptr<File>(new FaultFile(std::move(file), this));
}

common::StatusOr<std::unique_ptr<File>> FaultDir::OpenDirectory(std::string_view dir) {
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, base_->OpenDirectory(dir));
  return std::unique_ptr<File>(new FaultFile(std::move(file), this));
}

common::Status FaultDir::SyncDirectory(std::string_view dir) {
  if (faults_.sync_errno != 0) {
    return common::ErrnoError(common::StrCat("fsync ", Describe(dir)), faults_.sync_errno);
  }
  return base_->SyncDirectory(dir);
}

common::Status FaultDir::SyncFilesystem() {
  if (faults_.sync_errno != 0) return common::ErrnoError("syncfs", faults_.sync_errno);
  return base_->SyncFilesystem();
}

}  // namespace stormark::agent
