#include "agent/host/page_cache_controls.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace stormark::agent {

using stormark::v1::CacheMode;
using stormark::v1::CacheReport;

CacheReport PageCache::Apply(CacheMode mode, bool drop_allowed) const {
  CacheReport report;
  report.set_requested(mode);
  if (mode == stormark::v1::CACHE_KEEP) return report;

  const int64_t sync_start = clock_.MonotonicNanos();
  sync();
  report.set_synced(true);
  report.set_sync_nanos(clock_.MonotonicNanos() - sync_start);
  if (mode != stormark::v1::CACHE_DROP) return report;

  if (!drop_allowed) {
    report.set_not_done("the agent's config sets allow_drop_caches: false");
    return report;
  }
  const int64_t drop_start = clock_.MonotonicNanos();
  const int fd = open(drop_caches_path_.c_str(), O_WRONLY | O_CLOEXEC);
  int err = 0;
  if (fd < 0) {
    err = errno;
  } else {
    // 3: the page cache, and the dentry and inode caches, as `echo 3 > drop_caches`.
    if (write(fd, "3\n", 2) != 2) err = errno;
    close(fd);
  }
  if (err != 0) {
    report.set_not_done(common::StrCat(drop_caches_path_, ": ", std::strerror(err),
                                       err == EACCES || err == EPERM ? " (the agent is not root)"
                                       : err == EROFS ? " (read-only /proc, as in a container)"
                                                      : ""));
    return report;
  }
  report.set_dropped(true);
  report.set_drop_nanos(clock_.MonotonicNanos() - drop_start);
  return report;
}

}  // namespace stormark::agent
