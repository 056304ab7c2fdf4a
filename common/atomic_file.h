// Writing a report file so that readers never see half of it.
#ifndef STORMARK_COMMON_ATOMIC_FILE_H_
#define STORMARK_COMMON_ATOMIC_FILE_H_

#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

// Writes `contents` to `path` through a temporary file beside it ("PATH.tmp.XXXXXX", created
// exclusively, with the mode the file had or a new file's) renamed into place, so a crash or a
// full disk never leaves a half-written file at `path`. On failure the temporary file is removed
// and the error names the file.
//
// What is not a regular file is not replaced: a device, a pipe or a socket (`-o /dev/null`,
// `-o /dev/stdout`, a shell's `>(gzip > r.gz)`) is written in place, as a stream; a symbolic link
// to a file stays, and the file it names is replaced; a directory, or a link to nothing, is an
// error. (Renaming over `/dev/null` as root made it a regular file for every program on the host.)
Status WriteFileAtomically(const std::string& path, std::string_view contents);

// The same for contents made in pieces, so that a large report is never held whole: `produce`
// is called once and hands each piece, in order, to the function it gets.
using PieceFn = std::function<void(std::string_view)>;
Status WriteFileAtomically(const std::string& path,
                           const std::function<void(const PieceFn&)>& produce);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_ATOMIC_FILE_H_
