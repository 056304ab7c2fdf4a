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

}  // namespace stormark::common

#endif  // STORMARK_COMMON_CPU_TIMES_H_
