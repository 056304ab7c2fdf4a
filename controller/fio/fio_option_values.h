// How a fio job's option values become randio's (fio_import.h reads the jobs): fio's units
// under the job's kb_base, its per-direction values, bssplit, and the trim patterns as the
// trim workload. Each refusal is one line, "FILE:LINE: OPTION=VALUE: why". Pure.
#ifndef STORMARK_CONTROLLER_FIO_FIO_OPTION_VALUES_H_
#define STORMARK_CONTROLLER_FIO_FIO_OPTION_VALUES_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "controller/fio/job_file.h"
#include "controller/workloads/option_table.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::controller::fio {

// "job.fio:4: ", and the option as the file spells it ("bs=4k", or "norandommap").
std::string Where(const JobOption& o);
std::string Spelled(const JobOption& o);
// INVALID_ARGUMENT: "job.fio:4: bs=4k: why".
common::Status Refuse(const JobOption& o, std::string_view why);
// fio's bool: the option alone is 1; a value must be 0 or 1.
common::StatusOr<bool> FioBool(const JobOption& o);
// The job's kb_base: 1024 (fio's default) or 1000.
common::StatusOr<int> KbBase(const FioJob& job);

// How one job's values are read: its kb_base, and where the warnings go.
struct Reading {
  int kb_base = 1024;
  std::vector<std::string>* warnings;
};

// The value randio's option `option` gets for the fio option line `o`.
common::StatusOr<std::string> RandioValue(const Option& option, const JobOption& o,
                                          const Reading& reading);
// Sets randio's option `randio` to `value` on `spec`; a refusal names the line `o`.
common::Status Set(std::string_view randio, const std::string& value, const JobOption& o,
                   stormark::v1::PhaseSpec* spec);
// fio's bssplit, and bs=READS,WRITES, as randio's bssplit.
common::Status SetBssplit(const JobOption& o, const Reading& reading,
                          stormark::v1::PhaseSpec* spec);
common::Status SetPerDirectionBs(const JobOption& o, const Reading& reading,
                                 stormark::v1::PhaseSpec* spec);
// rw=trim, randtrim, trimwrite or randtrimwrite (`o`) of `job`, whose other options made `r`:
// the trim workload's spec, or the refusal of what a trim job cannot honour.
common::StatusOr<stormark::v1::PhaseSpec> TrimPhase(const JobOption& o, const FioJob& job,
                                                    const stormark::v1::RandioSpec& r,
                                                    std::vector<std::string>* notes);

}  // namespace stormark::controller::fio

#endif  // STORMARK_CONTROLLER_FIO_FIO_OPTION_VALUES_H_
