#include "agent/dir/memory_dir.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/dir/file_stream.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

class MemoryFile final : public File {
 public:
  // A `directory` has no data: Sync succeeds until closed, reads and writes fail.
  MemoryFile(std::shared_ptr<std::string> data, int flags, bool directory = false)
      : data_(std::move(data)),
        directory_(directory),
        readable_((flags & O_ACCMODE) != O_WRONLY),
        writable_((flags & O_ACCMODE) != O_RDONLY),
        append_(flags & O_APPEND) {}

  ssize_t Read(void* buf, size_t n) override {
    const ssize_t r = ReadAt(buf, n, position_);
    if (r > 0) position_ += static_cast<uint64_t>(r);
    return r;
  }
  ssize_t Write(const void* buf, size_t n) override {
    if (data_ != nullptr && append_) position_ = data_->size();
    const ssize_t r = WriteAt(buf, n, position_);
    if (r > 0) position_ += static_cast<uint64_t>(r);
    return r;
  }
  ssize_t ReadAt(void* buf, size_t n, uint64_t offset) override {
    if (directory_ && !closed_) return -EISDIR;
    if (data_ == nullptr || !readable_) return -EBADF;
    if (offset >= data_->size()) return 0;
    const size_t count = std::min<uint64_t>(n, data_->size() - offset);
    std::memcpy(buf, data_->data() + offset, count);
    return static_cast<ssize_t>(count);
  }
  ssize_t WriteAt(const void* buf, size_t n, uint64_t offset) override {
    if (directory_ && !closed_) return -EISDIR;
    if (data_ == nullptr || !writable_) return -EBADF;
    if (data_->size() < offset + n) data_->resize(offset + n);
    std::memcpy(data_->data() + offset, buf, n);
    return static_cast<ssize_t>(n);
  }
  int64_t Seek(int64_t offset, int whence) override {
    if (data_ == nullptr) return -EBADF;
    const int64_t base = whence == SEEK_SET   ? 0
                         : whence == SEEK_CUR ? static_cast<int64_t>(position_)
                         : whence == SEEK_END ? static_cast<int64_t>(data_->size())
                                              : -1;
    if (base < 0 || base + offset < 0) return -EINVAL;
    position_ = static_cast<uint64_t>(base + offset);
    return static_cast<int64_t>(position_);
  }
  int Sync() override { return closed_ ? -EBADF : 0; }
  int DataSync() override { return Sync(); }
  int Truncate(uint64_t size) override {
    if (data_ == nullptr || !writable_) return -EBADF;
    data_->resize(size);
    return 0;
  }
  int64_t Size() override {
    return data_ == nullptr ? -EBADF : static_cast<int64_t>(data_->size());
  }
  int Close() override {
    data_.reset();
    closed_ = true;
    return 0;
  }
  std::FILE* OpenStream(const char* mode) override { return OpenFileStream(this, mode); }
  int fd() const override { return -1; }
  int ReleaseFd() override {
    Close();
    return -1;
  }

 private:
  std::shared_ptr<std::string> data_;  // Null once closed, and for a directory.
  const bool directory_;
  bool closed_ = false;
  const bool readable_;
  const bool writable_;
  const bool append_;
  uint64_t position_ = 0;
};

class MemoryListing final : public DirListing {
 public:
  explicit MemoryListing(std::vector<std::string> names) : names_(std::move(names)) {}
  StatusOr<std::optional<std::string>> Next() override {
    if (next_ == names_.size()) return std::optional<std::string>();
    return std::optional<std::string>(names_[next_++]);
  }

 private:
  const std::vector<std::string> names_;
  size_t next_ = 0;
};

}  // namespace

std::string MemoryDir::Describe(std::string_view name) const {
  return StrCat("memory:", name.empty() ? "." : name);
}

StatusOr<std::unique_ptr<File>> MemoryDir::CreateFile(std::string_view name, int flags) {
  auto it = files_.find(name);
  if (it == files_.end()) {
    RETURN_IF_ERROR(names_.CheckNew(name));
    it = files_.emplace(std::string(name), std::make_shared<std::string>()).first;
    names_.AddFile(name, 0);
  } else {
    it->second->clear();
  }
  return std::unique_ptr<File>(new MemoryFile(it->second, flags));
}

