// CPU time consumed by this process, for %CPU figures (user+sys over wall time).
#ifndef STORMARK_COMMON_CPU_TIMES_H_
#define STORMARK_COMMON_CPU_TIMES_H_

#include <cstdint>

namespace stormark::common {

struct CpuTimes {
  int64_t user_nanos = 0;
  int64_t system_nanos = 0;
};

// User and system time of the whole process (all threads) so far, from getrusage.
CpuTimes ProcessCpuTimes();

// CPU time between two readings, as a percentage of one core over `wall_nanos`: 100 means
// one core busy the whole time. 0 when wall_nanos is 0.
double CpuPercent(const CpuTimes& before, const CpuTimes& after, int64_t wall_nanos);

}  // namespace stormark::common

#endif  // STORMARK_COMMON_CPU_TIMES_H_
