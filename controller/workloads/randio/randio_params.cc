#include "controller/workloads/randio/randio_params.h"

#include <cstdlib>

#include "common/spec_check.h"
#include "common/strings.h"
#include "common/units.h"
#include "common/workloads/randio/randio_spec.h"
#include "controller/workloads/option_table.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;
using stormark::v1::PhaseSpec;
using stormark::v1::RandioSpec;

RandioSpec& R(PhaseSpec* spec) { return *spec->mutable_randio(); }

// random | zipf:THETA.
Status ParseDistribution(std::string_view key, std::string_view text, OptionValue* out) {
  if (text == "random") {
    out->choice = RandioSpec::UNIFORM;
    return absl::OkStatus();
  }
  if (text.starts_with("zipf:")) {
    const std::string theta(text.substr(5));
    char* end = nullptr;
    const double t = std::strtod(theta.c_str(), &end);
    if (!theta.empty() && end == theta.c_str() + theta.size()) {
      out->choice = RandioSpec::ZIPF;
      out->real = t;
      return absl::OkStatus();
    }
  }
  return absl::InvalidArgumentError(
      StrCat("bad ", key, " '", text, "': use random or zipf:THETA (as zipf:1.2)"));
}

// A bool, or crc32c: fio's name for the checksum verify uses.
Status ParseVerify(std::string_view key, std::string_view text, OptionValue* out) {
  if (text == "crc32c") {
    out->flag = true;
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(out->flag, common::ParseBool(key, text));
  return absl::OkStatus();
}

// fio's names and meanings. Defaults left empty stay unset in the spec: the agent or the
// target decides, as the help says.
const std::vector<Option>& Options() {
  static const auto* const options = new std::vector<Option>{
      {.name = "rw",
       .aliases = {"readwrite"},
       .type = OptionType::kEnum,
       .default_value = "randread",
       .choices = {{"read", RandioSpec::READ},
                   {"write", RandioSpec::WRITE},
                   {"randread", RandioSpec::RANDREAD},
                   {"randwrite", RandioSpec::RANDWRITE},
                   {"randrw", RandioSpec::RANDRW},
                   {"readwrite", RandioSpec::READWRITE},
                   {"rw", RandioSpec::READWRITE}},
       .help = "the pattern: sequential (read, write) or random (randread, randwrite) I/O, or "
               "both mixed (randrw; readwrite or rw: sequential)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_rw(static_cast<RandioSpec::Pattern>(v.choice)); }},
      {.name = "rwmixread",
       .type = OptionType::kPercent,
       .help = "mixed patterns: the percentage of reads (50 when not given)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_rwmixread(static_cast<uint32_t>(v.number)); }},
      {.name = "rwmixwrite",
       .type = OptionType::kPercent,
       .help = "mixed patterns: the percentage of writes, as fio's (sets rwmixread to 100 - N)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_rwmixread(static_cast<uint32_t>(100 - v.number)); }},
      {.name = "bs",
       .aliases = {"bsrange"},
       .type = OptionType::kSizeRange,
       .default_value = "4k",
       .min = 1,
       .max = common::kMaxBlockSize,
       .help = "the block size, or a range 4k-64k: each I/O a random multiple of the smaller "
               "size (fio's bsrange)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_bs_min(static_cast<uint32_t>(v.number));
             R(s).set_bs_max(v.high == v.number ? 0 : static_cast<uint32_t>(v.high));
           }},
      {.name = "iodepth",
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "requests in flight per job (1 when not given); psync runs one at a time "
               "whatever the depth, as fio",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_iodepth(static_cast<uint32_t>(v.number)); }},
      {.name = "numjobs",
       .type = OptionType::kCount,
       .unit = "jobs",
       .max = common::kMaxRandioJobs,
       .help = "threads, each with its own queue (1 when not given)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_numjobs(static_cast<uint32_t>(v.number)); }},
      {.name = "size",
       .type = OptionType::kSize,
       .help = "each job's region, and the bytes it moves unless time_based (not given: the "
               "whole device after offset, 1 GiB in a dir target)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_size_bytes(v.number); }},
      {.name = "offset",
       .type = OptionType::kSize,
       .default_value = "0",
       .help = "where the first job's region starts",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_offset_bytes(v.number); }},
      {.name = "offset_increment",
       .type = OptionType::kSize,
       .default_value = "0",
       .help = "job j's region starts at offset + j x offset_increment",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_offset_increment_bytes(v.number); }},
      {.name = "runtime",
       .type = OptionType::kDuration,
       .default_value = "60s",
       .help = "stop after this long: a cap fio does not have, so that 4k random reads over a "
               "whole disk end in a minute (0 removes it)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_runtime_nanos(v.integer); }},
      {.name = "time_based",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "repeat over the region until runtime ends",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_time_based(v.flag); }},
      {.name = "ramp_time",
       .type = OptionType::kDuration,
       .default_value = "0",
       .help = "run this long first, unmeasured",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_ramp_time_nanos(v.integer); }},
      {.name = "engine",
       .aliases = {"ioengine"},
       .type = OptionType::kEnum,
       .choices = {{"psync", RandioSpec::PSYNC}, {"io_uring", RandioSpec::IO_URING}},
       .help = "psync (pread/pwrite) or io_uring (liburing); not given, the target picks: "
               "psync on files and devices, the initiator's own queue on aoe, nbd and iscsi",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_engine(static_cast<RandioSpec::Engine>(v.choice)); }},
      {.name = "direct",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "O_DIRECT; bs and offsets must then be multiples of the device's logical block "
               "size (4 KiB for files)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_direct(v.flag); }},
      {.name = "fsync",
       .type = OptionType::kCount,
       .unit = "writes",
       .default_value = "0",
       .max = UINT32_MAX,
       .help = "fsync after every N writes of a job (0: never); its latency is its own row",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_fsync(static_cast<uint32_t>(v.number)); }},
      {.name = "fdatasync",
       .type = OptionType::kCount,
       .unit = "writes",
       .default_value = "0",
       .max = UINT32_MAX,
       .help = "fdatasync after every N writes of a job (0: never)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_fdatasync(static_cast<uint32_t>(v.number)); }},
      {.name = "rate_iops",
       .type = OptionType::kCount,
       .unit = "IOPS per job",
       .default_value = "0",
       .help = "the most operations per second of each job (0: no limit)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_rate_iops(v.number); }},
      {.name = "rate",
       .type = OptionType::kSize,
       .unit = "bytes/s per job",
       .default_value = "0",
       .help = "the most bytes per second of each job (0: no limit)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_rate_bytes(v.number); }},
      {.name = "random_distribution",
       .type = OptionType::kEnum,
       .accepts = "random or zipf:THETA",
       .help = "random (uniform, the default; with one bs, every block once per pass, as fio's "
               "random map) or zipf:THETA (hot blocks scattered over the region)",
       .parse = ParseDistribution,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_random_distribution(static_cast<RandioSpec::Distribution>(v.choice));
             R(s).set_zipf_theta(v.real);
           }},
      {.name = "verify",
       .type = OptionType::kBool,
       .default_value = "false",
       .accepts = "true, false or crc32c",
       .help = "write checksummed data and check it on reading (crc32c: fio's name for it)",
       .parse = ParseVerify,
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_verify(v.flag); }},
      {.name = "seed",
       .aliases = {"randseed"},
       .type = OptionType::kCount,
       .help = "the offsets' and data's seed; not given, the agent picks one and the result "
               "reports it",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_seed(v.number); }},
  };
  return *options;
}

}  // namespace