StatusOr<std::unique_ptr<File>> MemoryDir::OpenFile(std::string_view name, int flags) {
  auto it = files_.find(name);
  if (it == files_.end()) {
    return absl::NotFoundError(StrCat("file '", name, "' was not created by this phase"));
  }
  return std::unique_ptr<File>(new MemoryFile(it->second, flags));
}

Status MemoryDir::RemoveFile(std::string_view name) {
  auto it = files_.find(name);
  if (it == files_.end()) {
    return absl::NotFoundError(StrCat("file '", name, "' was not created by this phase"));
  }
  files_.erase(it);
  names_.RemoveFile(name);
  return absl::OkStatus();
}

Status MemoryDir::CreateDirectory(std::string_view name) {
  RETURN_IF_ERROR(names_.CheckNew(name));
  if (dirs_.count(name) != 0 || files_.count(name) != 0) {
    return absl::AlreadyExistsError(
        StrCat("target '", target_name_, "': ", Describe(name), " already exists"));
  }
  dirs_.emplace(name);
  names_.AddDirectory(name, 0);
  return absl::OkStatus();
}

Status MemoryDir::RemoveDirectory(std::string_view name) {
  auto it = dirs_.find(name);
  if (it == dirs_.end()) {
    return absl::NotFoundError(StrCat("directory '", name, "' was not created by this phase"));
  }
  const std::string prefix = StrCat(name, "/");
  auto inside = [&](const std::string& other) { return other.starts_with(prefix); };
  if (std::any_of(files_.begin(), files_.end(), [&](const auto& f) { return inside(f.first); }) ||
      std::any_of(dirs_.begin(), dirs_.end(), inside)) {
    return absl::FailedPreconditionError(StrCat("target '", target_name_, "': cannot remove ",
                                                Describe(name), ": Directory not empty"));
  }
  dirs_.erase(it);
  names_.RemoveDirectory(name);
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<DirListing>> MemoryDir::List(std::string_view dir) {
  if (!names_.IsDirectory(dir)) {
    return absl::NotFoundError(StrCat("directory '", dir, "' was not created by this phase"));
  }
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (PhaseNames::Parent(name) == dir) names.emplace_back(PhaseNames::Base(name));
  };
  for (const auto& [name, data] : files_) add(name);
  for (const std::string& name : dirs_) add(name);
  return std::unique_ptr<DirListing>(new MemoryListing(std::move(names)));
}

Status MemoryDir::SyncDirectory(std::string_view dir) {
  if (!names_.IsDirectory(dir)) {
    return absl::NotFoundError(StrCat("directory '", dir, "' was not created by this phase"));
  }
  return absl::OkStatus();
}

StatusOr<std::unique_ptr<File>> MemoryDir::OpenDirectory(std::string_view dir) {
  RETURN_IF_ERROR(SyncDirectory(dir));
  return std::unique_ptr<File>(new MemoryFile(nullptr, O_RDONLY, /*directory=*/true));
}

StatusOr<FileInfo> MemoryDir::Stat(std::string_view name) {
  FileInfo info;
  if (auto it = files_.find(name); it != files_.end()) {
    info.size = it->second->size();
    return info;
  }
  if (dirs_.count(name) != 0) {
    info.is_directory = true;
    return info;
  }
  return absl::NotFoundError(StrCat("'", name, "' was not created by this phase"));
}

CleanupReport MemoryDir::Cleanup() {
  CleanupReport report;
  report.removed = static_cast<int>(files_.size() + dirs_.size());
  files_.clear();
  dirs_.clear();
  names_.Clear();
  return report;
}

const std::string* MemoryDir::Contents(std::string_view name) const {
  auto it = files_.find(name);
  return it == files_.end() ? nullptr : it->second.get();
}

std::set<std::string> MemoryDir::Names() const {
  std::set<std::string> names(dirs_.begin(), dirs_.end());
  for (const auto& [name, data] : files_) names.insert(name);
  return names;
}

}  // namespace stormark::agent
