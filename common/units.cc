#include "common/units.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <limits>

#include "common/strings.h"
#include "fmt/format.h"

namespace stormark::common {
namespace {

struct NumberAndUnit {
  std::string_view number;
  std::string_view unit;
};

NumberAndUnit SplitNumber(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    ++i;
  }
  return {text.substr(0, i), common::Trim(text.substr(i))};
}

// Parses "123" or "1.5" into a double; false if it is not a plain non-negative number.
bool ParseNumber(std::string_view number, double* value) {
  if (number.empty() || number.front() == '.' || number.back() == '.') return false;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), *value);
  return ec == std::errc() && ptr == number.data() + number.size();
}

}  // namespace

StatusOr<uint64_t> ParseSize(std::string_view raw) {
  std::string_view text = common::Trim(raw);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(common::StrCat("bad size '", raw, "': ", why));
  };
  if (text.empty()) return bad("empty");
  if (text.front() == '-') return bad("must not be negative");
  NumberAndUnit split = SplitNumber(text);
  if (split.number.empty()) return bad("expected a number, such as 4k, 1M or 10G");

  uint64_t multiplier = 0;
  std::string unit = common::ToLower(split.unit);
  static constexpr std::string_view kBinary[] = {"k", "m", "g", "t", "p"};
  if (unit.empty() || unit == "b") {
    multiplier = 1;
  } else {
    for (int i = 0; i < 5 && multiplier == 0; ++i) {
      const uint64_t binary = uint64_t{1} << (10 * (i + 1));
      uint64_t decimal = 1;
      for (int j = 0; j <= i; ++j) decimal *= 1000;
      const std::string letter(kBinary[i]);
      if (unit == letter || unit == letter + "ib") multiplier = binary;
      if (unit == letter + "b") multiplier = decimal;
    }
  }
  if (multiplier == 0) {
    return bad(common::StrCat("unknown unit '", split.unit,
                              "' (use k, M, G, T or P; KiB..PiB; KB..PB for powers of 1000)"));
  }
  // A whole number is exact in integers; a double would round it above 2^53.
  if (split.number.find('.') == std::string_view::npos) {
    uint64_t whole = 0;
    const char* end = split.number.data() + split.number.size();
    auto [ptr, ec] = std::from_chars(split.number.data(), end, whole);
    if (ec == std::errc::result_out_of_range) return bad("too large");
    if (ec != std::errc() || ptr != end) return bad("expected a number, such as 4k, 1M or 10G");
    if (whole > UINT64_MAX / multiplier) return bad("too large");
    return whole * multiplier;
  }
  double value = 0;
  if (!ParseNumber(split.number, &value)) {
    return bad("expected a number, such as 4k, 1M or 10G");
  }
  if (multiplier == 1 && split.number.find('.') != std::string_view::npos) {
    return bad("a byte count must be a whole number");
  }
  const double bytes = value * static_cast<double>(multiplier);
  if (bytes >= 18446744073709551615.0) return bad("too large");
  const double rounded = std::round(bytes);
  if (std::fabs(bytes - rounded) > 1e-6 * std::max(1.0, bytes)) {
    return bad("not a whole number of bytes");
  }
  return static_cast<uint64_t>(rounded);
}

StatusOr<bool> ParseBool(std::string_view key, std::string_view value) {
  const std::string v = ToLower(Trim(value));
  if (v == "true" || v == "yes" || v == "on" || v == "1") return true;
  if (v == "false" || v == "no" || v == "off" || v == "0") return false;
  return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': expected true or false"));
}

StatusOr<uint64_t> ParseCount(std::string_view key, std::string_view value) {
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
    return absl::InvalidArgumentError(
        StrCat("bad ", key, " '", value, "': expected a whole number"));
  }
  return n;
}

namespace {

// "bad size '10X': why" -> "bad KEY '10X': why".
Status Rename(const Status& status, std::string_view kind, std::string_view key,
              std::string_view value) {
  const std::string prefix = StrCat("bad ", kind, " '", value, "'");
  std::string message(status.message());
  if (message.starts_with(prefix))
    message.replace(0, prefix.size(), StrCat("bad ", key, " '", value, "'"));
  return Status(status.code(), message);
}

}  // namespace

