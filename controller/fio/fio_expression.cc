#include "controller/fio/fio_expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "common/strings.h"

namespace stormark::controller::fio {
namespace {

using common::StatusOr;
using common::StrCat;

constexpr int kMaxDepth = 256;
constexpr double kTwo63 = 9223372036854775808.0;

// fio's value of a subexpression: its integer and its double, and whether the double is the
// real value (a fraction was involved). fio's rules read `ival` and `dval` differently.
struct Value {
  int64_t i = 0;
  double d = 0;
  bool has_d = false;
};

enum class UnitKind { kBytes, kTime, kEither };

// exp/expression-parser.l, entry by entry (including t's and p's double of 1024^5).
struct Unit {
  std::string_view word;
  int64_t i;  // the ival, dval and has_dval fio's lexer gives it
  double d;
  bool has_d;
  UnitKind kind;
  bool ambiguous;
};
constexpr int64_t kKi = int64_t{1} << 10;
constexpr int64_t kMi = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kTi = int64_t{1} << 40;
constexpr int64_t kPi = int64_t{1} << 50;
constexpr Unit kUnits[] = {
    {"kib", 1000, 1e3, false, UnitKind::kBytes, true},
    {"mib", 1000000, 1e6, false, UnitKind::kBytes, true},
    {"gib", 1000000000, 1e9, false, UnitKind::kBytes, true},
    {"pib", 1000000000000, 1e12, false, UnitKind::kBytes, true},
    {"kb", kKi, 1024.0, false, UnitKind::kBytes, true},
    {"mb", kMi, 1048576.0, false, UnitKind::kBytes, true},
    {"ms", 1000, 1000.0, true, UnitKind::kTime, false},
    {"us", 1, 1.0, true, UnitKind::kTime, false},
    {"gb", kGi, 1073741824.0, false, UnitKind::kBytes, true},
    {"tb", kTi, 1125899906842624.0, false, UnitKind::kBytes, true},
    {"pb", kPi, 1125899906842624.0, false, UnitKind::kBytes, true},
    {"k", kKi, 1024.0, false, UnitKind::kBytes, false},
    {"g", kGi, 1073741824.0, false, UnitKind::kBytes, false},
    {"t", kTi, 1125899906842624.0, false, UnitKind::kBytes, false},
    {"p", kPi, 1125899906842624.0, false, UnitKind::kBytes, false},
    {"s", 1000000, 1e6, false, UnitKind::kTime, false},
    {"m", 0, 0, false, UnitKind::kEither, false},  // MiB or minutes: see ApplyUnit
    {"d", 86400000000, 86400e6, false, UnitKind::kTime, false},
    {"h", 3600000000, 3600e6, false, UnitKind::kTime, false},
};

// The longest unit word at the start of `text`, as flex matches; nullptr if none.
const Unit* MatchUnit(std::string_view text) {
  const Unit* best = nullptr;
  for (const Unit& unit : kUnits) {
    if (text.size() < unit.word.size()) continue;
    if (common::ToLower(text.substr(0, unit.word.size())) != unit.word) continue;
    if (best == nullptr || unit.word.size() > best->word.size()) best = &unit;
  }
  return best;
}

enum class Kind { kNumber, kUnit, kOp, kEnd, kBad };

struct Token {
  Kind kind = Kind::kEnd;
  std::string_view text;
  const Unit* unit = nullptr;
  // fio's lexer sets yylval for numbers and units only, so an operator token carries the
  // value of the last one before it; "- expression" keeps that value's has_dval.
  bool stale_has_d = false;
};

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

size_t Digits(std::string_view s, size_t i) {
  while (i < s.size() && IsDigit(s[i])) ++i;
  return i;
}

// How much of the start of `s` fio's lexer reads as a fraction, `[0-9]*[.][0-9]+` or
// `[0-9]*[.]?[0-9]+[eE][-+]*[0-9]+`; 0 if neither matches.
size_t MatchFloat(std::string_view s) {
  size_t best = 0;
  size_t i = Digits(s, 0);
  if (i < s.size() && s[i] == '.' && Digits(s, i + 1) > i + 1) best = Digits(s, i + 1);
  size_t j = i < s.size() && s[i] == '.' ? Digits(s, i + 1) : i;
  if (j > 0 && IsDigit(s[j - 1]) && j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    size_t k = j + 1;
    while (k < s.size() && (s[k] == '-' || s[k] == '+')) ++k;
    if (Digits(s, k) > k) best = std::max(best, Digits(s, k));
  }
  return best;
}
// The same for a hex number, `0x[0-9a-fA-F]+`.
size_t MatchHex(std::string_view s) {
  if (s.size() < 3 || s[0] != '0' || s[1] != 'x') return 0;
  size_t i = 2;
  while (i < s.size() && std::isxdigit(static_cast<unsigned char>(s[i]))) ++i;
  return i > 2 ? i : 0;
}

// fio's lexer over one expression. Stops at the end, a newline, or ',', ':' or '#'.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token Next() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
    const std::string_view rest = text_.substr(pos_);
    if (rest.empty() || rest[0] == '\n') return {Kind::kEnd, {}};
    if (rest[0] == ',' || rest[0] == ':' || rest[0] == '#') {
      stopped_early_ = true;
      return {Kind::kEnd, {}};
    }
    const size_t number = std::max({MatchFloat(rest), MatchHex(rest), Digits(rest, 0)});
    if (number > 0) {
      last_has_d_ = MatchFloat(rest) == number;
      return Take(Kind::kNumber, number);
    }
    if (const Unit* unit = MatchUnit(rest)) {
      Token token = Take(Kind::kUnit, unit->word.size());
      token.unit = unit;
      last_has_d_ = unit->has_d;
      return token;
    }
    if (std::string_view("+-*/()^%").find(rest[0]) != std::string_view::npos) {
      return Take(Kind::kOp, 1);
    }
    return Take(Kind::kBad, 1);
  }

