// A workload's options, declared once, after fio's `fio_option`: each has its name, aliases,
// type, unit, default, range and help, and a binding that stores its parsed value in the
// phase's spec. The table alone drives plan keys, `--set` and sweep axes (SetPhaseParameter
// asks Find), the defaults a phase starts from (Init), the messages for bad keys and values,
// `stormark help workload NAME`, and the generated docs/workloads/NAME-options.md.
//
// Each workload declares its table in its own *_params.cc; workload_kinds.cc points at it.
// Tables are immutable after construction and safe to share between threads.
#ifndef STORMARK_CONTROLLER_WORKLOADS_OPTION_TABLE_H_
#define STORMARK_CONTROLLER_WORKLOADS_OPTION_TABLE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller {

// How an option's text is read. The generic parser checks the type and the option's range;
// an option with its own `parse` reads odd forms (zipf:1.2, bonnie++'s NUM:MAX:MIN:DIRS).
enum class OptionType {
  kSize,       // bytes, with k/M/G/T suffixes (binary): 4k, 1G
  kDuration,   // 90s, 500ms, 10m; stored as nanoseconds
  kCount,      // a whole number >= 0
  kInteger,    // a whole number, possibly negative
  kPercent,    // a whole number from 0 to 100
  kBool,       // true/false, yes/no, on/off, 1/0
  kEnum,       // one of `choices`
  kString,     // any non-blank text
  kSizeRange,  // a size, or LOW<separator>HIGH sizes (bs 4k-64k, postmark size 1000:9000)
};

// "size", "duration", ...: the type as help and docs name it.
std::string_view OptionTypeName(OptionType type);

// One accepted word of an enum option, and the value the binding stores for it.
struct OptionChoice {
  std::string_view name;
  int value;
};

// An option's text, parsed by its type.
struct OptionValue {
  uint64_t number = 0;           // kSize, kCount, kPercent; kSizeRange: the low end
  uint64_t high = 0;             // kSizeRange: the high end (equal to `number` for one size)
  int64_t integer = 0;           // kInteger; kDuration: nanoseconds
  bool flag = false;             // kBool
  int choice = 0;                // kEnum: the chosen OptionChoice's value
  double real = 0;               // for an option's own parse (zipf's theta)
  std::vector<uint64_t> fields;  // for an option's own parse (bonnie's NUM:MAX:MIN:DIRS)
  std::string text;              // kString, as given
};

struct Option {
  // The name in plans, `--set` and sweeps, and in messages.
  std::string_view name = {};
  // Other names that mean the same option (fio's: ioengine for engine, randseed for seed).
  std::vector<std::string_view> aliases = {};
  OptionType type = OptionType::kString;
  // What a number counts, for help: "writes", "jobs", "x1024 files"; "" for sizes, durations.
  std::string_view unit = {};
  // The value a phase starts with, as a plan writes it ("4k", "60s", "randread"); Init parses
  // and stores it. "" leaves the field unset: the agent, the target or the workload decides,
  // as the help says. A string, so that a table can spell out a constant the agent shares.
  std::string default_value = {};
  // The inclusive range of kSize, kCount, kInteger and kDuration (nanoseconds) values, and of
  // each end of a kSizeRange.
  int64_t min = 0;
  int64_t max = INT64_MAX;
  // kEnum: the accepted words. Several words may store the same value (readwrite, rw).
  std::vector<OptionChoice> choices = {};
  // kSizeRange: between the low and the high size.
  char separator = '-';
  // The accepted values in words, for help and errors when the type alone does not say
  // ("random or zipf:THETA"); "" derives them from the type, range and choices.
  std::string_view accepts = {};
  // One or two sentences for `stormark help workload` and the docs.
  std::string_view help = {};
  // A plan phase must give it (stream's rw).
  bool required = false;
  // Reads the text instead of the generic parser; INVALID_ARGUMENT names `key` (the name as
  // the user wrote it) and the value. nullptr: the generic parser.
  common::Status (*parse)(std::string_view key, std::string_view text, OptionValue* out) = nullptr;
  // Stores a parsed value in the workload's message of `spec`.
  void (*store)(const OptionValue& value, stormark::v1::PhaseSpec* spec) = nullptr;
};

// One workload's options.
class OptionTable {
 public:
  OptionTable(std::string_view workload, std::vector<Option> options);

  std::string_view workload() const { return workload_; }
  const std::vector<Option>& options() const { return options_; }

  // The option named or aliased `key`, or nullptr.
  const Option* Find(std::string_view key) const;

  // Parses `value` for the option `key` names and stores it in `spec`, which must hold this
  // workload. INVALID_ARGUMENT "unknown randio parameter 'x' (known: ...)" for a key the table
  // lacks, or "bad KEY 'VALUE': what is accepted". `spec` is unchanged on error.
  common::Status Set(std::string_view key, std::string_view value,
                     stormark::v1::PhaseSpec* spec) const;

  // Stores every option's default in `spec` (its workload message already selected).
  void Init(stormark::v1::PhaseSpec* spec) const;

  // "rw (readwrite), bs (bsrange), ...": every option and its aliases, for messages.
  std::string Names() const;

  // The accepted values of `option` in words: "a size from 512 to 64M", "psync or io_uring".
  static std::string Accepts(const Option& option);

  // Every option with its aliases, type, default, accepted values and help, for a terminal.
  std::string HelpText() const;

  // The same as a Markdown page, docs/workloads/NAME-options.md.
  std::string Markdown() const;

 private:
  common::Status Parse(const Option& option, std::string_view key, std::string_view text,
                       OptionValue* out) const;

  std::string_view workload_;
  std::vector<Option> options_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_WORKLOADS_OPTION_TABLE_H_
