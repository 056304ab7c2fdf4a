#include "controller/report/json_text_writer.h"

namespace stormark::controller {
namespace {

using nlohmann::json;

std::string Dump(const json& value, bool compact) {
  return value.dump(compact ? -1 : 2, ' ', false, json::error_handler_t::replace);
}

}  // namespace

void JsonTextWriter::Value(const json& value, int level) {
  if (compact_) {
    out_ += Dump(value, true);
    return;
  }
  // dump(2) indents from column 0: each of its lines moves right by the nesting.
  for (char c : Dump(value, false)) {
    out_.push_back(c);
    if (c == '\n') out_.append(static_cast<size_t>(level) * 2, ' ');
  }
}

void JsonTextWriter::ObjectWith(const json& object, int level, const std::string& key,
                                const std::function<void(int)>& write) {
  out_ += "{";
  bool first = true;
  const auto member = [&](const std::string& name) {
    if (!first) out_ += ",";
    first = false;
    Break(level + 1);
    out_ += Dump(json(name), compact_);
    out_ += compact_ ? ":" : ": ";
  };
  bool written = false;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!written && key < it.key()) {
      member(key);
      write(level + 1);
      written = true;
    }
    member(it.key());
    Value(it.value(), level + 1);
  }
  if (!written) {
    member(key);
    write(level + 1);
  }
  Break(level);
  out_ += "}";
}

void JsonTextWriter::Array(size_t n, int level, const std::function<void(size_t, int)>& write) {
  if (n == 0) {
    out_ += "[]";
    return;
  }
  out_ += "[";
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out_ += ",";
    Break(level + 1);
    write(i, level + 1);
  }
  Break(level);
  out_ += "]";
}

void JsonTextWriter::Spill() {
  if (!spill_ || out_.size() < (size_t{1} << 20)) return;
  spill_(out_);
  out_.clear();
}

std::string JsonTextWriter::Finish() {
  out_ += "\n";
  if (!spill_) return std::move(out_);
  spill_(out_);
  out_.clear();
  return "";
}

}  // namespace stormark::controller