  bool stopped_early() const { return stopped_early_; }

 private:
  Token Take(Kind kind, size_t length) {
    Token token{kind, text_.substr(pos_, length), nullptr, last_has_d_};
    pos_ += length;
    return token;
  }

  std::string_view text_;
  size_t pos_ = 0;
  bool stopped_early_ = false;
  bool last_has_d_ = false;  // fio's yylval starts zeroed in a fresh process
};

StatusOr<int64_t> ToInt(double d) {
  if (!std::isfinite(d) || d >= kTwo63 || d < -kTwo63) {
    return absl::OutOfRangeError("the result overflows 64 bits");
  }
  return static_cast<int64_t>(d);
}

class FioParser {
 public:
  FioParser(std::string_view text, FioUnits units) : text_(text), units_(units), lexer_(text) {
    Advance();
  }

  StatusOr<FioExpressionValue> Run() {
    if (text_.size() > kMaxExpressionChars) {
      return Bad(StrCat("it is longer than the ", kMaxExpressionChars,
                        " characters fio's expression parser reads"));
    }
    ASSIGN_OR_RETURN(Value value, Parse(0, 0));
    if (token_.kind != Kind::kEnd) return Bad(StrCat("unexpected '", token_.text, "'"));
    return FioExpressionValue{value.i, units_specified_, ambiguous_};
  }

 private:
  static int Precedence(char op) {
    switch (op) {
      case '+':
      case '-':
        return 1;
      case '*':
      case '/':
        return 3;
      case '^':
        return 4;
      case '%':
        return 5;
      default:
        return -1;
    }
  }
  static constexpr int kUnitPrecedence = 2;

  void Advance() {
    previous_ = token_.text.empty() ? previous_ : token_.text;
    token_ = lexer_.Next();
  }

  absl::Status Bad(std::string_view why) const {
    return absl::InvalidArgumentError(StrCat("bad expression '", text_, "': ", why));
  }

