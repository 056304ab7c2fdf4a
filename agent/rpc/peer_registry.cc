#include "agent/rpc/peer_registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <vector>

namespace stormark::agent {

PeerRegistry::PeerRegistry(const common::Clock& clock, int64_t keep_closed_nanos)
    : clock_(clock), keep_closed_nanos_(keep_closed_nanos) {}

common::StatusOr<int> PeerRegistry::Add(int fd, Entry entry) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int error = errno;
    close(fd);
    return common::ErrnoError("fstat of an accepted connection", error);
  }
  absl::MutexLock lock(&mu_);
  // Each duplicate is kept open until the loop ends, so the next one gets another number.
  std::vector<int> taken = {fd};
  while (held_.count(taken.back()) != 0) {
    const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (copy < 0) {
      const int error = errno;
      for (int f : taken) close(f);
      return common::ErrnoError("duplicating an accepted connection", error);
    }
    taken.push_back(copy);
  }
  const int chosen = taken.back();
  taken.pop_back();
  for (int f : taken) close(f);
  held_[chosen] = Held{std::move(entry), st.st_dev, st.st_ino, -1};
  return chosen;
}

std::optional<PeerRegistry::Entry> PeerRegistry::Find(std::string_view peer) const {
  if (!peer.starts_with("fd:")) return std::nullopt;
  peer.remove_prefix(3);
  int fd = -1;
  auto [end, ec] = std::from_chars(peer.data(), peer.data() + peer.size(), fd);
  if (ec != std::errc() || end != peer.data() + peer.size()) return std::nullopt;
  absl::MutexLock lock(&mu_);
  auto it = held_.find(fd);
  if (it == held_.end()) return std::nullopt;
  return it->second.entry;
}

void PeerRegistry::Sweep() {
  const int64_t now = clock_.MonotonicNanos();
  absl::MutexLock lock(&mu_);
  for (auto it = held_.begin(); it != held_.end();) {
    Held& held = it->second;
    if (held.closed_at_mono < 0) {
      struct stat st;
      if (fstat(it->first, &st) != 0 || st.st_dev != held.dev || st.st_ino != held.ino) {
        held.closed_at_mono = now;
      }
    }
    if (held.closed_at_mono >= 0 && now - held.closed_at_mono >= keep_closed_nanos_) {
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
}

size_t PeerRegistry::size() const {
  absl::MutexLock lock(&mu_);
  return held_.size();
}

size_t PeerRegistry::open() const {
  absl::MutexLock lock(&mu_);
  size_t count = 0;
  for (const auto& [fd, held] : held_) count += held.closed_at_mono < 0 ? 1 : 0;
  return count;
}

}  // namespace stormark::agent
