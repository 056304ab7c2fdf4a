// Sizes and times as fio reads them in a job file (parse.c str_to_decimal, get_mult_bytes,
// get_mult_time), for one value that the reader has already substituted: "4k", "10g", "50%",
// "(2*1024)m", "30s", "(1500ms)".
//
// fio is lax: it reads a number, then looks only at the first letters after it, and quietly
// gives a value the writer did not mean for many forms. Where fio's result differs from the
// obvious reading, these functions return an error that says what fio would do, so that a
// job is never run with a silently different size or time:
//   "1.5g"   fio stops at the '.' and reads 1 byte      -> write (1.5*1024)m
//   " 4k"    fio ignores a unit after a leading blank   -> 4 bytes
//   "0x10k"  fio ignores a unit after a hex number      -> 16 bytes
//   "4x"     fio ignores an unknown unit                -> 4 bytes
//   "10sec", "10min": fio's HOWTO names 'sec' and 'min', but parse.c compares the whole
//            suffix with "s" and "m" and reads both as microseconds
//   "(10-2)" fio splits a numeric value at '-' as a range and parses "2)" again
//   "(3600)" for a time in seconds: fio holds a unitless expression times 10^6 in an int
//
// Pure functions; thread-safe.
#ifndef STORMARK_CONTROLLER_FIO_FIO_UNITS_H_
#define STORMARK_CONTROLLER_FIO_FIO_UNITS_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace stormark::controller::fio {

struct FioSize {
  uint64_t value = 0;  // bytes; or, when `percent`, the percentage (1..100)
  // "20%": a share of the file's or device's size, which only the run can resolve.
  bool percent = false;
  // The unit means something other than its SI/IEC reading, so a checker may warn. With
  // kb_base=1024 (fio's default) "KB" is 1024 and "KiB" is 1000; with either kb_base, fio's
  // code reads "Ki" as plain "K" although its HOWTO says kibi. Expressions: see fio_expression.h.
  bool ambiguous_unit = false;
};

// Parses a size under `kb_base` (1024 or 1000), as fio's HOWTO "int" type and kb_base entry
// describe and parse.c implements:
//   kb_base=1024: k, kb, ki = 1024; kib = 1000   (m, g, t, p likewise, by powers)
//   kb_base=1000: k, kb, ki = 1000; kib = 1024
// Units are case-insensitive; 'b'/'B' is bytes; a bare number is bytes; 0x... is hex with no
// unit. A value beginning with '(' is evaluated with fio's expression grammar, whose units
// ignore kb_base. Errors read "bad size '1.5g': ...".
common::StatusOr<FioSize> ParseFioSize(std::string_view value, int kb_base);

// Parses a time, in nanoseconds. `default_unit` is the unit of a bare number: "s" for the
// options fio marks is_seconds (runtime, ramp_time, startdelay) and "us" for the others
// (thinktime). Units, case-insensitive: us/usec, ms/msec, s, m (minutes), h, d. An
// expression ("(1500ms)") follows fio: its units are microseconds, and for a default of "s"
// fio truncates the result to whole seconds, so (1500ms) is 1 s. Errors read "bad time ...".
common::StatusOr<int64_t> ParseFioTimeNanos(std::string_view value, std::string_view default_unit);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_UNITS_H_
