// Writing a report file so that readers never see half of it.
#ifndef STORMARK_COMMON_ATOMIC_FILE_H_
#define STORMARK_COMMON_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

// Writes `contents` to `path` through a temporary file beside it ("PATH.tmp") renamed into
// place, so a crash or a full disk never leaves a half-written file at `path`. On failure the
// temporary file is removed and the error names the file.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_ATOMIC_FILE_H_
