// Text a caller sent, made fit for one log line or one error message. Everything a peer
// controls (phase ids, target names, argv elements, file names read from a target) reaches the
// agent's log and its error replies only through these functions, so that no value can start a
// line of its own, hide part of one, drive a terminal, or grow the log without bound.
#ifndef STORMARK_COMMON_LOG_TEXT_H_
#define STORMARK_COMMON_LOG_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace stormark::common {

// `value` (any bytes) as printable text for a quoted place in a log line or an error message:
// control characters (NUL, newline, CR, ESC, DEL...), bytes that are not valid UTF-8, the
// C1 controls, the line separators U+2028/U+2029 and the bidirectional overrides are written
// as \xNN (each byte), a backslash as \\, and ' and " as \x27 and \x22, so the result can
// neither close the quotes around it nor look like an escape it is not. Valid UTF-8 text
// otherwise stays as it is. The result holds at most `max` bytes of rendered text (a
// character and its escape are never split); what is cut is named by a marker such as
// "…(+1048553 bytes)", counting the bytes of `value` left out.
std::string LogSafe(std::string_view value, size_t max = 128);

// A whole line composed by the agent, as the last guard before it is written: what LogSafe
// escapes, except that backslashes and quotes stay (the line's own quotes, and values already
// rendered by LogSafe, pass unchanged), cut to `max` bytes the same way. The result never
// holds a line break or a NUL.
std::string LogSafeLine(std::string_view line, size_t max = 2048);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_LOG_TEXT_H_
