// The host's page cache controls, applied between a phase's set-up and its timed region, so
// that a read phase reads from the device and a phase does not pay for earlier writes.
//
// What was done is always reported, never assumed: a drop that the agent's config forbids,
// or that the kernel refuses (not root, a read-only /proc in a container), leaves a
// CacheReport whose not_done says why, and the phase runs on with a warning.
#ifndef STORMARK_AGENT_HOST_PAGE_CACHE_CONTROLS_H_
#define STORMARK_AGENT_HOST_PAGE_CACHE_CONTROLS_H_

#include <string>

#include "common/clock.h"
#include "stormark/v1/agent.pb.h"

namespace stormark::agent {

class PageCache {
 public:
  // `drop_caches_path` is /proc/sys/vm/drop_caches except in tests. `clock` must outlive
  // this object.
  PageCache(const common::Clock& clock, std::string drop_caches_path = "/proc/sys/vm/drop_caches")
      : clock_(clock), drop_caches_path_(std::move(drop_caches_path)) {}

  // Does what `mode` asks (CACHE_DROP also syncs first, since only clean pages can be
  // dropped). `drop_allowed` is the agent's policy. Thread-safe.
  stormark::v1::CacheReport Apply(stormark::v1::CacheMode mode, bool drop_allowed) const;

 private:
  const common::Clock& clock_;
  const std::string drop_caches_path_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_HOST_PAGE_CACHE_CONTROLS_H_
