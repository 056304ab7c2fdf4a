#include "controller/workloads/option_table.h"

#include <charconv>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;

Status Bad(std::string_view key, std::string_view value, std::string_view why) {
  return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': ", why));
}

// Whether help names the range: a bound of the field's type alone (a 32-bit count's) is left
// out, though still checked.
bool Bounded(const Option& o) { return o.min != 0 || o.max < int64_t{UINT32_MAX}; }

// "a, b or c".
std::string OrList(const std::vector<std::string_view>& words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

// A size (k/M/G suffixes) within the option's range.
Status ParseBoundedSize(const Option& o, std::string_view key, std::string_view whole,
                        std::string_view text, uint64_t* out) {
  auto size = common::ParseSize(text);
  if (!size.ok() || *size > static_cast<uint64_t>(o.max) || *size < static_cast<uint64_t>(o.min)) {
    return Bad(key, whole, StrCat("expected ", OptionTable::Accepts(o)));
  }
  *out = *size;
  return absl::OkStatus();
}

// For Markdown cells: a '|' would end the cell.
std::string Cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string_view OptionTypeName(OptionType type) {
  switch (type) {
    case OptionType::kSize:
      return "size";
    case OptionType::kDuration:
      return "duration";
    case OptionType::kCount:
      return "count";
    case OptionType::kInteger:
      return "integer";
    case OptionType::kPercent:
      return "percent";
    case OptionType::kBool:
      return "bool";
    case OptionType::kEnum:
      return "enum";
    case OptionType::kString:
      return "string";
    case OptionType::kSizeRange:
      return "size range";
  }
  return "?";
}

OptionTable::OptionTable(std::string_view workload, std::vector<Option> options)
    : workload_(workload), options_(std::move(options)) {}

const Option* OptionTable::Find(std::string_view key) const {
  for (const Option& option : options_) {
    if (option.name == key) return &option;
    for (std::string_view alias : option.aliases) {
      if (alias == key) return &option;
    }
  }
  return nullptr;
}

std::string OptionTable::Accepts(const Option& o) {
  if (!o.accepts.empty()) return std::string(o.accepts);
  switch (o.type) {
    case OptionType::kSize:
      return Bounded(o) ? StrCat("a size from ", common::FormatSizeShort(o.min), " to ",
                                 common::FormatSizeShort(o.max))
                        : "a size (4k, 1M, 1G)";
    case OptionType::kSizeRange:
      return StrCat(Bounded(o) ? StrCat("sizes from ", common::FormatSizeShort(o.min), " to ",
                                        common::FormatSizeShort(o.max))
                               : "a size",
                    ", or LOW", std::string(1, o.separator), "HIGH");
    case OptionType::kDuration:
      return o.min > 0 ? StrCat("a duration of at least ",
                                common::FormatDurationNanos(static_cast<double>(o.min)),
                                " (90s, 500ms, 10m)")
                       : "a duration (90s, 500ms, 10m; 0 for none)";
    case OptionType::kCount:
    case OptionType::kInteger:
      return Bounded(o) ? StrCat("a whole number from ", o.min, " to ", o.max) : "a whole number";
    case OptionType::kPercent:
      return "a percentage, 0 to 100";
    case OptionType::kBool:
      return "true or false";
    case OptionType::kEnum: {
      std::vector<std::string_view> words;
      for (const OptionChoice& c : o.choices) words.push_back(c.name);
      return OrList(words);
    }
    case OptionType::kString:
      return "text";
  }
  return "?";
}

Status OptionTable::Parse(const Option& o, std::string_view key, std::string_view text,
                          OptionValue* out) const {
  if (o.parse != nullptr) return o.parse(key, text, out);
  switch (o.type) {
    case OptionType::kSize:
      return ParseBoundedSize(o, key, text, text, &out->number);
    case OptionType::kSizeRange: {
      const size_t at = text.find(o.separator);
      RETURN_IF_ERROR(ParseBoundedSize(o, key, text, text.substr(0, at), &out->number));
      out->high = out->number;
      if (at != std::string_view::npos) {
        RETURN_IF_ERROR(ParseBoundedSize(o, key, text, text.substr(at + 1), &out->high));
        if (out->high < out->number) return Bad(key, text, "the high end is below the low end");
      }
      return absl::OkStatus();
    }
    case OptionType::kDuration: {
      auto nanos = common::ParseDurationNanos(text);
      if (!nanos.ok() || *nanos < o.min || *nanos > o.max) {
        return Bad(key, text, StrCat("expected ", Accepts(o)));
      }
      out->integer = *nanos;
      return absl::OkStatus();
    }
    case OptionType::kCount:
    case OptionType::kInteger:
    case OptionType::kPercent: {
      int64_t n = 0;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
      const int64_t min = o.type == OptionType::kCount ? std::max<int64_t>(0, o.min) : o.min;
      const int64_t max = o.type == OptionType::kPercent ? 100 : o.max;
      if (text.empty() || error != std::errc() || end != text.data() + text.size() || n < min ||
          n > max) {
        return Bad(key, text, StrCat("expected ", Accepts(o)));
      }
      out->number = static_cast<uint64_t>(n);
      out->integer = n;
      return absl::OkStatus();
    }
    case OptionType::kBool: {
      auto flag = common::ParseBool(key, text);
      if (!flag.ok()) return flag.status();
      out->flag = *flag;
      return absl::OkStatus();
    }
    case OptionType::kEnum:
      for (const OptionChoice& c : o.choices) {
        if (c.name == text) {
          out->choice = c.value;
          return absl::OkStatus();
        }
      }
      return Bad(key, text, StrCat("use ", Accepts(o)));
    case OptionType::kString:
      if (text.find_first_not_of(" \t") == std::string_view::npos) {
        return Bad(key, text, StrCat("give ", o.accepts.empty() ? "a value" : o.accepts));
      }
      out->text = std::string(text);
      return absl::OkStatus();
  }
  return Bad(key, text, "unknown option type");
}

Status OptionTable::Set(std::string_view key, std::string_view value,
                        stormark::v1::PhaseSpec* spec) const {
  const Option* option = Find(key);
  if (option == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("unknown ", workload_, " parameter '", key, "' (known: ", Names(), ")"));
  }
  OptionValue parsed;
  RETURN_IF_ERROR(Parse(*option, key, value, &parsed));
  option->store(parsed, spec);
  return absl::OkStatus();
}

