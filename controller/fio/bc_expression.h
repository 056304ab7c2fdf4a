// The arithmetic fio hands to bc: when fio has replaced $ncpus, $mb_memory or $pagesize in an
// option line that holds + - * or /, it pipes the value to `bc` and uses bc's answer
// (options.c bc_calc). So size=8*$mb_memory is computed by bc, not by fio's own grammar.
//
// This evaluates such a value as GNU bc does with scale=0: integers, + - * / % ^ and
// parentheses; ^ binds right to left and tighter than * / %, and unary minus tighter still
// ("-2^2" is 4); division and modulo truncate toward zero. An error wherever bc fails and so
// fio fails: a unit ("4k"), "--" (bc's decrement), unary plus, division by zero, any other
// text. Also an error: a fraction (bc would print one, which fio then misreads) and a value
// beyond 64 bits at any step (bc has arbitrary precision). Errors read "bad expression
// '4k': ...". A pure function; thread-safe.
#ifndef STORMARK_CONTROLLER_FIO_BC_EXPRESSION_H_
#define STORMARK_CONTROLLER_FIO_BC_EXPRESSION_H_

#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace stormark::controller::fio {

common::StatusOr<int64_t> EvaluateBcExpression(std::string_view text);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_BC_EXPRESSION_H_
