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
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "common/status.h"

namespace stormark::agent {

class PhaseNames {
 public:
  // INVALID_ARGUMENT unless `name` may be created: valid components, a known parent.
  common::Status CheckNew(std::string_view name) const;

  // The identity a file or directory was created with, or nullptr when the phase holds no
  // such name. The pointer is good until the next Add*: the maps move their entries as they
  // grow.
  const ino_t* File(std::string_view name) const;
  const ino_t* Directory(std::string_view name) const;
  // `dir` is "" (the phase directory) or a directory the phase created.
  bool IsDirectory(std::string_view dir) const { return dir.empty() || Directory(dir); }

  void AddFile(std::string_view name, ino_t id) { files_.insert_or_assign(Key(name), id); }
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
