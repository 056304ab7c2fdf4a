#include "controller/fio/bc_expression.h"

#include <cctype>
#include <limits>

#include "common/strings.h"
#include "controller/fio/fio_expression.h"

namespace stormark::controller::fio {
namespace {

using common::StatusOr;
using common::StrCat;

constexpr size_t kMaxChars = 100;  // bc_calc skips values over 100 characters
constexpr int kMaxDepth = 256;

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// bc, as fio feeds it: one line of integer arithmetic with scale=0.
class BcParser {
 public:
  explicit BcParser(std::string_view text) : text_(text) {}

  StatusOr<int64_t> Run() {
    if (text_.size() > kMaxChars) return Bad("it is longer than the 100 characters fio gives bc");
    ASSIGN_OR_RETURN(int64_t value, Parse(0, 0));
    Skip();
    if (pos_ < text_.size()) return Bad(StrCat("bc cannot read '", text_.substr(pos_), "'"));
    return value;
  }

 private:
  absl::Status Bad(std::string_view why) const {
    return absl::InvalidArgumentError(StrCat("bad expression '", text_, "': ", why));
  }

  void Skip() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }
  char Peek() {
    Skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  static int Precedence(char op) {
    if (op == '+' || op == '-') return 1;
    if (op == '*' || op == '/' || op == '%') return 2;
    return op == '^' ? 3 : -1;
  }

  StatusOr<int64_t> Parse(int min_precedence, int depth) {
    ASSIGN_OR_RETURN(int64_t lhs, Unary(depth));
    for (;;) {
      const char op = Peek();
      const int precedence = Precedence(op);
      if (precedence < 0 || precedence < min_precedence) return lhs;
      if (pos_ + 1 < text_.size() && (op == '+' || op == '-') && text_[pos_ + 1] == op) {
        return Bad(StrCat("bc reads '", text_.substr(pos_, 2), "' as its own operator"));
      }
      ++pos_;
      ASSIGN_OR_RETURN(int64_t rhs, Parse(op == '^' ? precedence : precedence + 1, depth + 1));
      ASSIGN_OR_RETURN(lhs, Apply(op, lhs, rhs));
    }
  }

  StatusOr<int64_t> Unary(int depth) {
    if (depth > kMaxDepth) return Bad(StrCat("it nests deeper than ", kMaxDepth, " levels"));
    const char c = Peek();
    if (c == '-') {
      if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '-') {
        return Bad("bc reads '--' as its decrement operator");
      }
      ++pos_;
      ASSIGN_OR_RETURN(int64_t operand, Unary(depth + 1));
      if (operand == std::numeric_limits<int64_t>::min()) return Bad("it overflows 64 bits");
      return -operand;
    }
    if (c == '(') {
      ++pos_;
      ASSIGN_OR_RETURN(int64_t inner, Parse(0, depth + 1));
      if (Peek() != ')') return Bad("expected ')'");
      ++pos_;
      return inner;
    }
    if (!IsDigit(c)) {
      if (c == '\0') return Bad("expected a number");
      return Bad(StrCat("bc cannot read '", text_.substr(pos_), "'"));
    }
    int64_t n = 0;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) {
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, text_[pos_] - '0', &n)) {
        return Bad("a number overflows 64 bits");
      }
      ++pos_;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      return Bad("bc would compute a fraction, which fio cannot use here");
    }
    return n;
  }

  StatusOr<int64_t> Apply(char op, int64_t a, int64_t b) {
    int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case '+':
        overflow = __builtin_add_overflow(a, b, &r);
        break;
      case '-':
        overflow = __builtin_sub_overflow(a, b, &r);
        break;
      case '*':
        overflow = __builtin_mul_overflow(a, b, &r);
        break;
      case '/':
      case '%':
        if (b == 0) return Bad("division by zero (bc prints nothing, and fio fails)");
        overflow = a == std::numeric_limits<int64_t>::min() && b == -1;
        r = overflow ? 0 : (op == '/' ? a / b : a % b);
        break;
      case '^':
        if (b < 0) {
          if (a == 0) return Bad("division by zero (bc prints nothing, and fio fails)");
          return a == 1 ? 1 : a == -1 ? (b % 2 == 0 ? 1 : -1) : 0;
        } else {
          auto power = CheckedPow(a, b);
          overflow = !power.ok();
          r = power.value_or(0);
        }
        break;
    }
    if (overflow) return Bad("it overflows 64 bits");
    return r;
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<int64_t> EvaluateBcExpression(std::string_view text) { return BcParser(text).Run(); }

}  // namespace stormark::controller::fio
