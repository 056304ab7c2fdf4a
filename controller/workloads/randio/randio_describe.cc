// DescribeRandio (randio_params.h): a randio spec in one line, as tables and --check show it.
#include <algorithm>

#include "common/strings.h"
#include "common/units.h"
#include "controller/workloads/randio/randio_params.h"

namespace stormark::controller {

using common::StrCat;
using stormark::v1::RandioSpec;

std::string DescribeRandio(const RandioSpec& s) {
  std::string name = RandioSpec::Pattern_Name(s.rw());
  std::string text = StrCat("randio ", common::ToLower(name));
  if (s.bssplit_size() > 0) {
    auto split = [](const auto& shares) {
      std::string out;
      for (const auto& share : shares) {
        out += StrCat(out.empty() ? "" : ":", common::FormatSizeShort(share.bs()), "/",
                      share.percent());
      }
      return out;
    };
    text += StrCat(" bssplit ", split(s.bssplit()));
    if (s.write_bssplit_size() > 0) text += StrCat(",", split(s.write_bssplit()));
  } else {
    text += StrCat(" bs ", common::FormatBytes(s.bs_min()));
    if (s.bs_max() != 0) text += StrCat("-", common::FormatBytes(s.bs_max()));
  }
  if (s.has_rwmixread()) text += StrCat(", ", s.rwmixread(), "% reads");
  if (s.iodepth() > 1) text += StrCat(", iodepth ", s.iodepth());
  if (s.numjobs() > 1) text += StrCat(", ", s.numjobs(), " jobs");
  // Unset, each host's target picks: psync on files and raw devices, the initiator's own
  // queue on aoe, nbd and iscsi targets. The row's resolved engine says which ran.
  if (s.engine() == RandioSpec::IO_URING) text += ", io_uring";
  if (s.engine() == RandioSpec::PSYNC) text += ", psync";
  if (s.engine() == RandioSpec::LIBAIO) text += ", libaio";
  if (s.direct()) text += ", direct";
  if (s.size_bytes() != 0) text += StrCat(", ", common::FormatBytes(s.size_bytes()));
  if (s.size_percent() != 0) text += StrCat(", ", s.size_percent(), "% of the device");
  if (s.offset_bytes() != 0) text += StrCat(" at ", common::FormatBytes(s.offset_bytes()));
  if (s.offset_percent() != 0) text += StrCat(" at ", s.offset_percent(), "%");
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
  if (s.rate_poisson()) text += " (poisson)";
  if (s.random_distribution() == RandioSpec::ZIPF) text += StrCat(", zipf:", s.zipf_theta());
  if (s.norandommap()) text += ", norandommap";
  if (s.blockalign() != 0) text += StrCat(", aligned to ", common::FormatBytes(s.blockalign()));
  if (s.startdelay_nanos() != 0) {
    text += StrCat(", starting after ",
                   common::FormatDurationNanos(static_cast<double>(s.startdelay_nanos())));
  }
  if (s.thinktime_nanos() != 0) {
    text +=
        StrCat(", thinking ", common::FormatDurationNanos(static_cast<double>(s.thinktime_nanos())),
               " every ", std::max<uint32_t>(1, s.thinktime_blocks()));
  }
  if (s.end_fsync()) text += ", end_fsync";
  if (s.verify()) text += ", verify";
  // A run group of unlike jobs: each job, named, with the others running at the same time.
  if (s.group_size() > 0) {
    // Each job's description, its leading "randio " left out.
    auto job_text = [](RandioSpec job) {
      job.clear_group();
      return DescribeRandio(job).substr(7);
    };
    text = StrCat("randio run group of ", s.group_size() + 1, " jobs at once: ", s.name(), ": ",
                  job_text(s));
    for (const RandioSpec& job : s.group()) text += StrCat("; ", job.name(), ": ", job_text(job));
  }
  return text;
}

}  // namespace stormark::controller
