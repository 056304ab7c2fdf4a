#include "common/atomic_file.h"

#include <cerrno>
#include <cstdio>

#include "common/strings.h"

namespace stormark::common {

Status WriteFileAtomically(const std::string& path, std::string_view contents) {
  return WriteFileAtomically(path, [contents](const PieceFn& put) { put(contents); });
}

Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceFn&)>& produce) {
  const std::string temp = path + ".tmp";
  std::FILE* file = std::fopen(temp.c_str(), "w");
  if (file == nullptr) return ErrnoError(StrCat("cannot write ", temp), errno);
  bool written = true;
  int write_error = 0;
  produce([&](std::string_view piece) {
    if (!written) return;  // The first failure is the one reported.
    if (std::fwrite(piece.data(), 1, piece.size(), file) != piece.size()) {
      written = false;
      write_error = errno;
    }
  });
  if (std::fclose(file) != 0 || !written) {
    const int error = written ? errno : write_error;
    std::remove(temp.c_str());  // A failed report leaves nothing half-written behind.
    return ErrnoError(StrCat("cannot write ", temp), error);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temp.c_str());
    return ErrnoError(StrCat("cannot rename ", temp, " to ", path), error);
  }
  return absl::OkStatus();
}

}  // namespace stormark::common
