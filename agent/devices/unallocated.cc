#include "agent/devices/unallocated.h"

#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "agent/host/system_paths.h"
#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::vector<ByteRange>> UnallocatedRanges(int fd, uint64_t begin, uint64_t end) {
  std::vector<ByteRange> holes;
  uint64_t at = begin;
  while (at < end) {
    const off_t data = lseek(fd, static_cast<off_t>(at), SEEK_DATA);
    if (data < 0) {
      // ENXIO: no data from `at` to the end of the file.
      if (errno != ENXIO) return common::ErrnoError("lseek(SEEK_DATA)", errno);
      holes.push_back({at, end});
      break;
    }
    const uint64_t data_at = static_cast<uint64_t>(data);
    if (data_at > at) holes.push_back({at, std::min(data_at, end)});
    if (data_at >= end) break;
    const off_t hole = lseek(fd, data, SEEK_HOLE);
    if (hole < 0) return common::ErrnoError("lseek(SEEK_HOLE)", errno);
    at = static_cast<uint64_t>(hole);
  }
  return holes;
}

std::optional<LoopBacking> LoopBackingOf(dev_t rdev, const std::string& sys_dev_block) {
  const std::string dir =
      common::StrCat(sys_dev_block, "/", major(rdev), ":", minor(rdev), "/loop/");
  std::optional<std::string> file = ReadSysfsLine(dir + "backing_file");
  if (!file || file->empty() || !file->starts_with("/")) return std::nullopt;
  // A backing file deleted while attached reads "/path (deleted)": nothing to look at.
  if (file->ends_with(" (deleted)")) return std::nullopt;
  std::optional<std::string> offset = ReadSysfsLine(dir + "offset");
  LoopBacking backing{*file, 0};
  if (!offset) return std::nullopt;
  const char* first = offset->data();
  const auto [end, error] = std::from_chars(first, first + offset->size(), backing.offset);
  if (error != std::errc() || end != first + offset->size()) return std::nullopt;
  return backing;
}

}  // namespace stormark::agent
