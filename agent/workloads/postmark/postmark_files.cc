#include "agent/workloads/postmark/postmark_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;

// One open file, through stdio (buffered) or plain system calls. Closes itself if the caller
// returns early; Close() reports the error of the final flush.
class PostmarkFile {
 public:
  // Takes ownership of `file`. `mode` is the stdio mode PostMark's fopen uses.
  static StatusOr<PostmarkFile> Wrap(std::unique_ptr<File> file, bool buffered, const char* mode,
                                     const std::string& name) {
    PostmarkFile wrapped(name);
    wrapped.file_ = std::move(file);
    if (!buffered) return wrapped;
    wrapped.stream_ = wrapped.file_->OpenStream(mode);
    if (wrapped.stream_ == nullptr) {
      return common::ErrnoError(StrCat("postmark: open a stdio stream on ", name), errno);
    }
    return wrapped;
  }

  PostmarkFile(PostmarkFile&& other) noexcept
      : name_(std::move(other.name_)), file_(std::move(other.file_)), stream_(other.stream_) {
    other.stream_ = nullptr;
  }
  PostmarkFile(const PostmarkFile&) = delete;
  PostmarkFile& operator=(const PostmarkFile&) = delete;
  PostmarkFile& operator=(PostmarkFile&&) = delete;
  ~PostmarkFile() { Close().IgnoreError(); }

  // Writes `n` bytes: one fwrite, or write() until all are written.
  Status Write(const char* data, size_t n) {
    if (stream_ == nullptr) {
      return Fully([this](const char* p, size_t k) { return file_->Write(p, k); }, data, n,
                   "write");
    }
    if (n != 0 && std::fwrite(data, n, 1, stream_) != 1) return Error("write");
    return absl::OkStatus();
  }

  // Reads exactly `n` bytes: one fread, or read() until all are read.
  Status Read(char* data, size_t n) {
    if (stream_ == nullptr) {
      return Fully([this](char* p, size_t k) { return file_->Read(p, k); }, data, n, "read");
    }
    if (n == 0 || std::fread(data, n, 1, stream_) == 1) return absl::OkStatus();
    return std::ferror(stream_) ? Error("read") : ShortError("read");
  }

  // fclose (which flushes) or close. Idempotent.
  Status Close() {
    if (stream_ != nullptr) {
      const int result = std::fclose(stream_);
      stream_ = nullptr;
      if (result != 0) return Error("close");
    }
    if (file_ == nullptr) return absl::OkStatus();
    const int err = file_->Close();
    if (err == 0) return absl::OkStatus();
    return common::ErrnoError(StrCat("postmark: close ", name_), -err);
  }

 private:
  explicit PostmarkFile(std::string name) : name_(std::move(name)) {}

  // Calls read() or write() until `n` bytes are done; 0 bytes done is a short file.
  template <typename Call, typename Pointer>
  Status Fully(Call call, Pointer data, size_t n, const char* what) {
    while (n > 0) {
      const ssize_t r = call(data, n);
      if (r == -EINTR) continue;
      if (r < 0) {
        return common::ErrnoError(StrCat("postmark: ", what, " ", name_), static_cast<int>(-r));
      }
      if (r == 0) return ShortError(what);
      data += r;
      n -= static_cast<size_t>(r);
    }
    return absl::OkStatus();
  }

  Status Error(const char* call) const {
    return common::ErrnoError(StrCat("postmark: ", call, " ", name_), errno);
  }
  Status ShortError(const char* call) const {
    return absl::DataLossError(StrCat("postmark: ", call, " ", name_,
                                      " ended early: the file is not the size it was given"));
  }

  std::string name_;
  std::unique_ptr<File> file_;  // Declared before stream_, which may call it until closed.
  std::FILE* stream_ = nullptr;
};

// Writes `size` bytes of `text` the way PostMark's write_blocks/fwrite_blocks do: whole
// blocks, then the remainder, each from the text at its offset.
Status WriteBlocks(PostmarkFile& file, const std::string& text, uint64_t size, uint32_t block) {
  uint64_t offset = 0;
  for (; size - offset >= block; offset += block) {
    RETURN_IF_ERROR(file.Write(text.data() + offset, block));
  }
  return file.Write(text.data() + offset, size - offset);
}

}  // namespace

PostmarkFiles::PostmarkFiles(const PostmarkParams& params, Dir* target, const std::string& text)
    : params_(params), target_(target), text_(text), read_buffer_(params.read_block_size) {}

std::string PostmarkFiles::DirName(uint32_t dir) { return StrCat("s", dir); }

std::string PostmarkFiles::NameOf(const PostmarkOp& op) const {
  if (!params_.uses_subdirectories()) return StrCat(op.file);
  return StrCat(DirName(op.dir), "/", op.file);
}

Status PostmarkFiles::Do(const PostmarkOp& op) {
  switch (op.kind) {
    case PostmarkOp::Kind::kNone:
      return absl::OkStatus();
    case PostmarkOp::Kind::kCreate:
      return Create(NameOf(op), op.bytes);
    case PostmarkOp::Kind::kRead:
      return Read(NameOf(op), op.bytes);
    case PostmarkOp::Kind::kAppend:
      return Append(NameOf(op), op.bytes);
    case PostmarkOp::Kind::kDelete:
      return target_->RemoveFile(NameOf(op));
  }
  return absl::InternalError("postmark: unknown operation");
}

Status PostmarkFiles::Create(const std::string& name, uint64_t size) {
  const bool buffered = !params_.unbuffered;
  ASSIGN_OR_RETURN(std::unique_ptr<File> opened,
                   target_->CreateFile(name, buffered ? O_WRONLY : O_RDWR));
  ASSIGN_OR_RETURN(PostmarkFile file, PostmarkFile::Wrap(std::move(opened), buffered, "w", name));
  RETURN_IF_ERROR(WriteBlocks(file, text_, size, params_.write_block_size));
  return file.Close();
}

Status PostmarkFiles::Read(const std::string& name, uint64_t size) {
  const bool buffered = !params_.unbuffered;
  ASSIGN_OR_RETURN(std::unique_ptr<File> opened, target_->OpenFile(name, O_RDONLY));
  ASSIGN_OR_RETURN(PostmarkFile file, PostmarkFile::Wrap(std::move(opened), buffered, "r", name));
  const uint64_t block = params_.read_block_size;
  uint64_t left = size;
  for (; left >= block; left -= block) RETURN_IF_ERROR(file.Read(read_buffer_.data(), block));
  RETURN_IF_ERROR(file.Read(read_buffer_.data(), left));
  return file.Close();
}

Status PostmarkFiles::Append(const std::string& name, uint64_t bytes) {
  const bool buffered = !params_.unbuffered;
  ASSIGN_OR_RETURN(std::unique_ptr<File> opened,
                   target_->OpenFile(name, buffered ? O_WRONLY | O_APPEND : O_RDWR | O_APPEND));
  ASSIGN_OR_RETURN(PostmarkFile file, PostmarkFile::Wrap(std::move(opened), buffered, "a", name));
  RETURN_IF_ERROR(WriteBlocks(file, text_, bytes, params_.write_block_size));
  return file.Close();
}

}  // namespace stormark::agent
