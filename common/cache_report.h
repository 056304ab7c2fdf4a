// How reports word what was done to the page cache before a phase (CacheReport).
#ifndef STORMARK_COMMON_CACHE_REPORT_H_
#define STORMARK_COMMON_CACHE_REPORT_H_

#include <string>

#include "stormark/v1/agent.pb.h"

namespace stormark::common {

// "page cache dropped before the phase (sync 12 ms, drop 80 ms)", or "page cache NOT
// dropped before the phase: why; ...": one line for reports. Empty for CACHE_KEEP.
std::string DescribeCacheReport(const stormark::v1::CacheReport& report);

// "keep", "sync" or "drop".
std::string CacheModeName(stormark::v1::CacheMode mode);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_CACHE_REPORT_H_
