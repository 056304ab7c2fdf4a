#include "agent/devices/page_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <vector>

namespace stormark::agent {

double ResidentFraction(int fd, uint64_t size) {
  // mincore needs a byte per page: above 64 GiB (16 MiB of vector), the answer is "unknown".
  constexpr uint64_t kMaxBytes = uint64_t{64} << 30;
  if (size == 0) return 0;
  if (size > kMaxBytes) return -1;
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) return -1;
  const long page = sysconf(_SC_PAGESIZE);
  const size_t pages = (size + page - 1) / page;
  std::vector<unsigned char> vec(pages);
  double fraction = -1;
  if (mincore(map, size, vec.data()) == 0) {
    size_t resident = 0;
    for (unsigned char v : vec) resident += v & 1;
    fraction = static_cast<double>(resident) / static_cast<double>(pages);
  }
  munmap(map, size);
  return fraction;
}

double EvictFromPageCache(int fd, uint64_t size) {
  fdatasync(fd);
  if (posix_fadvise(fd, 0, static_cast<off_t>(size), POSIX_FADV_DONTNEED) != 0) return -1;
  return ResidentFraction(fd, size);
}

}  // namespace stormark::agent
