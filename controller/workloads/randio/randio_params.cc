#include "controller/workloads/randio/randio_params.h"

#include <algorithm>
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

// A size, or N% of the target's device (fio's size=50%): `number` holds the bytes, or with
// `flag` the percentage.
Status ParseSizeOrPercent(std::string_view key, std::string_view text, OptionValue* out) {
  if (text.ends_with('%')) {
    const std::string digits(text.substr(0, text.size() - 1));
    char* end = nullptr;
    const unsigned long n = std::strtoul(digits.c_str(), &end, 10);
    if (digits.empty() || end != digits.c_str() + digits.size() || n < 1 || n > 100) {
      return absl::InvalidArgumentError(
          StrCat("bad ", key, " '", text, "': a percentage must be from 1% to 100%"));
    }
    out->flag = true;
    out->number = n;
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(out->number, common::ParseSizeOf(key, text));
  return absl::OkStatus();
}

// fio's bssplit: SIZE/PERCENT:SIZE/PERCENT..., then after a comma the writes' split. A share
// left empty (4k/:64k/) takes an equal part of what the others leave, as in fio. `fields`
// holds size and share pairs, the reads' first; `number` counts the reads' pairs.
Status ParseBssplit(std::string_view key, std::string_view text, OptionValue* out) {
  auto bad = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        StrCat("bad ", key, " '", text, "': ", why, " (as 4k/10:64k/90, writes after a comma)"));
  };
  const std::vector<std::string_view> directions = common::Split(text, ',');
  if (directions.empty() || directions.size() > 2) return bad("give one or two splits");
  out->fields.clear();
  for (size_t d = 0; d < directions.size(); ++d) {
    std::vector<uint64_t> sizes, shares;
    size_t unshared = 0;
    uint64_t total = 0;
    for (std::string_view entry : common::Split(directions[d], ':')) {
      const size_t slash = entry.find('/');
      auto size = common::ParseSize(entry.substr(0, slash));
      if (!size.ok() || *size == 0 || *size > common::kMaxBlockSize) {
        return bad(StrCat("'", entry, "' is not a block size"));
      }
      uint64_t share = 0;
      if (slash == std::string_view::npos || slash + 1 == entry.size()) {
        ++unshared;
        share = UINT64_MAX;
      } else {
        const std::string digits(entry.substr(slash + 1));
        char* end = nullptr;
        share = std::strtoull(digits.c_str(), &end, 10);
        if (end != digits.c_str() + digits.size() || share > 100) {
          return bad(StrCat("'", entry, "' has no share from 0 to 100"));
        }
        total += share;
      }
      sizes.push_back(*size);
      shares.push_back(share);
    }
    if (sizes.empty()) return bad("a split lists no size");
    if (total > 100 || (unshared == 0 && total != 100)) {
      return bad(StrCat("the shares add up to ", total, "%, not 100%"));
    }
    // Empty shares split the rest equally; what division leaves goes to the first of them.
    const uint64_t rest = 100 - total;
    bool first = true;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (shares[i] == UINT64_MAX) {
        shares[i] = rest / unshared + (first ? rest % unshared : 0);
        first = false;
      }
      out->fields.push_back(sizes[i]);
      out->fields.push_back(shares[i]);
    }
    if (d == 0) out->number = sizes.size();
  }
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
      {.name = "bssplit",
       .type = OptionType::kString,
       .accepts = "SIZE/PERCENT:SIZE/PERCENT..., then the writes' split after a comma",
       .help = "block sizes by share of operations, as fio's bssplit (4k/10:64k/90); replaces "
               "bs, and offsets are multiples of the smallest size (or of blockalign)",
       .parse = ParseBssplit,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             RandioSpec& r = R(s);
             r.clear_bssplit();
             r.clear_write_bssplit();
             uint64_t smallest = UINT64_MAX, largest = 0;
             for (size_t i = 0; i + 1 < v.fields.size(); i += 2) {
               auto* share = i / 2 < v.number ? r.add_bssplit() : r.add_write_bssplit();
               share->set_bs(static_cast<uint32_t>(v.fields[i]));
               share->set_percent(static_cast<uint32_t>(v.fields[i + 1]));
               smallest = std::min(smallest, v.fields[i]);
               largest = std::max(largest, v.fields[i]);
             }
             r.set_bs_min(static_cast<uint32_t>(smallest));
             r.set_bs_max(largest == smallest ? 0 : static_cast<uint32_t>(largest));
           }},
      {.name = "blockalign",
       .aliases = {"ba"},
       .type = OptionType::kSize,
       .max = common::kMaxBlockSize,
       .help = "random offsets are multiples of this (not given: the smallest block size)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_blockalign(static_cast<uint32_t>(v.number)); }},
      {.name = "norandommap",
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "random offsets drawn with replacement: some blocks twice in a pass, some not at "
               "all (by default each block once per pass, as fio's random map)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_norandommap(v.flag); }},
      {.name = "iodepth",
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "requests in flight per job (1 when not given); psync runs one at a time "
               "whatever the depth, as fio",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_iodepth(static_cast<uint32_t>(v.number)); }},
      {.name = "iodepth_batch_submit",
       .aliases = {"iodepth_batch"},
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "io_uring and libaio: the most requests handed to the kernel in one call (not "
               "given: 1, as fio)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_iodepth_batch_submit(static_cast<uint32_t>(v.number));
           }},
      {.name = "iodepth_batch_complete_min",
       .aliases = {"iodepth_batch_complete"},
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "io_uring and libaio: wait for at least this many completions at a time (not "
               "given: 1)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_iodepth_batch_complete_min(static_cast<uint32_t>(v.number));
           }},
      {.name = "iodepth_batch_complete_max",
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "io_uring and libaio: take at most this many completions at a time (not given: "
               "iodepth_batch_complete_min, at least 1, as fio)",
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_iodepth_batch_complete_max(static_cast<uint32_t>(v.number));
           }},
      {.name = "iodepth_low",
       .type = OptionType::kCount,
       .unit = "requests",
       .max = common::kMaxRandioIodepth,
       .help = "once the queue is full, submit again only when this few are in flight (not "
               "given: iodepth, refilling at once)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_iodepth_low(static_cast<uint32_t>(v.number)); }},
      {.name = "numjobs",
       .type = OptionType::kCount,
       .unit = "jobs",
       .max = common::kMaxRandioJobs,
       .help = "threads, each with its own queue (1 when not given)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_numjobs(static_cast<uint32_t>(v.number)); }},
      {.name = "size",
       .type = OptionType::kSize,
       .accepts = "a size, or N% of a block target's device",
       .help = "each job's region, and the bytes it moves unless time_based (not given: the "
               "whole device after offset, 1 GiB in a dir target); 50% is half the device",
       .parse = ParseSizeOrPercent,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_size_bytes(v.flag ? 0 : v.number);
             R(s).set_size_percent(v.flag ? static_cast<uint32_t>(v.number) : 0);
           }},
      {.name = "offset",
       .type = OptionType::kSize,
       .default_value = "0",
       .accepts = "a size, or N% of a block target's device",
       .help = "where the first job's region starts",
       .parse = ParseSizeOrPercent,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_offset_bytes(v.flag ? 0 : v.number);
             R(s).set_offset_percent(v.flag ? static_cast<uint32_t>(v.number) : 0);
           }},
      {.name = "offset_increment",
       .type = OptionType::kSize,
       .default_value = "0",
       .accepts = "a size, or N% of a block target's device",
       .help = "job j's region starts at offset + j x offset_increment",
       .parse = ParseSizeOrPercent,
       .store =
           [](const OptionValue& v, PhaseSpec* s) {
             R(s).set_offset_increment_bytes(v.flag ? 0 : v.number);
             R(s).set_offset_increment_percent(v.flag ? static_cast<uint32_t>(v.number) : 0);
           }},
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
      {.name = "startdelay",
       .type = OptionType::kDuration,
       .default_value = "0",
       .help = "each job starts this long after the phase, unmeasured",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_startdelay_nanos(v.integer); }},
      {.name = "engine",
       .aliases = {"ioengine"},
       .type = OptionType::kEnum,
       .choices = {{"psync", RandioSpec::PSYNC},
                   {"io_uring", RandioSpec::IO_URING},
                   {"libaio", RandioSpec::LIBAIO}},
       .help = "psync (pread/pwrite), io_uring (liburing) or libaio (Linux native AIO, truly "
               "asynchronous only with direct); not given, the target picks: psync on files "
               "and devices, the initiator's own queue on aoe, nbd and iscsi",
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
      {.name = "end_fsync",
       .aliases = {"fsync_on_close"},
       .type = OptionType::kBool,
       .default_value = "false",
       .help = "a job that wrote ends with one fsync, inside the timed region",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_end_fsync(v.flag); }},
      {.name = "thinktime",
       .type = OptionType::kDuration,
       .default_value = "0",
       .help = "after every thinktime_blocks operations, the job lets its queue drain and "
               "idles this long",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_thinktime_nanos(v.integer); }},
      {.name = "thinktime_spin",
       .type = OptionType::kDuration,
       .default_value = "0",
       .help = "the first part of each think time, spent spinning on the CPU rather than asleep",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_thinktime_spin_nanos(v.integer); }},
      {.name = "thinktime_blocks",
       .type = OptionType::kCount,
       .unit = "operations",
       .max = UINT32_MAX,
       .help = "operations between think times (not given: 1)",
       .store = [](const OptionValue& v,
                   PhaseSpec* s) { R(s).set_thinktime_blocks(static_cast<uint32_t>(v.number)); }},
      {.name = "rate_process",
       .type = OptionType::kEnum,
       .default_value = "linear",
       .choices = {{"linear", 0}, {"poisson", 1}},
       .help = "with a rate: evenly spaced operations (linear), or exponential gaps of the same "
               "mean (poisson)",
       .store = [](const OptionValue& v, PhaseSpec* s) { R(s).set_rate_poisson(v.choice == 1); }},
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

}  // namespace stormark::controller
