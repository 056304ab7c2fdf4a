#include "controller/workloads/postmark/postmark_params.h"

#include <charconv>
#include <vector>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/postmark/postmark_spec.h"
#include "controller/workloads/option_table.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StatusOr;
using common::StrCat;
using stormark::v1::PostmarkSpec;

using stormark::v1::PhaseSpec;

PostmarkSpec& P(PhaseSpec* spec) { return *spec->mutable_postmark(); }

Status RefuseConfig(std::string_view, std::string_view, OptionValue*) {
  return absl::InvalidArgumentError(
      "config names a PostMark script: give it as `config: FILE` in a plan phase (relative "
      "to the plan) or with --postmark-config FILE");
}

// PostMark 1.5's commands and defaults. The defaults are common/spec_check.h's constants,
// which the agent also fills a field left at 0 with (common::WithPostmarkDefaults).
const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "config",
       .type = OptionType::kString,
       .accepts = "a PostMark script",
       .help = "a PostMark script (set number 2000, run, ...) whose runs become phases: "
               "`config: FILE` in a plan phase (relative to the plan), or --postmark-config "
               "FILE; the phase's other keys override it",
       .parse = RefuseConfig,
       .store = [](const OptionValue&, PhaseSpec*) {}},
      {.name = "number",
       .type = OptionType::kCount,
       .unit = "files",
       .default_value = StrCat(common::kPostmarkNumber),
       .min = 1,
       .max = common::kMaxPostmarkFiles,
       .help = "set number: the files created before the transactions",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_number(static_cast<uint32_t>(v.number)); }},
      {.name = "size",
       .type = OptionType::kSizeRange,
       .default_value = StrCat(common::kPostmarkMinSize, ":", common::kPostmarkMaxSize),
       .min = 1,
       .max = common::kMaxPostmarkFileSize,
       .separator = ':',
       .help = "set size LOW HIGH: each file's size, picked between LOW and HIGH bytes (one "
               "value: a fixed size)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             P(s).set_min_size_bytes(v.number);
             P(s).set_max_size_bytes(v.high);
           }},
      {.name = "transactions",
       .type = OptionType::kCount,
       .default_value = StrCat(common::kPostmarkTransactions),
       .min = 1,
       .max = UINT32_MAX,
       .help = "set transactions: each a read or append, and a create or delete",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_transactions(static_cast<uint32_t>(v.number)); }},
      {.name = "subdirectories",
       .type = OptionType::kCount,
       .default_value = "0",
       .max = common::kMaxPostmarkSubdirectories,
       .help = "set subdirectories: spread the files over this many directories (0: none)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_subdirectories(static_cast<uint32_t>(v.number)); }},
      {.name = "read",
       .type = OptionType::kSize,
       .default_value = StrCat(common::kPostmarkBlockSize),
       .min = 1,
       .max = common::kMaxBlockSize,
       .help = "set read: the bytes of each read call",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_read_block_size(static_cast<uint32_t>(v.number)); }},
      {.name = "write",
       .type = OptionType::kSize,
       .default_value = StrCat(common::kPostmarkBlockSize),
       .min = 1,
       .max = common::kMaxBlockSize,
       .help = "set write: the bytes of each write call",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_write_block_size(static_cast<uint32_t>(v.number)); }},
      {.name = "buffering",
       .type = OptionType::kBool,
       .default_value = "true",
       .help = "set buffering: true goes through C stdio; false makes one system call per "
               "block (still page-cached)",
       .store = [](const OptionValue& v, PhaseSpec* s) { P(s).set_unbuffered(!v.flag); }},
      {.name = "bias_read",
       .type = OptionType::kInteger,
       .default_value = StrCat(common::kPostmarkBias),
       .min = -1,
       .max = 10,
       .help = "set bias read: the chance in tenths that a transaction reads rather than "
               "appends (-1: neither)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_bias_read(static_cast<int32_t>(v.integer)); }},
      {.name = "bias_create",
       .type = OptionType::kInteger,
       .default_value = StrCat(common::kPostmarkBias),
       .min = -1,
       .max = 10,
       .help = "set bias create: the chance in tenths that a transaction creates rather than "
               "deletes (-1: neither)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_bias_create(static_cast<int32_t>(v.integer)); }},
      {.name = "seed",
       .type = OptionType::kCount,
       .default_value = StrCat(common::kPostmarkSeed),
       .min = 1,
       .max = common::kMaxPostmarkSeed,
       .help = "set seed: the random seed",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_seed(static_cast<uint32_t>(v.number)); }},
      {.name = "report",
       .type = OptionType::kEnum,
       .default_value = "verbose",
       .choices = {{"verbose", PostmarkSpec::VERBOSE}, {"terse", PostmarkSpec::TERSE}},
       .help = "set report: PostMark's full report, or its one-line terse form",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { P(s).set_report(static_cast<PostmarkSpec::Report>(v.choice)); }},
  };
  return *options;
}

}  // namespace

const OptionTable& PostmarkOptions() {
  static const auto* const table = new OptionTable("postmark", Options());
  return *table;
}

Status SetPostmarkParameter(std::string_view key, std::string_view value, PostmarkSpec* spec) {
  PhaseSpec phase;
  phase.mutable_postmark()->Swap(spec);
  Status status = PostmarkOptions().Set(key, value, &phase);
  spec->Swap(phase.mutable_postmark());
  return status;
}

std::string DescribePostmark(const PostmarkSpec& raw) {
  const PostmarkSpec s = common::WithPostmarkDefaults(raw);
  std::string text = StrCat("postmark ", s.number(), " files of ");
  if (s.min_size_bytes() == s.max_size_bytes()) {
    text += StrCat(s.min_size_bytes(), " B");
  } else {
    text += StrCat(s.min_size_bytes(), "-", s.max_size_bytes(), " B");
  }
  text += StrCat(", ", s.transactions(), " transactions");
  if (s.subdirectories() > 1) text += StrCat(", ", s.subdirectories(), " subdirectories");
  if (s.read_block_size() != common::kPostmarkBlockSize ||
      s.write_block_size() != common::kPostmarkBlockSize) {
    text += StrCat(", read/write ", common::FormatSizeShort(s.read_block_size()), "/",
                   common::FormatSizeShort(s.write_block_size()));
  }
  if (s.unbuffered()) text += ", unbuffered";
  if (s.bias_read() != common::kPostmarkBias || s.bias_create() != common::kPostmarkBias) {
    text += StrCat(", bias read ", s.bias_read(), " create ", s.bias_create());
  }
  if (s.seed() != common::kPostmarkSeed) text += StrCat(", seed ", s.seed());
  return text;
}

}  // namespace stormark::controller
