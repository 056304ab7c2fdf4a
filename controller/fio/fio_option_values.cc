#include "controller/fio/fio_option_values.h"

#include <algorithm>
#include <string_view>

#include "common/strings.h"
#include "controller/fio/fio_units.h"
#include "controller/plan/plan.h"
#include "controller/workloads/randio/randio_params.h"
#include "controller/workloads/workload_kinds.h"

namespace stormark::controller::fio {

using common::Status;
using common::StatusOr;
using common::StrCat;

std::string Where(const JobOption& o) { return StrCat(o.file, ":", o.line, ": "); }

std::string Spelled(const JobOption& o) {
  return o.has_value ? StrCat(o.name, "=", o.value) : o.name;
}

Status Refuse(const JobOption& o, std::string_view why) {
  return absl::InvalidArgumentError(StrCat(Where(o), Spelled(o), ": ", why));
}

// fio's bool: the option alone is 1; a value must be 0 or 1.
StatusOr<bool> FioBool(const JobOption& o) {
  if (!o.has_value || o.value == "1") return true;
  if (o.value == "0") return false;
  return Refuse(o, "expected 0 or 1");
}

StatusOr<int> KbBase(const FioJob& job) {
  const JobOption* o = FindOption(job, "kb_base");
  if (o == nullptr) return 1024;
  if (o->value == "1024") return 1024;
  if (o->value == "1000") return 1000;
  return Refuse(*o, "expected 1024 or 1000");
}

namespace {

// The one value of an option that fio lets give reads, writes and trims apart ("4k,8k").
StatusOr<std::string> OneForAll(const JobOption& o) {
  const std::vector<std::string_view> parts = common::Split(o.value, ',');
  for (std::string_view part : parts) {
    if (part != parts.front()) {
      return Refuse(o, "different values for reads, writes and trims are not supported: give one");
    }
  }
  return parts.empty() ? std::string() : std::string(parts.front());
}

StatusOr<uint64_t> Bytes(const JobOption& o, std::string_view text, const Reading& reading) {
  auto size = ParseFioSize(text, reading.kb_base);
  if (!size.ok()) return Refuse(o, std::string(size.status().message()));
  if (size->ambiguous_unit) {
    reading.warnings->push_back(StrCat(
        Where(o), Spelled(o), ": fio reads this unit as ", size->value,
        " bytes (with kb_base=", reading.kb_base,
        ", KiB is 1000 and KB 1024; Ki is K): so does stormark; write the number of bytes to "
        "be sure"));
  }
  if (size->percent) {
    return Refuse(o, "a share of the target's size is not supported yet: give a size");
  }
  return size->value;
}

StatusOr<std::string> SizeRange(const JobOption& o, const Reading& reading) {
  ASSIGN_OR_RETURN(const std::string one, OneForAll(o));
  const size_t between = one.find_first_of("-:");
  ASSIGN_OR_RETURN(const uint64_t low, Bytes(o, one.substr(0, between), reading));
  if (between == std::string::npos) return std::to_string(low);
  ASSIGN_OR_RETURN(const uint64_t high, Bytes(o, one.substr(between + 1), reading));
  return StrCat(low, "-", high);
}

StatusOr<std::string> Pattern(const JobOption& o) {
  if (o.value.find(':') != std::string::npos) {
    return Refuse(o, "a stride or repeat count after ':' is not supported yet");
  }
  for (std::string_view known :
       {"read", "write", "randread", "randwrite", "rw", "readwrite", "randrw"}) {
    if (o.value == known) return o.value;
  }
  return Refuse(o, "not an I/O pattern fio knows");
}

}  // namespace

// The value randio's option `option` gets for the fio option line `o`.
StatusOr<std::string> RandioValue(const Option& option, const JobOption& o,
                                  const Reading& reading) {
  switch (option.type) {
    case OptionType::kSize:
    case OptionType::kCount:
    case OptionType::kPercent: {
      // fio reads counts with size units too (iodepth=1k is 1024).
      ASSIGN_OR_RETURN(const std::string one, OneForAll(o));
      if (one.ends_with('%') &&
          (option.name == "size" || option.name == "offset" || option.name == "offset_increment")) {
        // A share of the target's device, which the agent knows.
        auto share = ParseFioSize(one, reading.kb_base);
        if (!share.ok()) return Refuse(o, std::string(share.status().message()));
        return StrCat(share->value, "%");
      }
      ASSIGN_OR_RETURN(const uint64_t n, Bytes(o, one, reading));
      return std::to_string(n);
    }
    case OptionType::kSizeRange:
      return SizeRange(o, reading);
    case OptionType::kDuration: {
      // fio reads a bare number as seconds, except the think times' microseconds.
      const bool micros = option.name == "thinktime" || option.name == "thinktime_spin";
      if (option.name == "startdelay" && o.value.find('-') != std::string::npos) {
        return Refuse(o, "a random start delay (a range) is not supported: give one time");
      }
      auto nanos = ParseFioTimeNanos(o.value, micros ? "us" : "s");
      if (!nanos.ok()) return Refuse(o, std::string(nanos.status().message()));
      return StrCat(*nanos, "ns");
    }
    case OptionType::kBool: {
      ASSIGN_OR_RETURN(const bool flag, FioBool(o));
      return std::string(flag ? "true" : "false");
    }
    case OptionType::kEnum:
      if (option.name == "rw") return Pattern(o);
      return o.value;
    default:
      return o.value;
  }
}

Status Set(std::string_view randio, const std::string& value, const JobOption& o,
           stormark::v1::PhaseSpec* spec) {
  Status set = SetPhaseParameter(randio, value, spec);
  return set.ok() ? set : Refuse(o, std::string(set.message()));
}

// fio's bssplit (SIZE/PERCENT:..., writes after a comma, trims after another) in fio's units,
// given to randio's bssplit in bytes.
Status SetBssplit(const JobOption& o, const Reading& reading, stormark::v1::PhaseSpec* spec) {
  const std::vector<std::string_view> directions = common::Split(o.value, ',');
  if (directions.size() > 2 && !directions[2].empty()) {
    return Refuse(o, "a split for trims is not supported (trim jobs are not supported yet)");
  }
  std::string value;
  for (size_t d = 0; d < std::min<size_t>(2, directions.size()); ++d) {
    if (directions[d].empty()) continue;
    if (d == 1) value += ",";
    std::string split;
    for (std::string_view entry : common::Split(directions[d], ':')) {
      const size_t slash = entry.find('/');
      ASSIGN_OR_RETURN(const uint64_t bytes, Bytes(o, entry.substr(0, slash), reading));
      split += StrCat(split.empty() ? "" : ":", bytes,
                      slash == std::string_view::npos ? "/" : entry.substr(slash));
    }
    value += split;
  }
  return Set("bssplit", value, o, spec);
}

// bs=4k,64k: reads of one size, writes of another (a trim size after a second comma is refused).
Status SetPerDirectionBs(const JobOption& o, const Reading& reading,
                         stormark::v1::PhaseSpec* spec) {
  const std::vector<std::string_view> parts = common::Split(o.value, ',');
  if (parts.size() > 2 && !parts[2].empty()) {
    return Refuse(o, "a size for trims is not supported (trim jobs are not supported yet)");
  }
  if (parts[0].empty() || (parts.size() > 1 && parts[1].empty()) ||
      o.value.find_first_of("-:") != std::string::npos) {
    return Refuse(o, "give one size for reads and one for writes, as bs=4k,64k");
  }
  ASSIGN_OR_RETURN(const uint64_t reads, Bytes(o, parts[0], reading));
  const uint64_t writes = reads;
  if (parts.size() == 1) return Set("bs", std::to_string(reads), o, spec);
  ASSIGN_OR_RETURN(const uint64_t w, Bytes(o, parts[1], reading));
  if (w == writes) return Set("bs", std::to_string(reads), o, spec);
  return Set("bssplit", StrCat(reads, "/100,", w, "/100"), o, spec);
}

// rw=trim, randtrim, trimwrite or randtrimwrite (`o`): the trim workload over the region the
// job's options gave, each block once, in address order or at random, each discard followed
// by a write of its block for the *trimwrite patterns. What a trim job cannot honour is refused.
StatusOr<stormark::v1::PhaseSpec> TrimPhase(const JobOption& o, const FioJob& job,
                                            const stormark::v1::RandioSpec& r,
                                            std::vector<std::string>* notes) {
  auto refuse = [&](std::string_view option, std::string_view why) {
    return Refuse(o, StrCat("with ", option, ": ", why));
  };
  if (r.bssplit_size() > 0 || r.bs_max() != 0) {
    return refuse(
        "several block sizes (bssplit, bsrange or bs=READS,WRITES, in the job or a "
        "[global] above it)",
        "a trim job discards blocks of one bs");
  }
  if (r.time_based()) return refuse("time_based", "a trim job discards its region once");
  if (r.numjobs() > 1) return refuse("numjobs", "a trim job runs in one thread");
  if (r.verify()) return refuse("verify", "discarded blocks hold nothing to verify");
  if (r.size_percent() != 0 || r.offset_percent() != 0) {
    return refuse("a size or offset in percent", "give a trim job's region in bytes");
  }
  if (r.rate_iops() != 0 || r.rate_bytes() != 0 || r.thinktime_nanos() != 0) {
    return refuse("a rate or thinktime", "a trim job discards as fast as the device takes it");
  }
  if (r.iodepth() > 1) {
    notes->push_back(StrCat(Where(o), "job '", job.name, "': iodepth=", r.iodepth(),
                            ": discards go one at a time, as fio's libaio and io_uring engines "
                            "issue them"));
  }
  const bool then_write = o.value == "trimwrite" || o.value == "randtrimwrite";
  if (then_write && r.direct()) {
    notes->push_back(StrCat(Where(o), "job '", job.name,
                            "': direct=1: the writes after the discards go through the page "
                            "cache, and are flushed (fdatasync) before the clock stops"));
  }
  stormark::v1::PhaseSpec spec;
  FindWorkloadKind("trim")->init(&spec);
  stormark::v1::TrimSpec& t = *spec.mutable_trim();
  t.set_size_bytes(r.size_bytes());
  t.set_bs(r.bs_min());
  t.set_offset_bytes(r.offset_bytes());
  t.set_random(o.value == "randtrim" || o.value == "randtrimwrite");
  t.set_then_write(then_write);
  t.set_seed(r.seed());
  return spec;
}

}  // namespace stormark::controller::fio