StatusOr<uint64_t> ParseSizeOf(std::string_view key, std::string_view value) {
  StatusOr<uint64_t> parsed = ParseSize(value);
  if (!parsed.ok()) return Rename(parsed.status(), "size", key, value);
  return parsed;
}

StatusOr<int64_t> ParseDurationOf(std::string_view key, std::string_view value) {
  StatusOr<int64_t> parsed = ParseDurationNanos(value);
  if (!parsed.ok()) return Rename(parsed.status(), "duration", key, value);
  return parsed;
}

StatusOr<int64_t> ParseDurationNanos(std::string_view raw) {
  std::string_view text = common::Trim(raw);
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(common::StrCat("bad duration '", raw, "': ", why));
  };
  if (text.empty()) return bad("empty");
  if (text.front() == '-') return bad("must not be negative");
  NumberAndUnit split = SplitNumber(text);
  double value = 0;
  if (!ParseNumber(split.number, &value)) return bad("expected a number, such as 500ms or 10s");
  const std::string unit = common::ToLower(split.unit);
  double scale = 0;
  if (unit.empty() || unit == "s" || unit == "sec") scale = 1e9;
  if (unit == "ms") scale = 1e6;
  if (unit == "us") scale = 1e3;
  if (unit == "ns") scale = 1;
  if (unit == "m" || unit == "min") scale = 60e9;
  if (unit == "h") scale = 3600e9;
  if (scale == 0) {
    return bad(common::StrCat("unknown unit '", split.unit, "' (use ns, us, ms, s, m or h)"));
  }
  const double nanos = value * scale;
  // INT64_MAX rounds up to 2^63 as a double, which no longer fits: hence >=.
  if (nanos >= static_cast<double>(std::numeric_limits<int64_t>::max())) return bad("too large");
  return static_cast<int64_t>(std::llround(nanos));
}

namespace {

// Three significant digits: 1.23, 12.3, 123.
std::string ThreeDigits(double v) {
  if (v >= 100 || v == 0) return fmt::format("{:.0f}", v);
  if (v >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

}  // namespace

std::string FormatBytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  double value = static_cast<double>(bytes);
  while (value >= 1024 && unit < 6) {
    value /= 1024;
    ++unit;
  }
  if (unit == 0) return fmt::format("{} B", bytes);
  // Exact multiples read as such: "1 MiB", not "1.00 MiB".
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    return fmt::format("{} {}", static_cast<uint64_t>(value), kUnits[unit]);
  }
  return fmt::format("{} {}", ThreeDigits(value), kUnits[unit]);
}

std::string FormatSizeShort(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"", "k", "M", "G", "T", "P"};
  int unit = 0;
  while (unit < 5 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++unit;
  }
  return fmt::format("{}{}", bytes, kUnits[unit]);
}

std::string FormatDurationNanos(double nanos) {
  if (nanos < 1e3) return fmt::format("{:.0f} ns", nanos);
  if (nanos < 1e6) return ThreeDigits(nanos / 1e3) + " us";
  if (nanos < 1e9) return ThreeDigits(nanos / 1e6) + " ms";
  return ThreeDigits(nanos / 1e9) + " s";
}

std::string FormatIops(double iops) {
  if (iops >= 1e7) return fmt::format("{:.1f}M", iops / 1e6);
  if (iops >= 1e6) return fmt::format("{:.2f}M", iops / 1e6);
  if (iops >= 1e5) return fmt::format("{:.0f}k", iops / 1e3);
  if (iops >= 1e4) return fmt::format("{:.1f}k", iops / 1e3);
  if (iops >= 100) return fmt::format("{:.0f}", iops);
  return fmt::format("{:.3g}", iops);
}

std::string FormatRate(double bytes_per_second) {
  return ThreeDigits(bytes_per_second / (1024.0 * 1024.0)) + " MiB/s";
}

std::string FormatUtc(int64_t unix_nanos, const char* format) {
  const time_t seconds = static_cast<time_t>(unix_nanos / 1'000'000'000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char text[64];
  const size_t length = strftime(text, sizeof(text), format, &utc);
  return std::string(text, length);
}

std::string FormatIsoTime(int64_t unix_nanos) {
  return fmt::format("{}.{:03d}Z", FormatUtc(unix_nanos, "%Y-%m-%dT%H:%M:%S"),
                     static_cast<int>((unix_nanos / 1'000'000) % 1000));
}

}  // namespace stormark::common
