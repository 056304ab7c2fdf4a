#include "controller/workloads/randio_params.h"

#include <cstdlib>

#include "common/strings.h"
#include "common/units.h"

namespace stormark::controller {
namespace {

using common::Status;
using common::StrCat;
using stormark::v1::RandioSpec;

Status Bad(std::string_view key, std::string_view value, std::string_view what) {
  return absl::InvalidArgumentError(StrCat("bad ", key, " '", value, "': ", what));
}

common::StatusOr<uint32_t> Count32(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(const uint64_t n, common::ParseCount(key, value));
  if (n > UINT32_MAX) return Bad(key, value, "too large");
  return static_cast<uint32_t>(n);
}

common::StatusOr<uint32_t> Size32(std::string_view key, std::string_view value) {
  ASSIGN_OR_RETURN(const uint64_t n, common::ParseSizeOf(key, value));
  if (n > UINT32_MAX) return Bad(key, value, "too large");
  return static_cast<uint32_t>(n);
}

Status SetPattern(std::string_view value, RandioSpec* spec) {
  static const std::pair<std::string_view, RandioSpec::Pattern> kPatterns[] = {
      {"read", RandioSpec::READ},           {"write", RandioSpec::WRITE},
      {"randread", RandioSpec::RANDREAD},   {"randwrite", RandioSpec::RANDWRITE},
      {"randrw", RandioSpec::RANDRW},       {"readwrite", RandioSpec::READWRITE},
      {"rw", RandioSpec::READWRITE},
  };
  for (const auto& [name, pattern] : kPatterns) {
    if (value == name) {
      spec->set_rw(pattern);
      return absl::OkStatus();
    }
  }
  return Bad("rw", value, "use read, write, randread, randwrite, randrw or readwrite");
}

Status SetDistribution(std::string_view value, RandioSpec* spec) {
  if (value == "random") {
    spec->set_random_distribution(RandioSpec::UNIFORM);
    spec->set_zipf_theta(0);
    return absl::OkStatus();
  }
  if (value.starts_with("zipf:")) {
    const std::string theta(value.substr(5));
    char* end = nullptr;
    const double t = std::strtod(theta.c_str(), &end);
    if (!theta.empty() && end == theta.c_str() + theta.size()) {
      spec->set_random_distribution(RandioSpec::ZIPF);
      spec->set_zipf_theta(t);
      return absl::OkStatus();
    }
  }
  return Bad("random_distribution", value, "use random or zipf:THETA (as zipf:1.2)");
}

}  // namespace

void InitRandio(RandioSpec* spec) {
  spec->set_rw(RandioSpec::RANDREAD);
  spec->set_bs_min(4096);
  spec->set_runtime_nanos(kDefaultRandioRuntimeNanos);
}

Status SetRandioParameter(std::string_view key, std::string_view value, RandioSpec* spec) {
  if (key == "rw" || key == "readwrite") return SetPattern(value, spec);
  if (key == "bs" || key == "bsrange") {
    const size_t dash = value.find('-');
    ASSIGN_OR_RETURN(const uint32_t low, Size32("bs", value.substr(0, dash)));
    uint32_t high = 0;
    if (dash != std::string_view::npos) {
      ASSIGN_OR_RETURN(high, Size32("bs", value.substr(dash + 1)));
    }
    spec->set_bs_min(low);
    spec->set_bs_max(high == low ? 0 : high);
    return absl::OkStatus();
  }
  if (key == "rwmixread" || key == "rwmixwrite") {
    ASSIGN_OR_RETURN(const uint32_t percent, Count32(key, value));
    if (percent > 100) return Bad(key, value, "a percentage, 0 to 100");
    spec->set_rwmixread(key == "rwmixread" ? percent : 100 - percent);
    return absl::OkStatus();
  }
  if (key == "iodepth") {
    ASSIGN_OR_RETURN(const uint32_t n, Count32(key, value));
    spec->set_iodepth(n);
    return absl::OkStatus();
  }
  if (key == "numjobs") {
    ASSIGN_OR_RETURN(const uint32_t n, Count32(key, value));
    spec->set_numjobs(n);
    return absl::OkStatus();
  }
  if (key == "size" || key == "offset" || key == "offset_increment" || key == "rate") {
    ASSIGN_OR_RETURN(const uint64_t n, common::ParseSizeOf(key, value));
    if (key == "size") spec->set_size_bytes(n);
    if (key == "offset") spec->set_offset_bytes(n);
    if (key == "offset_increment") spec->set_offset_increment_bytes(n);
    if (key == "rate") spec->set_rate_bytes(n);
    return absl::OkStatus();
  }
  if (key == "runtime" || key == "ramp_time") {
    ASSIGN_OR_RETURN(const int64_t nanos, common::ParseDurationOf(key, value));
    if (key == "runtime") spec->set_runtime_nanos(nanos);
    if (key == "ramp_time") spec->set_ramp_time_nanos(nanos);
    return absl::OkStatus();
  }
  if (key == "time_based" || key == "direct") {
    ASSIGN_OR_RETURN(const bool on, common::ParseBool(key, value));
    if (key == "time_based") spec->set_time_based(on);
    if (key == "direct") spec->set_direct(on);
    return absl::OkStatus();
  }
  if (key == "engine" || key == "ioengine") {
    if (value == "psync") {
      spec->set_engine(RandioSpec::PSYNC);
    } else if (value == "io_uring") {
      spec->set_engine(RandioSpec::IO_URING);
    } else {
      return Bad(key, value, "use psync or io_uring");
    }
    return absl::OkStatus();
  }
  if (key == "fsync" || key == "fdatasync") {
    ASSIGN_OR_RETURN(const uint32_t n, Count32(key, value));
    if (key == "fsync") spec->set_fsync(n);
    if (key == "fdatasync") spec->set_fdatasync(n);
    return absl::OkStatus();
  }
  if (key == "rate_iops") {
    ASSIGN_OR_RETURN(const uint64_t n, common::ParseCount(key, value));
    spec->set_rate_iops(n);
    return absl::OkStatus();
  }
  if (key == "random_distribution") return SetDistribution(value, spec);
  if (key == "verify") {
    if (value == "crc32c") {
      spec->set_verify(true);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(const bool on, common::ParseBool(key, value));
    spec->set_verify(on);
    return absl::OkStatus();
  }
  if (key == "seed" || key == "randseed") {
    ASSIGN_OR_RETURN(const uint64_t n, common::ParseCount(key, value));
    spec->set_seed(n);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      StrCat("unknown randio parameter '", key, "' (known: ", kRandioParameterNames, ")"));
}

std::string DescribeRandio(const RandioSpec& s) {
  std::string name = RandioSpec::Pattern_Name(s.rw());
  std::string text = StrCat("randio ", common::ToLower(name), " bs ",
                            common::FormatBytes(s.bs_min()));
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
