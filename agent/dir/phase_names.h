// The names a phase created in its Dir, and the rule for new ones: every component of a name
// passes IsValidName, and a name's parent is the phase directory ("") or a directory the phase
// created. Both Dir implementations use it, so both refuse the same names.
//
// Each name remembers an identity (OsDir keeps the inode the phase created, so that a name
// replaced behind its back is told apart from its own file). Not thread-safe.
#ifndef STORMARK_AGENT_DIR_PHASE_NAMES_H_
#define STORMARK_AGENT_DIR_PHASE_NAMES_H_

#include <sys/types.h>

#include <string>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/status.h"

namespace stormark::agent {

class PhaseNames {
 public:
  // A file's identity before anything has looked at it (no filesystem gives a file inode 0).
  static constexpr ino_t kNotSeen = 0;

  // INVALID_ARGUMENT unless `name` may be created: valid components, a known parent.
  common::Status CheckNew(std::string_view name) const;

  // The identity a file or directory was created with, or nullptr when the phase holds no
  // such name. The pointer is good until the next Add*: the maps move their entries as they
  // grow. A file's identity is kNotSeen until a call that stats it first sees it (OsDir's
  // exclusive create makes a new file without a stat); the caller then stores what it saw.
  const ino_t* File(std::string_view name) const;
  ino_t* File(std::string_view name);
  const ino_t* Directory(std::string_view name) const;
  // `dir` is "" (the phase directory) or a directory the phase created.
  bool IsDirectory(std::string_view dir) const { return dir.empty() || Directory(dir); }

  void AddFile(std::string_view name, ino_t id) { files_.insert_or_assign(Key(name), id); }
  // Room for `count` more files without growing.
  void ReserveFiles(size_t count) { files_.reserve(files_.size() + count); }
  // One lookup where a timed loop would make two: the identity of `name`, added as kNotSeen if
  // the phase held no such file, and whether it was added.
  std::pair<ino_t*, bool> FindOrAddFile(std::string_view name) {
    auto [it, added] = files_.try_emplace(Key(name), kNotSeen);
    return {&it->second, added};
  }
  // Takes `name` out and returns its identity, or nullopt when the phase holds no such file.
  std::optional<ino_t> TakeFile(std::string_view name) {
    auto node = files_.extract(Key(name));
    if (node.empty()) return std::nullopt;
    return node.mapped();
  }
  void AddDirectory(std::string_view name, ino_t id) { dirs_.insert_or_assign(Key(name), id); }
  void RemoveFile(std::string_view name) { files_.erase(Key(name)); }
  void RemoveDirectory(std::string_view name) { dirs_.erase(Key(name)); }

  // For cleanup: files grouped by parent directory; directories deepest first.
  std::vector<std::pair<std::string, ino_t>> FilesByParent() const;
  std::vector<std::pair<std::string, ino_t>> DirectoriesDeepestFirst() const;
  void Clear() {
    files_.clear();
    dirs_.clear();
  }
  size_t size() const { return files_.size() + dirs_.size(); }

  // "files/00003" of "files/00003/x", "" of "x"; and the last component.
  static std::string_view Parent(std::string_view name);
  static std::string_view Base(std::string_view name);

 private:
  // Debian's Abseil has a string_view of its own, which its maps look names up by.
  static absl::string_view Key(std::string_view name) { return {name.data(), name.size()}; }

  // Open addressing, looked up by string_view: a phase of bonnie's file tests makes hundreds of
  // thousands of names and looks each up several times, and std::unordered_map's node per name
  // and std::string per lookup were 9% of the file tests' time (perf, 128 x 1024 files).
  absl::flat_hash_map<std::string, ino_t> files_;
  absl::flat_hash_map<std::string, ino_t> dirs_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_PHASE_NAMES_H_
