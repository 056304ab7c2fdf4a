// The page cache between a workload and the disk: evicting a file or device from it before a
// read phase, and checking that it really left.
#ifndef STORMARK_AGENT_DEVICES_PAGE_CACHE_H_
#define STORMARK_AGENT_DEVICES_PAGE_CACHE_H_

#include <cstdint>

namespace stormark::agent {

// The fraction of the first `size` bytes of `fd` that are in the page cache (mincore), or -1
// when it cannot be told (also above 64 GiB, where the page map would cost too much memory).
double ResidentFraction(int fd, uint64_t size);

// Flushes and drops the first `size` bytes of `fd` from the page cache (fdatasync, then
// POSIX_FADV_DONTNEED) and returns the fraction still resident afterwards, or -1 if unknown.
double EvictFromPageCache(int fd, uint64_t size);

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_PAGE_CACHE_H_
