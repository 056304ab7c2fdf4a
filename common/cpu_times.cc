#include "common/cpu_times.h"

#include <sys/resource.h>

namespace stormark::common {
namespace {

int64_t ToNanos(const timeval& tv) {
  return static_cast<int64_t>(tv.tv_sec) * 1'000'000'000 + static_cast<int64_t>(tv.tv_usec) * 1000;
}

}  // namespace

CpuTimes ProcessCpuTimes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return {ToNanos(usage.ru_utime), ToNanos(usage.ru_stime)};
}

double CpuPercent(const CpuTimes& before, const CpuTimes& after, int64_t wall_nanos) {
  if (wall_nanos <= 0) return 0;
  const int64_t used = (after.user_nanos - before.user_nanos) +
                       (after.system_nanos - before.system_nanos);
  return 100.0 * static_cast<double>(used) / static_cast<double>(wall_nanos);
}

}  // namespace stormark::common
