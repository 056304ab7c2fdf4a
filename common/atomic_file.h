// Writing a report file so that readers never see half of it.
#ifndef STORMARK_COMMON_ATOMIC_FILE_H_
#define STORMARK_COMMON_ATOMIC_FILE_H_

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

// Writes `contents` to `path` through a temporary file beside it ("PATH.tmp") renamed into
// place, so a crash or a full disk never leaves a half-written file at `path`. On failure the
// temporary file is removed and the error names the file.
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The same for contents made in pieces, so that a large report is never held whole: `produce`
// is called once and hands each piece, in order, to the function it gets.
using PieceFn = std::function<void(std::string_view)>;
Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceFn&)>& produce);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_ATOMIC_FILE_H_
