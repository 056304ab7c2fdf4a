#include "common/cache_report.h"

#include "common/strings.h"
#include "common/units.h"

namespace stormark::common {

std::string DescribeCacheReport(const stormark::v1::CacheReport& report) {
  if (report.requested() == stormark::v1::CACHE_KEEP) return "";
  const std::string sync =
      StrCat("sync ", FormatDurationNanos(static_cast<double>(report.sync_nanos())));
  if (report.requested() == stormark::v1::CACHE_SYNC)
    return StrCat("synced before the phase (", sync, ")");
  if (!report.dropped()) {
    return StrCat("page cache NOT dropped before the phase: ", report.not_done(),
                  "; reads may come from the cache");
  }
  return StrCat("page cache dropped before the phase (", sync, ", drop ",
                FormatDurationNanos(static_cast<double>(report.drop_nanos())), ")");
}

std::string CacheModeName(stormark::v1::CacheMode mode) {
  switch (mode) {
    case stormark::v1::CACHE_SYNC:
      return "sync";
    case stormark::v1::CACHE_DROP:
      return "drop";
    default:
      return "keep";
  }
}

}  // namespace stormark::common