  StatusOr<Value> Parse(int min_precedence, int depth) {
    ASSIGN_OR_RETURN(Value lhs, Primary(depth));
    for (;;) {
      if (token_.kind == Kind::kUnit && kUnitPrecedence >= min_precedence) {
        ASSIGN_OR_RETURN(lhs, ApplyUnit(lhs, *token_.unit));
        Advance();
        continue;
      }
      if (token_.kind != Kind::kOp) break;
      const char op = token_.text[0];
      const int precedence = Precedence(op);
      if (precedence < 0 || precedence < min_precedence) break;
      Advance();
      ASSIGN_OR_RETURN(Value rhs, Parse(op == '^' ? precedence : precedence + 1, depth + 1));
      ASSIGN_OR_RETURN(lhs, Apply(op, lhs, rhs));
    }
    return lhs;
  }

  StatusOr<Value> Primary(int depth) {
    if (depth > kMaxDepth) return Bad(StrCat("it nests deeper than ", kMaxDepth, " levels"));
    if (token_.kind == Kind::kOp && token_.text[0] == '(') {
      Advance();
      ASSIGN_OR_RETURN(Value inner, Parse(0, depth + 1));
      if (token_.kind != Kind::kOp || token_.text[0] != ')') return Bad("expected ')'");
      Advance();
      return inner;
    }
    if (token_.kind == Kind::kOp && token_.text[0] == '-') {
      const bool has_d = token_.stale_has_d;
      Advance();
      ASSIGN_OR_RETURN(Value operand, Primary(depth + 1));
      if (operand.i == std::numeric_limits<int64_t>::min()) return Bad("it overflows 64 bits");
      return Value{-operand.i, -operand.d, has_d};
    }
    if (token_.kind == Kind::kNumber) {
      ASSIGN_OR_RETURN(Value number, Number(token_.text));
      Advance();
      return number;
    }
    if (token_.kind == Kind::kBad) return Bad(StrCat("'", token_.text, "' is not a number"));
    if (previous_.empty()) return Bad("expected a number");
    return Bad(StrCat("expected a number after '", previous_, "'"));
  }

