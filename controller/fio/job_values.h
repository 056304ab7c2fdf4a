// The values fio sees, made from the text of a job file's option lines. fio rewrites each
// option line before it parses the option (options.c, fio_options_parse), in this order:
//  1. ${NAME} becomes environment variable NAME, anywhere in the line (fio_option_dup_subs).
//  2. $pagesize, $mb_memory and $ncpus become the machine's numbers, anywhere in the line,
//     even inside a word (fio_keyword_replace).
//  3. If step 2 replaced one and the line holds + - * or / and no quote, fio pipes the value
//     after '=' to bc and takes bc's answer (bc_calc). So size=8*$mb_memory is 8 times the
//     megabytes, in bytes; and (2*$mb_memory)m or filename=/tmp/$ncpus/f fail in fio, since
//     bc cannot read them (and fio fails outright where bc is not installed).
//  4. When fio parses a numeric option, a value beginning with '(' goes to its expression
//     grammar (see fio_expression.h).
// SubstituteLine does steps 1 to 3; EvaluateValue does what can be done of step 4 without
// knowing the option's type. Errors carry no file or line; the reader adds them.
#ifndef STORMARK_CONTROLLER_FIO_JOB_VALUES_H_
#define STORMARK_CONTROLLER_FIO_JOB_VALUES_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::controller::fio {

// fio reads a job file line into OPT_LEN_MAX (8192) bytes, the terminating NUL included.
inline constexpr size_t kMaxJobLineChars = 8191;

// What a job file's keywords and ${NAME}s stand for: given explicitly, so that tests and a
// controller reading a file for another machine can say which machine.
struct JobFileFacts {
  int ncpus = 1;                           // $ncpus: fio's cpus_configured(), _SC_NPROCESSORS_CONF
  uint64_t mb_memory = 0;                  // $mb_memory: physical memory in MiB
  uint64_t pagesize = 4096;                // $pagesize
  std::map<std::string, std::string> env;  // ${NAME}
};

// The facts of this machine and process, from sysconf(3) and environ.
JobFileFacts MachineJobFileFacts();

// Steps 1 to 3 for one option line ("key=value" or "flag"), its comment already removed.
// fio substitutes an empty string for an unset variable or for ${}; that happens only with
// `unset_is_empty`, and is otherwise an error ("${DIR} is not set ..."), because
// filename=${DIR}/f turning into /f is the accident fio's behaviour invites. A result longer
// than fio's kMaxJobLineChars is an error.
common::StatusOr<std::string> SubstituteLine(std::string_view line, const JobFileFacts& facts,
                                             bool unset_is_empty);

// Step 4 where it does not depend on the option's type: `value` with an expression replaced
// by its result, or unchanged.
// - Not an expression (4k, "(a test)", a list "(1),(2)"): unchanged.
// - Numbers and operators only: the result, "(2*1024)" -> "2048". It must fit the int that
//   fio keeps a unitless result in.
// - "(X)UNIT" with no unit inside X: "N" followed by UNIT, where fio reads "N UNIT" as it
//   reads "(X)UNIT": for s, h and d always; for size units and m only under kb_base=1024,
//   since fio's expression units ignore kb_base; never for ms, us (fio truncates (1500)ms to
//   whole seconds for runtime), t, tb or pib, whose expression values differ in fio.
//   "(2*1024)m" -> "2048m". Otherwise unchanged, for ParseFioSize or ParseFioTimeNanos.
// - Other units inside ("(1m+30s)"): unchanged; what they mean depends on the option.
// Errors: a malformed expression, division by zero, overflow, and any '-', which fio takes
// as a range separator before it evaluates anything.
common::StatusOr<std::string> EvaluateValue(std::string_view value, int kb_base);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_JOB_VALUES_H_
