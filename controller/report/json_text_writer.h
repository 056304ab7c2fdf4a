// A JSON document's text exactly as nlohmann::json::dump(2) writes it (or, compact, as dump()
// writes it: no spaces or newlines), made in parts: members and array elements are handed over
// one at a time, so that a large document (a report of ten thousand hosts) is never held as
// one tree, and with a spill its text is never held whole either.
#ifndef STORMARK_CONTROLLER_REPORT_JSON_TEXT_WRITER_H_
#define STORMARK_CONTROLLER_REPORT_JSON_TEXT_WRITER_H_

#include <cstddef>
#include <functional>
#include <string>

#include "common/atomic_file.h"
#include "nlohmann/json.hpp"

namespace stormark::controller {

class JsonTextWriter {
 public:
  // With `spill`, the text goes to it in pieces (at Spill(), and the rest at Finish());
  // without, it collects and Finish() returns it.
  explicit JsonTextWriter(common::PieceFn spill = nullptr, bool compact = false)
      : spill_(std::move(spill)), compact_(compact) {}

  // `value` at nesting `level` (0 for the document itself).
  void Value(const nlohmann::json& value, int level);
  // `object` at nesting `level`, with one more member, `key` (which it lacks), written in its
  // sorted place (nlohmann's objects order their keys) by `write(level + 1)`.
  void ObjectWith(const nlohmann::json& object, int level, const std::string& key,
                  const std::function<void(int)>& write);
  // An array of `n` elements at nesting `level`, element i written by `write(i, level + 1)`.
  void Array(size_t n, int level, const std::function<void(size_t, int)>& write);

  // Hands the text so far to the spill once it holds 1 MiB or more.
  void Spill();
  // Ends the document with a newline, as a file has it: the whole text without a spill, "" with
  // one (the rest was handed to it).
  std::string Finish();

 private:
  // A new line at nesting `level`; nothing when compact.
  void Break(int level) {
    if (compact_) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(level) * 2, ' ');
  }

  const common::PieceFn spill_;
  const bool compact_;
  std::string out_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_REPORT_JSON_TEXT_WRITER_H_
