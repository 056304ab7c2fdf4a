#include "controller/fio/fio_units.h"

#include <cctype>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>

#include "common/strings.h"
#include "controller/fio/fio_expression.h"

namespace stormark::controller::fio {
namespace {

using common::StatusOr;
using common::StrCat;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view TrimEnd(std::string_view text) {
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

size_t LeadingDigits(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  return i;
}

// All of `text` as a whole number in `base`.
bool ParseWhole(std::string_view text, int base, uint64_t* value) {
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *value, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// What every size and time shares: the forms fio would misread before any unit is looked at.
// Returns the trimmed text, or an error built by `bad`.
template <typename Bad>
StatusOr<std::string_view> CommonChecks(std::string_view value, const Bad& bad) {
  std::string_view text = TrimEnd(value);
  if (text.empty()) return bad("it is empty");
  if (IsSpace(text[0])) return bad("fio ignores the unit after a leading blank; remove it");
  if (text.find_first_of(",:") != std::string_view::npos) {
    return bad("it is a list or a range; parse each part");
  }
  if (text[0] == '(' && text.find('-') != std::string_view::npos) {
    return bad("fio splits a numeric value at '-' as a range, even inside an expression");
  }
  if (text[0] == '-') return bad("it must not be negative");
  if (text.find_first_of("-/") != std::string_view::npos && text[0] != '(') {
    return bad("it is a range; parse each part");
  }
  return text;
}

struct SizeUnit {
  uint64_t multiplier = 0;  // 0: unknown
  bool ambiguous = false;
};

// parse.c __get_mult_bytes, for the exact suffixes it means (it matches prefixes only).
SizeUnit LookUpSizeUnit(std::string_view unit, int kb_base) {
  if (unit.empty() || unit == "b") return {1, false};
  const size_t power = std::string_view("kmgtp").find(unit[0]) + 1;
  if (power == 0) return {};
  const std::string_view form = unit.substr(1);
  uint64_t base = static_cast<uint64_t>(kb_base);
  bool ambiguous = false;
  if (form == "b") {
    ambiguous = kb_base == 1024;  // SI says 1000
  } else if (form == "i") {
    ambiguous = true;  // read as plain k; fio's HOWTO says kibi
  } else if (form == "ib") {
    base = kb_base == 1024 ? 1000 : 1024;  // fio's "compatibility mode" swaps IEC and SI
    ambiguous = kb_base == 1024;
  } else if (!form.empty()) {
    return {};
  }
  uint64_t multiplier = 1;
  for (size_t i = 0; i < power; ++i) multiplier *= base;
  return {multiplier, ambiguous};
}

}  // namespace

StatusOr<FioSize> ParseFioSize(std::string_view value, int kb_base) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("bad size '", value, "': ", why));
  };
  if (kb_base != 1024 && kb_base != 1000) {
    return absl::InvalidArgumentError(StrCat("kb_base must be 1024 or 1000, not ", kb_base));
  }
  ASSIGN_OR_RETURN(std::string_view text, CommonChecks(value, bad));

  if (text[0] == '(') {
    ASSIGN_OR_RETURN(FioExpressionValue v, EvaluateFioExpression(text, FioUnits::kBytes));
    if (!v.units_specified && (v.value > kInt32Max || v.value < kInt32Min)) {
      return bad("fio holds a unitless expression in a 32-bit int; add a unit: (8*1024)m");
    }
    if (v.value < 0) return bad("it must not be negative");
    return FioSize{static_cast<uint64_t>(v.value), false, v.ambiguous_unit};
  }
  if (text.starts_with("0x") || text.starts_with("0X")) {
    const std::string_view digits = text.substr(2);
    const size_t end = digits.find_first_not_of("0123456789abcdefABCDEF");
    uint64_t n = 0;
    if (end != std::string_view::npos) return bad("fio ignores a unit after a hex number");
    if (!ParseWhole(digits, 16, &n)) return bad("expected hex digits after 0x, within 64 bits");
    return FioSize{n, false, false};
  }

