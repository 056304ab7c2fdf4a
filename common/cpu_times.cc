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

}  // namespace stormark::common
