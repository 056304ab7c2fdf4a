// Small string helpers. Debian's abseil is built with its own absl::string_view, which does
// not accept std::string_view, so absl's string functions are awkward with C++20 code; these
// take std::string_view. StrCat forwards every piece to fmt, so both kinds of view (and
// numbers) concatenate.
#ifndef STORMARK_COMMON_STRINGS_H_
#define STORMARK_COMMON_STRINGS_H_

#include <iterator>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"
#include "fmt/format.h"

namespace stormark::common {

template <typename... Args>
std::string StrCat(const Args&... args) {
  std::string out;
  auto append = [&out](const auto& piece) {
    using T = std::decay_t<decltype(piece)>;
    if constexpr (std::is_same_v<T, absl::string_view>) {
      out.append(piece.data(), piece.size());
    } else {
      fmt::format_to(std::back_inserter(out), "{}", piece);
    }
  };
  (append(args), ...);
  return out;
}

// `text` without leading and trailing ASCII whitespace.
std::string_view Trim(std::string_view text);

// `text` in ASCII lower case.
std::string ToLower(std::string_view text);

// `text` cut at every `separator`; empty pieces are kept.
std::vector<std::string_view> Split(std::string_view text, char separator);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_STRINGS_H_