const OptionTable& RandioOptions() {
  static const auto* const table = new OptionTable("randio", Options());
  return *table;
}

Status SetRandioParameter(std::string_view key, std::string_view value, RandioSpec* spec) {
  PhaseSpec phase;
  phase.mutable_randio()->Swap(spec);
  Status status = RandioOptions().Set(key, value, &phase);
  spec->Swap(phase.mutable_randio());
  return status;
}

std::string DescribeRandio(const RandioSpec& s) {
  std::string name = RandioSpec::Pattern_Name(s.rw());
  std::string text =
      StrCat("randio ", common::ToLower(name), " bs ", common::FormatBytes(s.bs_min()));
  if (s.bs_max() != 0) text += StrCat("-", common::FormatBytes(s.bs_max()));
  if (s.has_rwmixread()) text += StrCat(", ", s.rwmixread(), "% reads");
  if (s.iodepth() > 1) text += StrCat(", iodepth ", s.iodepth());
  if (s.numjobs() > 1) text += StrCat(", ", s.numjobs(), " jobs");
  // Unset, each host's target picks: psync on files and raw devices, the initiator's own
  // queue on aoe, nbd and iscsi targets. The row's resolved engine says which ran.
  if (s.engine() == RandioSpec::IO_URING) text += ", io_uring";
  if (s.engine() == RandioSpec::PSYNC) text += ", psync";
  if (s.direct()) text += ", direct";
  if (s.size_bytes() != 0) text += StrCat(", ", common::FormatBytes(s.size_bytes()));
  if (s.offset_bytes() != 0) text += StrCat(" at ", common::FormatBytes(s.offset_bytes()));
  if (s.runtime_nanos() != 0) {
    text += StrCat(", ", common::FormatDurationNanos(static_cast<double>(s.runtime_nanos())),
                   s.time_based() ? " time_based" : " max");
  }
  if (s.ramp_time_nanos() != 0) {
    text += StrCat(" after ", common::FormatDurationNanos(static_cast<double>(s.ramp_time_nanos())),
                   " ramp");
  }
  if (s.fsync() != 0) text += StrCat(", fsync every ", s.fsync());
  if (s.fdatasync() != 0) text += StrCat(", fdatasync every ", s.fdatasync());
  if (s.rate_iops() != 0) text += StrCat(", max ", s.rate_iops(), " IOPS per job");
  if (s.rate_bytes() != 0) {
    text += StrCat(", max ", common::FormatRate(static_cast<double>(s.rate_bytes())), " per job");
  }
  if (s.random_distribution() == RandioSpec::ZIPF) text += StrCat(", zipf:", s.zipf_theta());
  if (s.verify()) text += ", verify";
  return text;
}

}  // namespace stormark::controller
