// Every option of fio 3.33 (`fio --cmdhelp=all`, and the libaio and io_uring engines'
// `--enghelp`), with what a job file's use of it does here. An option is
//   - kJob: part of the job file's shape, which the importer reads itself (name, stonewall,
//     numjobs, filename as a target name, ioengine, ...);
//   - kMapped: given to the randio workload's option of the same meaning (`randio`, its name
//     in controller/workloads/randio/randio_params.cc), after fio's units are read;
//   - kIgnored: accepted, and the phase gets `why` as a note (reporting-only options such as
//     group_reporting, whose purpose stormark serves by itself);
//   - kRefused: the job is refused with "FILE:LINE: OPTION: why".
// A name fio does not know is refused as such. docs/workloads/fio-options.md is this table, as
// `stormark help fio --markdown` prints it.
#ifndef STORMARK_CONTROLLER_FIO_FIO_OPTION_TABLE_H_
#define STORMARK_CONTROLLER_FIO_FIO_OPTION_TABLE_H_

#include <string_view>
#include <vector>

namespace stormark::controller::fio {

enum class FioOptionStatus { kJob, kMapped, kIgnored, kRefused };

struct FioOption {
  std::string_view name;
  FioOptionStatus status;
  // kMapped: the randio option that takes the value; else empty.
  std::string_view randio = {};
  // kJob: what the importer does with it; kIgnored: the note; kRefused: the reason.
  std::string_view why = {};
};

// Every option, in fio's order (`fio --cmdhelp=all`), aliases after the option they stand for.
const std::vector<FioOption>& FioOptions();

// The option named `name` (an alias included), or nullptr for a name fio 3.33 does not know.
const FioOption* FindFioOption(std::string_view name);

// "mapped", "ignored", ...: the status as the docs and `stormark fio --check` name it.
std::string_view FioOptionStatusName(FioOptionStatus status);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_OPTION_TABLE_H_
