#include "controller/fio/job_values.h"

#include <unistd.h>

#include <cstdint>
#include <limits>

#include "common/strings.h"
#include "controller/fio/bc_expression.h"
#include "controller/fio/fio_expression.h"

namespace stormark::controller::fio {
namespace {

using common::StatusOr;
using common::StrCat;

// fio_option_dup_subs: each "${NAME}" up to the first '}' after it.
StatusOr<std::string> SubstituteVariables(std::string_view line, const JobFileFacts& facts,
                                          bool unset_is_empty) {
  std::string out;
  size_t i = 0;
  while (i < line.size()) {
    const size_t close = line.compare(i, 2, "${") == 0 ? line.find('}', i + 2) : std::string::npos;
    if (close == std::string::npos) {
      out.push_back(line[i++]);
      continue;
    }
    const std::string name(line.substr(i + 2, close - i - 2));
    auto it = facts.env.find(name);
    if (it != facts.env.end() && !name.empty()) {
      out += it->second;
    } else if (!unset_is_empty) {
      if (name.starts_with("STORMARK_LABEL_")) {
        return absl::InvalidArgumentError(
            StrCat("${", name,
                   "} is not set: the host has no such label (give every host it "
                   "in the plan's hosts:, as labels: {",
                   common::ToLower(name.substr(15)), ": VALUE})"));
      }
      return absl::InvalidArgumentError(
          name.empty() ? std::string("${} names no variable (fio would substitute nothing)")
                       : StrCat("${", name, "} is not set (fio would substitute an empty string)"));
    }
    i = close + 1;
    if (out.size() > kMaxJobLineChars) break;
  }
  return out;
}

// fio_keyword_replace: every occurrence, keyword by keyword, in fio's order.
bool ReplaceKeywords(const JobFileFacts& facts, std::string* line) {
  const std::pair<std::string_view, std::string> keywords[] = {
      {"$pagesize", std::to_string(facts.pagesize)},
      {"$mb_memory", std::to_string(facts.mb_memory)},
      {"$ncpus", std::to_string(facts.ncpus)},
  };
  bool replaced = false;
  for (const auto& [word, replacement] : keywords) {
    for (size_t at = line->find(word); at != std::string::npos; at = line->find(word, at)) {
      line->replace(at, word.size(), replacement);
      at += replacement.size();
      replaced = true;
    }
  }
  return replaced;
}

// The ')' that closes the '(' at `text[0]`, or npos.
size_t MatchingParen(std::string_view text) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

// Whether fio reads "N UNIT" as it reads "(X)UNIT" when X evaluates to N (see the header).
bool PlainUnitReadsTheSame(std::string_view unit, int kb_base) {
  const std::string u = common::ToLower(unit);
  if (u == "s" || u == "h" || u == "d") return true;
  if (u == "ms" || u == "us" || u == "t" || u == "tb" || u == "pib") return false;
  return kb_base == 1024;
}

}  // namespace

JobFileFacts MachineJobFileFacts() {
  JobFileFacts facts;
  const long cpus = sysconf(_SC_NPROCESSORS_CONF);
  facts.ncpus = cpus >= 1 ? static_cast<int>(cpus) : 1;
  const long page = sysconf(_SC_PAGESIZE);
  const long pages = sysconf(_SC_PHYS_PAGES);
  if (page > 0) facts.pagesize = static_cast<uint64_t>(page);
  if (page > 0 && pages > 0) {
    facts.mb_memory = static_cast<uint64_t>(page) * static_cast<uint64_t>(pages) / (1024 * 1024);
  }
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view pair(*entry);
    const size_t eq = pair.find('=');
    if (eq != std::string_view::npos) {
      facts.env.emplace(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
    }
  }
  return facts;
}

StatusOr<std::string> SubstituteLine(std::string_view line, const JobFileFacts& facts,
                                     bool unset_is_empty) {
  ASSIGN_OR_RETURN(std::string out, SubstituteVariables(line, facts, unset_is_empty));
  const bool replaced = ReplaceKeywords(facts, &out);
  if (out.size() > kMaxJobLineChars) {
    return absl::InvalidArgumentError(StrCat("after substitution the line is longer than fio's ",
                                             kMaxJobLineChars, " characters"));
  }
  const size_t eq = out.find('=');
  // bc_calc: no math, a quote, no '=', or a line too long for its buffer: fio skips bc.
  if (!replaced || out.find_first_of("+-*/") == std::string::npos ||
      out.find('\'') != std::string::npos || eq == std::string::npos || out.size() >= 128 ||
      out.size() - eq - 1 > 100) {
    return out;
  }
  auto result = EvaluateBcExpression(std::string_view(out).substr(eq + 1));
  if (!result.ok()) {
    return absl::InvalidArgumentError(
        StrCat("'", out, "': fio hands a value with $ncpus, $mb_memory or $pagesize and",
               " + - * / to bc, which cannot compute it: ", result.status().message()));
  }
  return StrCat(std::string_view(out).substr(0, eq + 1), *result);
}

StatusOr<std::string> EvaluateValue(std::string_view value, int kb_base) {
  const ExpressionShape shape = ClassifyFioExpression(value);
  if (shape == ExpressionShape::kNotExpression) return std::string(value);
  if (value.find('-') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        StrCat("bad expression '", value,
               "': fio splits a numeric value at '-' as a range before it evaluates it"));
  }
  if (shape == ExpressionShape::kPlain) {
    ASSIGN_OR_RETURN(FioExpressionValue v, EvaluateFioExpression(value, FioUnits::kNone));
    if (v.value > std::numeric_limits<int32_t>::max() ||
        v.value < std::numeric_limits<int32_t>::min()) {
      return absl::InvalidArgumentError(
          StrCat("bad expression '", value, "': fio holds a unitless result in a 32-bit int,",
                 " and ", v.value, " does not fit; put a unit after the ')': (8*1024)m"));
    }
    return std::to_string(v.value);
  }
  const size_t close = MatchingParen(value);
  if (close == std::string_view::npos) return std::string(value);
  const std::string_view inner = value.substr(0, close + 1);
  const std::string_view unit = common::Trim(value.substr(close + 1));
  if (ClassifyFioExpression(inner) != ExpressionShape::kPlain || !IsFioExpressionUnit(unit) ||
      !PlainUnitReadsTheSame(unit, kb_base)) {
    return std::string(value);
  }
  ASSIGN_OR_RETURN(FioExpressionValue v, EvaluateFioExpression(inner, FioUnits::kNone));
  return StrCat(v.value, unit);
}

}  // namespace stormark::controller::fio