void OptionTable::Init(stormark::v1::PhaseSpec* spec) const {
  for (const Option& option : options_) {
    if (option.default_value.empty()) continue;
    OptionValue parsed;
    // Every default parses: option_table_test checks each table's.
    if (Parse(option, option.name, option.default_value, &parsed).ok()) {
      option.store(parsed, spec);
    }
  }
}

std::string OptionTable::Names() const {
  std::string text;
  for (const Option& option : options_) {
    text += StrCat(text.empty() ? "" : ", ", option.name);
    if (!option.aliases.empty()) {
      std::string aliases;
      for (std::string_view alias : option.aliases) {
        aliases += StrCat(aliases.empty() ? "" : ", ", alias);
      }
      text += StrCat(" (", aliases, ")");
    }
  }
  return text;
}

std::string OptionTable::HelpText() const {
  std::string text = StrCat(workload_,
                            " options: plan keys, --set KEY=VALUE and sweep axes take each name "
                            "and alias\n");
  for (const Option& o : options_) {
    std::string names(o.name);
    for (std::string_view alias : o.aliases) names += StrCat(", ", alias);
    std::string type(OptionTypeName(o.type));
    if (!o.unit.empty()) type += StrCat(" (", o.unit, ")");
    std::string default_text =
        o.default_value.empty() ? "default: none" : StrCat("default ", o.default_value);
    if (o.required) default_text = StrCat("required in plan phases (", default_text, " elsewhere)");
    text += StrCat("\n  ", names, "\n      ", type, ", ", default_text, "; ", Accepts(o),
                   "\n      ", o.help, "\n");
  }
  return text;
}

std::string OptionTable::Markdown() const {
  std::string text = StrCat(
      "# ", workload_, " options\n\n", "<!-- Generated by `stormark help workload ", workload_,
      " --markdown`; do not edit. The docs.workload_options test fails when this file and the "
      "table in controller/workloads/ differ. -->\n\n",
      "Plan keys, `--set KEY=VALUE` and sweep axes take each name and alias. An empty default "
      "leaves the choice to the agent or the target, as the meaning says.\n\n",
      "| option | aliases | type | default | accepts | meaning |\n",
      "| --- | --- | --- | --- | --- | --- |\n");
  for (const Option& o : options_) {
    std::string aliases;
    for (std::string_view alias : o.aliases) {
      aliases += StrCat(aliases.empty() ? "" : ", ", "`", alias, "`");
    }
    std::string type(OptionTypeName(o.type));
    if (!o.unit.empty()) type += StrCat(" (", o.unit, ")");
    std::string default_text = o.default_value.empty() ? "" : StrCat("`", o.default_value, "`");
    if (o.required) default_text = StrCat("required in plan phases (", default_text, " elsewhere)");
    text += StrCat("| `", o.name, "` | ", aliases, " | ", type, " | ", default_text, " | ",
                   Cell(Accepts(o)), " | ", Cell(o.help), " |\n");
  }
  return text;
}

}  // namespace stormark::controller