  StatusOr<Value> Number(std::string_view text) {
    if (MatchFloat(text) == text.size()) {
      const double d = std::strtod(std::string(text).c_str(), nullptr);
      auto i = ToInt(d);
      if (!i.ok()) return Bad(StrCat(text, " is too large"));
      return Value{*i, d, true};
    }
    const bool hex = text.starts_with("0x");
    uint64_t n = 0;
    for (char c : hex ? text.substr(2) : text) {
      n = n * (hex ? 16 : 10) +
          static_cast<uint64_t>(IsDigit(c) ? c - '0' : std::tolower(c) - 'a' + 10);
      if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
        return Bad(StrCat(text, " does not fit the 32-bit integer fio reads a number into"));
      }
    }
    return Value{static_cast<int64_t>(n), static_cast<double>(n), false};
  }

  StatusOr<Value> ApplyUnit(const Value& a, const Unit& unit) {
    const bool time = unit.kind == UnitKind::kTime ||
                      (unit.kind == UnitKind::kEither && units_ == FioUnits::kTime);
    if (units_ == FioUnits::kNone) {
      return Bad(StrCat("the unit '", token_.text, "' needs the option's type"));
    }
    if (time != (units_ == FioUnits::kTime)) {
      return Bad(StrCat("'", token_.text, "' is a ", time ? "time" : "size", " unit"));
    }
    int64_t ui = unit.i;
    double ud = unit.d;
    if (unit.kind == UnitKind::kEither) {
      ui = time ? 60000000 : kMi;
      ud = static_cast<double>(ui);
    }
    units_specified_ = true;
    ambiguous_ = ambiguous_ || unit.ambiguous;
    Value r{0, 0, a.has_d};
    if (!a.has_d && !unit.has_d) {
      if (__builtin_mul_overflow(a.i, ui, &r.i)) return Bad("it overflows 64 bits");
      r.d = static_cast<double>(r.i);
      return r;
    }
    // fio: (long long) $1.dval * $2.dval, so the fraction is dropped before scaling.
    auto truncated = ToInt(a.d);
    auto scaled = truncated.ok() ? ToInt(static_cast<double>(*truncated) * ud) : truncated;
    if (!scaled.ok()) return Bad("it overflows 64 bits");
    r.i = *scaled;
    r.d = a.d * ud;
    return r;
  }

  StatusOr<Value> Apply(char op, const Value& a, const Value& b) {
    const bool fraction = a.has_d || b.has_d;
    Value r{0, 0, a.has_d};  // fio's rules leave $$ = $1 for what they do not set
    bool overflow = false;
    switch (op) {
      case '+':
      case '-':
      case '*': {
        r.d = op == '+' ? a.d + b.d : op == '-' ? a.d - b.d : a.d * b.d;
        if (!fraction) {
          overflow = op == '+'   ? __builtin_add_overflow(a.i, b.i, &r.i)
                     : op == '-' ? __builtin_sub_overflow(a.i, b.i, &r.i)
                                 : __builtin_mul_overflow(a.i, b.i, &r.i);
          break;
        }
        auto i = ToInt(r.d);
        overflow = !i.ok();
        r.i = i.value_or(0);
        break;
      }
      case '/': {
        if (fraction ? std::fabs(b.d) < 1e-20 : b.i == 0) return Bad("division by zero");
        r.d = a.d / b.d;
        if (!fraction) {
          overflow = a.i == std::numeric_limits<int64_t>::min() && b.i == -1;
          r.i = overflow ? 0 : a.i / b.i;
          break;
        }
        auto i = ToInt(r.d);
        overflow = !i.ok();
        r.i = i.value_or(0);
        break;
      }
      case '%':
        if (fraction) return Bad("modulo of a fraction");
        if (b.i == 0) return Bad("modulo by zero");
        r.i = b.i == -1 ? 0 : a.i % b.i;
        r.d = static_cast<double>(r.i);
        break;
      case '^': {
        r.d = std::pow(a.d, b.d);
        if (!fraction && b.i >= 0) {
          auto i = CheckedPow(a.i, b.i);
          overflow = !i.ok();
          r.i = i.value_or(0);
          break;
        }
        if (!fraction && a.i == 0) return Bad("zero to a negative power");
        auto i = ToInt(fraction ? r.d : std::pow(static_cast<double>(a.i), b.d));
        overflow = !i.ok();
        r.i = i.value_or(0);
        break;
      }
    }
    if (overflow) return Bad("it overflows 64 bits");
    return r;
  }

  std::string_view text_;
  FioUnits units_;
  Lexer lexer_;
  Token token_;
  std::string_view previous_;
  bool units_specified_ = false;
  bool ambiguous_ = false;
};

}  // namespace

// a^b for b >= 0, or an error on overflow. Bases 0, 1 and -1 need no loop.
StatusOr<int64_t> CheckedPow(int64_t a, int64_t b) {
  if (b == 0 || a == 1) return 1;
  if (a == 0) return 0;
  if (a == -1) return b % 2 == 0 ? 1 : -1;
  int64_t result = 1;
  for (int64_t n = 0; n < b; ++n) {
    if (__builtin_mul_overflow(result, a, &result)) {
      return absl::OutOfRangeError("the result overflows 64 bits");
    }
  }
  return result;
}

StatusOr<FioExpressionValue> EvaluateFioExpression(std::string_view text, FioUnits units) {
  return FioParser(text, units).Run();
}

ExpressionShape ClassifyFioExpression(std::string_view text) {
  if (text.empty() || text[0] != '(' || text.size() > kMaxExpressionChars) {
    return ExpressionShape::kNotExpression;
  }
  Lexer lexer(text);
  bool units = false;
  for (Token token = lexer.Next(); token.kind != Kind::kEnd; token = lexer.Next()) {
    if (token.kind == Kind::kBad) return ExpressionShape::kNotExpression;
    units = units || token.kind == Kind::kUnit;
  }
  if (lexer.stopped_early()) return ExpressionShape::kNotExpression;
  return units ? ExpressionShape::kWithUnits : ExpressionShape::kPlain;
}

bool IsFioExpressionUnit(std::string_view word) {
  const Unit* unit = MatchUnit(word);
  return unit != nullptr && unit->word.size() == word.size();
}

}  // namespace stormark::controller::fio
