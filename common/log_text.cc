#include "common/log_text.h"

#include <cstdint>

#include "fmt/format.h"

namespace stormark::common {
namespace {

// The length of the valid UTF-8 sequence at the start of `text` (1 to 4), or 0 when it is
// not one (a stray continuation byte, an overlong form, a surrogate, past U+10FFFF, cut short).
// Sets `*code_point`.
size_t Utf8Length(std::string_view text, uint32_t* code_point) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  size_t length;
  uint32_t cp;
  uint32_t min;
  if (lead < 0x80) {
    *code_point = lead;
    return 1;
  } else if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, cp = lead & 0x1f, min = 0x80;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, cp = lead & 0x0f, min = 0x800;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, cp = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  *code_point = cp;
  return length;
}

// Characters that end a line, act on a terminal, or reorder what is shown around them.
bool IsUnsafe(uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0x2028 || cp == 0x2029 ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0x200e ||
         cp == 0x200f;
}

std::string Render(std::string_view text, size_t max, bool escape_quotes) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 24);
  size_t at = 0;
  while (at < text.size()) {
    uint32_t cp = 0;
    size_t length = Utf8Length(text.substr(at), &cp);
    std::string piece;
    if (length == 0) {
      length = 1;
      piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at]));
    } else if (IsUnsafe(cp) || (escape_quotes && (cp == '\'' || cp == '"'))) {
      for (size_t i = 0; i < length; ++i) {
        piece += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at + i]));
      }
    } else if (escape_quotes && cp == '\\') {
      piece = "\\\\";
    } else {
      piece = text.substr(at, length);
    }
    if (out.size() + piece.size() > max) break;
    out += piece;
    at += length;
  }
  if (at < text.size()) out += fmt::format("…(+{} bytes)", text.size() - at);
  return out;
}

}  // namespace

std::string LogSafe(std::string_view value, size_t max) { return Render(value, max, true); }

std::string LogSafeLine(std::string_view line, size_t max) { return Render(line, max, false); }

}  // namespace stormark::common
