#include "agent/workloads/bonnie/bonnie_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <utility>

#include "common/memory_estimate.h"
#include "common/strings.h"
#include "common/workloads/bonnie/bonnie_spec.h"
#include "fmt/format.h"

namespace stormark::agent {
namespace {

using common::Status;
using common::StatusOr;
using stormark::v1::Measurement;

constexpr uint64_t kFileDataSalt = 0xb0b0'0000'0000'0003ULL;
// bonnie++'s RandExtraLen: up to this many random characters around each name.
constexpr uint64_t kMaxRandomChars = 12;
constexpr char kNameChars[] = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
// A name is at most "00000/" + 10 hex digits + kMaxRandomChars: 28 characters, held on the
// heap in a block of at most 48 bytes (glibc's malloc for 29 bytes), beside its directory
// number. The memory estimate counts that much per file.
static_assert(sizeof(std::string) + 48 + sizeof(uint32_t) <= common::kBonnieBytesPerName,
              "common/memory_estimate.h counts the file tests' names");

// The next entry of a listing (bonnie++'s names never start with a dot, which listings leave
// out), or nullopt at the end of the directory.
StatusOr<std::optional<std::string>> NextEntry(DirListing& listing, const char* test) {
  auto next = listing.Next();
  if (!next.ok()) return common::Annotate(next.status(), common::StrCat("bonnie ", test));
  return next;
}

// -errno as a status naming the test and the call.
Status CallError(const char* test, const char* call, int negative_errno) {
  return common::ErrnoError(common::StrCat("bonnie ", test, ": ", call), -negative_errno);
}

Status CheckCount(uint64_t found, uint64_t expected, const char* test) {
  if (found == expected) return absl::OkStatus();
  return absl::DataLossError(
      common::StrCat("bonnie ", test, ": expected ", expected, " files, found ", found));
}

}  // namespace

BonnieFileTests::BonnieFileTests(const BonnieParams& params, Dir* target, RunContext& ctx,
                                 common::Recorder* recorder, BonnieRandom* random)
    : params_(params), target_(target), ctx_(ctx), recorder_(recorder), random_(random) {}

Status BonnieFileTests::CheckCancelled(const char* test) const {
  if (ctx_.cancelled.load(std::memory_order_relaxed)) {
    return absl::CancelledError(common::StrCat("bonnie: aborted during ", test));
  }
  return absl::OkStatus();
}

std::string BonnieFileTests::DirName(uint32_t dir) const {
  if (params_.file_dirs <= 1) return kBonnieFilesDir;
  return fmt::format("{}/{:05d}", kBonnieFilesDir, dir);
}

void BonnieFileTests::MakeNames(bool random_names) {
  const uint64_t n = params_.files;
  const uint32_t dirs = std::max<uint32_t>(params_.file_dirs, 1);
  // bonnie++'s split: each directory in turn takes n / dirs + 1 names.
  const uint64_t per_dir = n / dirs;
  names_.clear();
  dir_of_.clear();
  names_.reserve(n);
  dir_of_.reserve(n);
  uint64_t in_dir = 0;
  uint32_t dir = 0;
  for (uint64_t i = 0; i < n; ++i) {
    std::string extra(random_->Below(kMaxRandomChars + 1), ' ');
    for (char& c : extra) c = kNameChars[random_->Below(sizeof(kNameChars) - 1)];
    // The whole path below the phase directory, made once: the tests look each file up by it.
    std::string name = dirs > 1 ? fmt::format("{}/{:05d}/", kBonnieFilesDir, dir)
                                : common::StrCat(kBonnieFilesDir, "/");
    if (random_names) {
      name += fmt::format("{}{:010x}", extra, i);
    } else {
      name += fmt::format("{:010x}{}", i, extra);
    }
    names_.push_back(std::move(name));
    dir_of_.push_back(dir);
    if (++in_dir > per_dir) {
      in_dir = 0;
      ++dir;
    }
  }
}

void BonnieFileTests::Shuffle() {
  for (uint64_t i = names_.size(); i > 1; --i) {
    const uint64_t j = random_->Below(i);
    std::swap(names_[i - 1], names_[j]);
    std::swap(dir_of_[i - 1], dir_of_[j]);
  }
}

Status BonnieFileTests::SyncFilesystem(const char* test) {
  return common::Annotate(target_->SyncFilesystem(), common::StrCat("bonnie ", test));
}

StatusOr<Measurement> BonnieFileTests::Create(bool random_names) {
  const char* test = random_names ? "ran_create" : "seq_create";
  if (buf_.data() == nullptr) {
    RETURN_IF_ERROR(buf_.Allocate(params_.file_chunk_size, params_.seed ^ kFileDataSalt));
  }
  MakeNames(random_names);
  RETURN_IF_ERROR(target_->CreateDirectory(kBonnieFilesDir));
  if (params_.file_dirs > 1) {
    for (uint32_t d = 0; d < params_.file_dirs; ++d) {
      RETURN_IF_ERROR(CheckCancelled(test));
      RETURN_IF_ERROR(target_->CreateDirectory(DirName(d)));
    }
  }
  dir_fds_.clear();
  if (params_.fsync_every_write) {
    for (uint32_t d = 0; d < std::max<uint32_t>(params_.file_dirs, 1); ++d) {
      ASSIGN_OR_RETURN(std::unique_ptr<File> dir, target_->OpenDirectory(DirName(d)));
      dir_fds_.push_back(std::move(dir));
    }
  }

  target_->ExpectFiles(names_.size());
  const uint64_t range = params_.file_max_bytes - params_.file_min_bytes;
  const uint32_t piece = params_.file_chunk_size;
  TestMeter meter(test, ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t i = 0; i < names_.size(); ++i) {
    RETURN_IF_ERROR(CheckCancelled(test));
    const uint64_t size =
        range == 0 ? params_.file_max_bytes : params_.file_min_bytes + random_->Below(range + 1);
    const int64_t start = meter.Now();
    ASSIGN_OR_RETURN(std::unique_ptr<File> file, target_->CreateFile(names_[i], O_WRONLY));
    for (uint64_t done = 0; done < size; done += piece) {
      RETURN_IF_ERROR(WriteChunk(*file, buf_.data(), std::min<uint64_t>(piece, size - done), test));
    }
    if (params_.fsync_every_write) {
      if (const int err = file->Sync(); err != 0) return CallError(test, "fsync", err);
      if (const int err = dir_fds_[dir_of_[i]]->Sync(); err != 0) {
        return CallError(test, "fsync of a directory", err);
      }
    }
    if (const int err = file->Close(); err != 0) return CallError(test, "close", err);
    meter.Op(start, size);
  }
  RETURN_IF_ERROR(SyncFilesystem(test));
  return meter.Stop();
}

StatusOr<uint64_t> BonnieFileTests::StatAndRead(const std::string& name) {
  ASSIGN_OR_RETURN(FileInfo info, target_->Stat(name));
  if (info.size == 0) return 0;
  ASSIGN_OR_RETURN(std::unique_ptr<File> file, target_->OpenFile(name, O_RDONLY));
  const uint64_t size = info.size;
  for (uint64_t done = 0; done < size;) {
    const size_t want = std::min<uint64_t>(params_.file_chunk_size, size - done);
    const ssize_t r = file->Read(buf_.data(), want);
    if (r == -EINTR) continue;
    if (r < 0) {
      return common::ErrnoError(common::StrCat("bonnie: cannot read ", name), static_cast<int>(-r));
    }
    if (static_cast<size_t>(r) != want) {
      return absl::DataLossError(common::StrCat("bonnie: ", name, " ended before its size"));
    }
    done += want;
  }
  if (const int err = file->Close(); err != 0) {
    return common::ErrnoError(common::StrCat("bonnie: close ", name), -err);
  }
  return size;
}

StatusOr<Measurement> BonnieFileTests::StatSequential() {
  const char* test = "seq_stat";
  uint64_t count = 0;
  TestMeter meter(test, ctx_.clock, recorder_);
  meter.Start();
  for (uint32_t d = 0; d < std::max<uint32_t>(params_.file_dirs, 1); ++d) {
    const std::string dir_name = DirName(d);
    ASSIGN_OR_RETURN(std::unique_ptr<DirListing> dir, target_->List(dir_name));
    for (;;) {
      RETURN_IF_ERROR(CheckCancelled(test));
      const int64_t start = meter.Now();
      ASSIGN_OR_RETURN(std::optional<std::string> entry, NextEntry(*dir, test));
      if (!entry) break;
      ASSIGN_OR_RETURN(uint64_t bytes, StatAndRead(common::StrCat(dir_name, "/", *entry)));
      meter.Op(start, bytes);
      ++count;
    }
  }
  RETURN_IF_ERROR(CheckCount(count, names_.size(), test));
  return meter.Stop();
}

Status BonnieFileTests::RemoveDirectories() {
  dir_fds_.clear();
  if (params_.file_dirs > 1) {
    for (uint32_t d = 0; d < params_.file_dirs; ++d) {
      RETURN_IF_ERROR(target_->RemoveDirectory(DirName(d)));
    }
  }
  return target_->RemoveDirectory(kBonnieFilesDir);
}

StatusOr<Measurement> BonnieFileTests::DeleteSequential() {
  const char* test = "seq_del";
  uint64_t count = 0;
  TestMeter meter(test, ctx_.clock, recorder_);
  meter.Start();
  for (uint32_t d = 0; d < std::max<uint32_t>(params_.file_dirs, 1); ++d) {
    const std::string dir_name = DirName(d);
    ASSIGN_OR_RETURN(std::unique_ptr<DirListing> dir, target_->List(dir_name));
    std::unique_ptr<File> held;  // For its fsync, as bonnie++ fsyncs the directory it lists.
    if (params_.fsync_every_write) {
      ASSIGN_OR_RETURN(held, target_->OpenDirectory(dir_name));
    }
    for (;;) {
      RETURN_IF_ERROR(CheckCancelled(test));
      const int64_t start = meter.Now();
      ASSIGN_OR_RETURN(std::optional<std::string> entry, NextEntry(*dir, test));
      if (!entry) break;
      RETURN_IF_ERROR(target_->RemoveFile(common::StrCat(dir_name, "/", *entry)));
      if (held != nullptr) {
        if (const int err = held->Sync(); err != 0) {
          return CallError(test, "fsync of a directory", err);
        }
      }
      meter.Op(start, 0);
      ++count;
    }
  }
  RETURN_IF_ERROR(RemoveDirectories());
  RETURN_IF_ERROR(CheckCount(count, names_.size(), test));
  RETURN_IF_ERROR(SyncFilesystem(test));
  return meter.Stop();
}

StatusOr<Measurement> BonnieFileTests::StatRandom() {
  const char* test = "ran_stat";
  Shuffle();
  TestMeter meter(test, ctx_.clock, recorder_);
  meter.Start();
  for (const std::string& name : names_) {
    RETURN_IF_ERROR(CheckCancelled(test));
    const int64_t start = meter.Now();
    ASSIGN_OR_RETURN(uint64_t bytes, StatAndRead(name));
    meter.Op(start, bytes);
  }
  return meter.Stop();
}

StatusOr<Measurement> BonnieFileTests::DeleteRandom() {
  const char* test = "ran_del";
  Shuffle();
  TestMeter meter(test, ctx_.clock, recorder_);
  meter.Start();
  for (uint64_t i = 0; i < names_.size(); ++i) {
    RETURN_IF_ERROR(CheckCancelled(test));
    const int64_t start = meter.Now();
    RETURN_IF_ERROR(target_->RemoveFile(names_[i]));
    if (params_.fsync_every_write) {
      if (const int err = dir_fds_[dir_of_[i]]->Sync(); err != 0) {
        return CallError(test, "fsync of a directory", err);
      }
    }
    meter.Op(start, 0);
  }
  RETURN_IF_ERROR(RemoveDirectories());
  RETURN_IF_ERROR(SyncFilesystem(test));
  Measurement m = meter.Stop();
  names_.clear();
  names_.shrink_to_fit();
  dir_of_.clear();
  dir_of_.shrink_to_fit();
  return m;
}

}  // namespace stormark::agent
