#include "agent/host/tuning.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common/log_text.h"
#include "common/strings.h"

namespace stormark::agent {
namespace {

using common::StrCat;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

common::StatusOr<std::string> ReadLine(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return common::ErrnoError(StrCat("cannot read ", path), errno);
  char buf[4096];
  const ssize_t n = read(fd, buf, sizeof(buf) - 1);
  const int err = errno;
  close(fd);
  if (n < 0) return common::ErrnoError(StrCat("cannot read ", path), err);
  std::string text(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

common::Status WriteValue(const std::string& path, const std::string& value) {
  // O_TRUNC as `echo > file` does: sysfs ignores it, a regular file (tests) needs it.
  const int fd = open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) return common::ErrnoError(StrCat("cannot write ", path), errno);
  const ssize_t n = write(fd, value.data(), value.size());
  const int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return common::ErrnoError(StrCat("cannot set ", path, " to '", common::LogSafe(value), "'"),
                              n < 0 ? err : EIO);
  }
  return absl::OkStatus();
}

// The sysfs directory of the whole disk that holds `device`'s queue.
common::StatusOr<std::string> DiskDirectory(const std::string& device, const std::string& sys) {
  if (!std::string_view(device).starts_with("/dev/")) {
    return absl::FailedPreconditionError(
        "the target is on no block device (tmpfs, overlay or a network filesystem?): there is "
        "no queue to tune");
  }
  std::string name = device.substr(5);
  // /dev/mapper/x is a symlink to ../dm-N.
  char real[4096];
  const ssize_t len = readlink(device.c_str(), real, sizeof(real) - 1);
  if (len > 0) {
    real[len] = '\0';
    const char* slash = std::strrchr(real, '/');
    name = slash ? slash + 1 : real;
  }
  std::string dir = StrCat(sys, "/", name);
  if (!Exists(dir)) return absl::NotFoundError(StrCat(device, ": no ", dir));
  if (Exists(dir + "/partition")) dir += "/..";
  return dir;
}

}  // namespace

common::StatusOr<bool> OnSameDisk(const std::string& a, const std::string& b,
                                  const std::string& sys_class_block) {
  ASSIGN_OR_RETURN(const std::string disk_a, DiskDirectory(a, sys_class_block));
  ASSIGN_OR_RETURN(const std::string disk_b, DiskDirectory(b, sys_class_block));
  char real_a[PATH_MAX], real_b[PATH_MAX];
  if (realpath(disk_a.c_str(), real_a) == nullptr) return common::ErrnoError(disk_a, errno);
  if (realpath(disk_b.c_str(), real_b) == nullptr) return common::ErrnoError(disk_b, errno);
  return std::string_view(real_a) == std::string_view(real_b);
}

std::string CurrentSysfsChoice(const std::string& text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return text;
  return text.substr(open + 1, close - open - 1);
}

common::StatusOr<std::unique_ptr<DeviceTuning>> DeviceTuning::Apply(
    const std::string& device, const std::map<std::string, std::string>& settings,
    const std::string& sys_class_block) {
  if (settings.empty()) return std::unique_ptr<DeviceTuning>(new DeviceTuning());
  ASSIGN_OR_RETURN(const std::string disk, DiskDirectory(device, sys_class_block));
  return ApplyIn(disk, device, settings);
}

common::StatusOr<std::unique_ptr<DeviceTuning>> DeviceTuning::ApplyToDevice(
    dev_t dev, const std::string& device, const std::map<std::string, std::string>& settings,
    const std::string& sys_dev_block) {
  if (settings.empty()) return std::unique_ptr<DeviceTuning>(new DeviceTuning());
  const std::string link = StrCat(sys_dev_block, "/", major(dev), ":", minor(dev));
  char real[PATH_MAX];
  if (realpath(link.c_str(), real) == nullptr) {
    return common::ErrnoError(StrCat(device, " (", major(dev), ":", minor(dev), "): no ", link),
                              errno);
  }
  std::string disk = real;
  if (Exists(disk + "/partition")) disk += "/..";
  return ApplyIn(disk, device, settings);
}

common::StatusOr<std::unique_ptr<DeviceTuning>> DeviceTuning::ApplyIn(
    const std::string& disk, const std::string& device,
    const std::map<std::string, std::string>& settings) {
  std::unique_ptr<DeviceTuning> tuning(new DeviceTuning());
  // The scheduler first: changing it resets nr_requests to the new scheduler's default.
  std::vector<std::pair<std::string, std::string>> ordered;
  if (auto it = settings.find("scheduler"); it != settings.end()) ordered.push_back(*it);
  for (const auto& entry : settings) {
    if (entry.first != "scheduler") ordered.push_back(entry);
  }
  for (const auto& [knob, value] : ordered) {
    if (!common::IsTuningKnob(knob)) {
      return absl::InvalidArgumentError(
          StrCat("unknown tuning knob '", common::LogSafe(knob),
                 "' (known: scheduler, read_ahead_kb, nr_requests, queue_depth)"));
    }
    const std::string path =
        knob == "queue_depth" ? StrCat(disk, "/device/queue_depth") : StrCat(disk, "/queue/", knob);
    // clang 14 cannot capture a structured binding: name the knob again for the lambda.
    auto fail = [&, what = StrCat(device, ": ", knob)](const common::Status& why) {
      (void)tuning->Restore();
      return common::Annotate(why, what);
    };
    if (!Exists(path)) {
      return fail(absl::FailedPreconditionError(
          knob == "queue_depth" ? "the device has no queue_depth (only SCSI disks have one)"
                                : StrCat("no ", path)));
    }
    auto before = ReadLine(path);
    if (!before.ok()) return fail(before.status());
    const std::string old = knob == "scheduler" ? CurrentSysfsChoice(*before) : *before;
    if (common::Status s = WriteValue(path, value); !s.ok()) return fail(s);
    tuning->changes_.push_back({path, old});
    auto after = ReadLine(path);
    if (!after.ok()) return fail(after.status());
    const std::string now = knob == "scheduler" ? CurrentSysfsChoice(*after) : *after;
    if (now != value) {
      return fail(
          absl::InvalidArgumentError(StrCat("the kernel took '", common::LogSafe(value), "' as '",
                                            common::LogSafe(now), "'; use a value it keeps")));
    }
    tuning->report_[knob] = now;
    tuning->report_[knob + ".before"] = old;
  }
  return tuning;
}

common::Status DeviceTuning::Restore() {
  common::Status first;
  // In the order applied: the scheduler first, since putting it back resets nr_requests.
  for (const Change& change : changes_) {
    common::Status s = WriteValue(change.path, change.before);
    if (!s.ok() && first.ok()) first = s;
  }
  changes_.clear();
  return first;
}

DeviceTuning::~DeviceTuning() { (void)Restore(); }

}  // namespace stormark::agent
