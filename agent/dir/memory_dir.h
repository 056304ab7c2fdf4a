// A Dir held in memory: the same names, rules and NOT_FOUNDs as OsDir, with no disk and no
// root, so that workloads are tested quickly and exactly (and, under FaultDir, for their
// error paths). Files have no descriptor (fd() is -1): workloads that need one (a FileDevice
// for stream or randio, a command's working directory) cannot run on it.
#ifndef STORMARK_AGENT_DIR_MEMORY_DIR_H_
#define STORMARK_AGENT_DIR_MEMORY_DIR_H_

#include <map>
#include <memory>
#include <set>
#include <string>

#include "agent/dir/dir.h"
#include "agent/dir/phase_names.h"

namespace stormark::agent {

class MemoryDir final : public Dir {
 public:
  explicit MemoryDir(std::string target_name = "memory") : target_name_(std::move(target_name)) {}

  common::StatusOr<std::unique_ptr<File>> CreateFile(std::string_view name, int flags) override;
  common::StatusOr<std::unique_ptr<File>> OpenFile(std::string_view name, int flags) override;
  common::Status RemoveFile(std::string_view name) override;
  common::Status CreateDirectory(std::string_view name) override;
  common::Status RemoveDirectory(std::string_view name) override;
  common::StatusOr<std::unique_ptr<DirListing>> List(std::string_view dir) override;
  common::Status SyncDirectory(std::string_view dir) override;
  common::StatusOr<std::unique_ptr<File>> OpenDirectory(std::string_view dir) override;
  common::Status SyncFilesystem() override { return absl::OkStatus(); }
  common::StatusOr<FileInfo> Stat(std::string_view name) override;
  std::optional<uint64_t> FreeBytes() override { return free_bytes_; }
  void AdoptContents() override {}
  CleanupReport Cleanup() override;
  int fd() const override { return -1; }
  std::string Describe(std::string_view name) const override;
  const std::string& target_name() const override { return target_name_; }

  // For tests: what a file holds now, or nullptr; and the names that exist, files and
  // directories alike.
  const std::string* Contents(std::string_view name) const;
  std::set<std::string> Names() const;
  void set_free_bytes(std::optional<uint64_t> bytes) { free_bytes_ = bytes; }

 private:
  PhaseNames names_;
  // Contents shared with the open Files, so that a removed file's open descriptor still
  // reads it, as on a real filesystem.
  std::map<std::string, std::shared_ptr<std::string>, std::less<>> files_;
  std::set<std::string, std::less<>> dirs_;
  const std::string target_name_;
  std::optional<uint64_t> free_bytes_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_MEMORY_DIR_H_
