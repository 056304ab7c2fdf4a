#include "agent/dir/phase_names.h"

#include <algorithm>

#include "common/spec_check.h"
#include "common/strings.h"

namespace stormark::agent {

std::string_view PhaseNames::Parent(std::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : name.substr(0, slash);
}

std::string_view PhaseNames::Base(std::string_view name) {
  const size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? name : name.substr(slash + 1);
}

common::Status PhaseNames::CheckNew(std::string_view name) const {
  // Every directory on the way was made by the phase, whose names were checked the same way.
  if (!common::IsValidName(Base(name)) || !IsDirectory(Parent(name))) {
    return absl::InvalidArgumentError(common::StrCat("bad file name '", name, "'"));
  }
  return absl::OkStatus();
}

const ino_t* PhaseNames::File(std::string_view name) const {
  auto it = files_.find(Key(name));
  return it == files_.end() ? nullptr : &it->second;
}

ino_t* PhaseNames::File(std::string_view name) {
  auto it = files_.find(Key(name));
  return it == files_.end() ? nullptr : &it->second;
}

const ino_t* PhaseNames::Directory(std::string_view name) const {
  auto it = dirs_.find(Key(name));
  return it == dirs_.end() ? nullptr : &it->second;
}

std::vector<std::pair<std::string, ino_t>> PhaseNames::FilesByParent() const {
  std::vector<std::pair<std::string, ino_t>> files(files_.begin(), files_.end());
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    const std::string_view pa = Parent(a.first), pb = Parent(b.first);
    return pa != pb ? pa < pb : a.first < b.first;
  });
  return files;
}

std::vector<std::pair<std::string, ino_t>> PhaseNames::DirectoriesDeepestFirst() const {
  std::vector<std::pair<std::string, ino_t>> dirs(dirs_.begin(), dirs_.end());
  // A directory's name is longer than its parent's, so longest first empties children first.
  std::sort(dirs.begin(), dirs.end(), [](const auto& a, const auto& b) {
    return a.first.size() != b.first.size() ? a.first.size() > b.first.size() : a.first < b.first;
  });
  return dirs;
}

}  // namespace stormark::agent
