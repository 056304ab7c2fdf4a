// Sizes, durations and rates as people write them: "4k", "1M", "10GiB", "500ms", "2m".
#ifndef STORMARK_COMMON_UNITS_H_
#define STORMARK_COMMON_UNITS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::common {

// Parses a byte count. Suffixes are binary, as in dd, fio and bonnie++: k/K/KiB = 1024,
// M/MiB = 1024^2, G, T, P likewise. "KB"/"MB"/... are decimal (1000^n), like dd. A bare
// number is bytes. Fractions are allowed with a suffix ("1.5G"). Errors name the input and
// say what is accepted: "bad size '10X': unknown unit 'X' (use k, M, G, T, P)".
StatusOr<uint64_t> ParseSize(std::string_view text);

// Parses a yes/no parameter: true/yes/on/1 or false/no/off/0, in any case. The error names
// `key` and the value: "bad direct 'maybe': expected true or false".
StatusOr<bool> ParseBool(std::string_view key, std::string_view value);

// Parses a whole number: "bad iodepth 'x': expected a whole number" names `key`.
StatusOr<uint64_t> ParseCount(std::string_view key, std::string_view value);

// ParseSize and ParseDurationNanos for the parameter `key`: their errors name the parameter
// ("bad bs '3X': unknown unit ...") rather than the kind of value.
StatusOr<uint64_t> ParseSizeOf(std::string_view key, std::string_view value);
StatusOr<int64_t> ParseDurationOf(std::string_view key, std::string_view value);

// Parses a duration: "250ms", "10s", "5m", "1h", "2us", "100ns"; a bare number is seconds.
StatusOr<int64_t> ParseDurationNanos(std::string_view text);

// "1 GiB", "1.50 MiB", "4 KiB", "17 B": the largest binary unit with at least 1 of it; exact
// multiples print without decimals.
std::string FormatBytes(uint64_t bytes);

// A compact form that ParseSize reads back exactly when possible: "1G", "4k", "1536".
std::string FormatSizeShort(uint64_t bytes);

// "1.23 ms", "45.6 us", "812 ns", "2.50 s": three significant digits.
std::string FormatDurationNanos(double nanos);

// Operations per second with three significant digits: "812", "41.2k", "412k", "1.23M".
std::string FormatIops(double iops);

// Bytes per second in MiB/s with three significant digits: "512 MiB/s", "1.23 MiB/s".
std::string FormatRate(double bytes_per_second);

// A wall-clock instant in UTC, as strftime's `format` writes it (at most 63 characters).
std::string FormatUtc(int64_t unix_nanos, const char* format);

// A wall-clock instant in UTC, ISO 8601 with milliseconds: "2026-11-30T02:36:12.345Z".
std::string FormatIsoTime(int64_t unix_nanos);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_UNITS_H_
