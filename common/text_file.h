// Reading the small text files users hand to stormark (plans, agent configs, PostMark scripts,
// PEM files): only regular files, and only up to a limit, so that `/dev/zero` or a huge file
// named by mistake is one clear error rather than a process that eats the machine's memory.
#ifndef STORMARK_COMMON_TEXT_FILE_H_
#define STORMARK_COMMON_TEXT_FILE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

inline constexpr size_t kMaxTextFileBytes = 4 << 20;

// The contents of `path`. Errors read "cannot read WHAT PATH: No such file or directory",
// "WHAT PATH is not a regular file", "WHAT PATH is over 4 MiB".
StatusOr<std::string> ReadTextFile(const std::string& path, std::string_view what,
                                   size_t max_bytes = kMaxTextFileBytes);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_TEXT_FILE_H_