  const size_t digits = LeadingDigits(text);
  if (digits == 0) return bad("expected a number, such as 4k, 1m or 10g");
  uint64_t n = 0;
  if (!ParseWhole(text.substr(0, digits), 10, &n)) return bad("it is too large");
  const std::string unit = common::ToLower(text.substr(digits));
  if (unit.starts_with(".")) {
    return bad(StrCat("fio stops at the '.' and reads ", n,
                      " bytes; a fraction needs an expression such as (1.5*1024)m"));
  }
  if (unit == "%") {
    if (n < 1 || n > 100) return bad("a percentage must be from 1 to 100");
    return FioSize{n, true, false};
  }
  if (unit == "z") return bad("a number of zones needs the device's zone size");
  const SizeUnit size_unit = LookUpSizeUnit(unit, kb_base);
  if (size_unit.multiplier == 0) {
    return bad(StrCat("unknown unit '", text.substr(digits), "', which fio would ignore",
                      " (use k, m, g, t or p, optionally followed by b, i or ib)"));
  }
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, size_unit.multiplier, &bytes)) return bad("it is too large");
  return FioSize{bytes, false, size_unit.ambiguous};
}

StatusOr<int64_t> ParseFioTimeNanos(std::string_view value, std::string_view default_unit) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(StrCat("bad time '", value, "': ", why));
  };
  if (default_unit != "s" && default_unit != "us") {
    return absl::InvalidArgumentError(
        StrCat("the default unit of a fio time is 's' or 'us', not '", default_unit, "'"));
  }
  const bool seconds = default_unit == "s";
  ASSIGN_OR_RETURN(std::string_view text, CommonChecks(value, bad));

  int64_t micros = 0;
  if (text[0] == '(') {
    ASSIGN_OR_RETURN(FioExpressionValue v, EvaluateFioExpression(text, FioUnits::kTime));
    micros = v.value;
    if (!v.units_specified) {
      // fio: *ival = (int) ((double) *ival * implied_units).
      const double scaled = static_cast<double>(v.value) * (seconds ? 1e6 : 1.0);
      if (scaled > static_cast<double>(kInt32Max) || scaled < static_cast<double>(kInt32Min)) {
        return bad(StrCat("fio holds a unitless expression, in microseconds, in a 32-bit int,",
                          " which overflows", seconds ? " above 2147 s" : "",
                          "; add a unit: (3600)s"));
      }
      micros = static_cast<int64_t>(scaled);
    }
    // str_to_decimal: for is_seconds options, *val = ival / 1000000 and then * 1000000.
    if (seconds) micros = micros / 1000000 * 1000000;
    if (micros < 0) return bad("it must not be negative");
  } else {
    if (text.starts_with("0x") || text.starts_with("0X")) {
      return bad("fio reads a hex time as microseconds whatever its unit; write it in decimal");
    }
    const size_t digits = LeadingDigits(text);
    if (digits == 0) return bad("expected a number, such as 30s, 500ms or 2m");
    uint64_t n = 0;
    if (!ParseWhole(text.substr(0, digits), 10, &n) ||
        n > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return bad("it is too large");
    }
    const std::string unit = common::ToLower(text.substr(digits));
    int64_t multiplier = 0;
    if (unit.empty()) multiplier = seconds ? 1000000 : 1;
    if (unit == "us" || unit == "usec") multiplier = 1;
    if (unit == "ms" || unit == "msec") multiplier = 1000;
    if (unit == "s") multiplier = 1000000;
    if (unit == "m") multiplier = 60000000;
    if (unit == "h") multiplier = 3600000000;
    if (unit == "d") multiplier = 86400000000;
    if (unit == "sec" || unit == "min") {
      return bad(StrCat("fio's HOWTO lists '", unit, "', but fio reads it as microseconds; write ",
                        n, unit.substr(0, 1)));
    }
    if (unit.starts_with(".")) {
      return bad("fio stops at the '.' and ignores the unit; use a smaller unit (1500ms)");
    }
    if (multiplier == 0) {
      return bad(StrCat("unknown unit '", text.substr(digits),
                        "', which fio reads as microseconds (use us, ms, s, m, h or d)"));
    }
    if (__builtin_mul_overflow(static_cast<int64_t>(n), multiplier, &micros)) {
      return bad("it is too large");
    }
  }
  int64_t nanos = 0;
  if (__builtin_mul_overflow(micros, int64_t{1000}, &nanos)) return bad("it is too large");
  return nanos;
}

}  // namespace stormark::controller::fio
