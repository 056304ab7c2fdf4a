// fio's arithmetic grammar (exp/expression-parser.y and .l), computed the way fio computes
// it. fio applies it to a numeric option whose value begins with '(': "(2*1024)m",
// "(1500ms)". (Keyword arithmetic such as size=8*$mb_memory goes to bc: bc_expression.h.)
//
// Precedence, lowest first: + and -, then a unit suffix, then * and /, then ^ (right to
// left), then %, then unary minus. So (10*7%4) is 30, (2-3k) is -3070 and (2*3)k is 6144.
// Numbers are 32-bit integers, decimal fractions (1.5, 1e3) or hex (0x10). Units: k/kb, mb,
// g/gb, t/tb, p/pb are powers of 1024 whatever kb_base says; kib, mib and gib are powers of
// 1000 and pib is 10^12 (fio's table); us, ms, s, h and d are times in microseconds; m is MiB
// in a size and minutes in a time. The result is fio's integer value (its `ival`); where a
// fraction is involved it follows fio's rules, so (1+2.5)*2 is 6 while (2.5+1)*2 is 7.
//
// Where fio notes an error and carries on, or overflows, these functions return an error
// instead: division or modulo by zero (fio yields the left operand: (1/0) is 1), modulo of a
// fraction, a literal above 2^31-1 (fio reads it with %d), and 64-bit overflow (fio's a^b
// loops b times, so a huge exponent also stops it for minutes). Errors read "bad expression
// '(2*)': expected a number after '*'". Pure functions; thread-safe.
#ifndef STORMARK_CONTROLLER_FIO_FIO_EXPRESSION_H_
#define STORMARK_CONTROLLER_FIO_FIO_EXPRESSION_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace stormark::controller::fio {

// fio reads an expression through a 1000-byte buffer and drops what does not fit.
inline constexpr size_t kMaxExpressionChars = 997;

// What the option being parsed measures; it decides what 'm' means and which units fit.
enum class FioUnits {
  kNone,   // the type is unknown: any unit is an error
  kBytes,  // a size: units give bytes; a time unit is an error
  kTime,   // a time: units give microseconds; a size unit is an error
};

struct FioExpressionValue {
  int64_t value = 0;             // fio's integer result: bytes, microseconds, or a number
  bool units_specified = false;  // a unit appeared, so fio applies no implied unit
  bool ambiguous_unit = false;   // kb..pb (1024-based), kib..pib (1000-based) were used
};

// Evaluates `text` with fio's expression grammar. Whatever follows ',', ':' or '#' is ignored,
// as fio's lexer ignores it.
common::StatusOr<FioExpressionValue> EvaluateFioExpression(std::string_view text, FioUnits units);

// How fio's lexer sees `text`, for a reader that does not know the option's type.
enum class ExpressionShape {
  kNotExpression,  // it does not begin with '(' or holds something that is not a token of
                   // fio's grammar (a word, a ',' or ':' list): fio would keep a string as is
  kPlain,          // numbers, operators and parentheses only
  kWithUnits,      // also unit suffixes, whose meaning depends on the option's type
};
ExpressionShape ClassifyFioExpression(std::string_view text);

// True if `word` (any case) is one of the unit suffixes of fio's expression grammar.
bool IsFioExpressionUnit(std::string_view word);

// a^b for b >= 0, or OUT_OF_RANGE when it overflows 64 bits (fio's '^' and bc's, both over
// integers here).
common::StatusOr<int64_t> CheckedPow(int64_t a, int64_t b);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_EXPRESSION_H_
