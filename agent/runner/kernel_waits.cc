#include "agent/runner/kernel_waits.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/strings.h"

namespace stormark::agent {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The state letter of /proc/.../stat: the field after the parenthesised command, which may
// itself hold spaces and parentheses.
char StateOf(const std::string& stat) {
  const size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return '?';
  return stat[close + 2];
}

std::string LinkTarget(const std::string& path) {
  char buf[4096];
  const ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

// Calls whose first argument is a file descriptor.
bool TakesFd(const std::string& name) {
  static constexpr const char* kFdCalls[] = {"read",    "write",           "pread64",   "pwrite64",
                                             "readv",   "writev",          "preadv",    "pwritev",
                                             "preadv2", "pwritev2",        "fsync",     "fdatasync",
                                             "syncfs",  "io_uring_enter",  "fallocate", "ftruncate",
                                             "close",   "sync_file_range", "getdents64"};
  return std::find(std::begin(kFdCalls), std::end(kFdCalls), name) != std::end(kFdCalls);
}

}  // namespace

std::string KernelWait::Describe() const {
  if (syscall.empty()) return "an I/O";
  return file.empty() ? syscall : common::StrCat(syscall, " on ", file);
}

std::string SyscallName(long number) {
  struct Entry {
    long number;
    const char* name;
  };
#if defined(__aarch64__)
  static constexpr Entry kNames[] = {{63, "read"},
                                     {64, "write"},
                                     {67, "pread64"},
                                     {68, "pwrite64"},
                                     {65, "readv"},
                                     {66, "writev"},
                                     {69, "preadv"},
                                     {70, "pwritev"},
                                     {82, "fsync"},
                                     {83, "fdatasync"},
                                     {81, "sync"},
                                     {267, "syncfs"},
                                     {56, "openat"},
                                     {57, "close"},
                                     {35, "unlinkat"},
                                     {426, "io_uring_enter"},
                                     {47, "fallocate"},
                                     {46, "ftruncate"},
                                     {84, "sync_file_range"},
                                     {61, "getdents64"},
                                     {286, "preadv2"},
                                     {287, "pwritev2"},
                                     {34, "mkdirat"},
                                     {79, "newfstatat"}};
#else
  static constexpr Entry kNames[] = {
      {0, "read"},         {1, "write"},      {17, "pread64"},
      {18, "pwrite64"},    {19, "readv"},     {20, "writev"},
      {295, "preadv"},     {296, "pwritev"},  {74, "fsync"},
      {75, "fdatasync"},   {162, "sync"},     {306, "syncfs"},
      {257, "openat"},     {2, "open"},       {3, "close"},
      {263, "unlinkat"},   {87, "unlink"},    {426, "io_uring_enter"},
      {285, "fallocate"},  {77, "ftruncate"}, {277, "sync_file_range"},
      {217, "getdents64"}, {327, "preadv2"},  {328, "pwritev2"},
      {258, "mkdirat"},    {83, "mkdir"},     {262, "newfstatat"},
      {4, "stat"},         {5, "fstat"},      {6, "lstat"}};
#endif
  for (const Entry& e : kNames) {
    if (e.number == number) return e.name;
  }
  return common::StrCat("syscall ", number);
}

std::vector<KernelWait> ThreadsInKernelWait(const std::string& proc_self) {
  std::vector<KernelWait> waits;
  const std::string tasks = proc_self + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return waits;
  std::vector<int> tids;
  while (const dirent* entry = readdir(dir)) {
    const int tid = std::atoi(entry->d_name);
    if (tid > 0) tids.push_back(tid);
  }
  closedir(dir);
  std::sort(tids.begin(), tids.end());
  for (int tid : tids) {
    const std::string task = common::StrCat(tasks, "/", tid);
    if (StateOf(ReadFirstLine(task + "/stat")) != 'D') continue;
    KernelWait wait;
    wait.tid = tid;
    // "17 0x5 0x7f... ...": the call number and its arguments; "running" or "-1 ..." when
    // the thread is not in a call.
    std::istringstream syscall(ReadFirstLine(task + "/syscall"));
    long number = -1;
    std::string first_arg;
    if (syscall >> number && number >= 0) {
      wait.syscall = SyscallName(number);
      if (syscall >> first_arg && TakesFd(wait.syscall)) {
        const long fd = std::strtol(first_arg.c_str(), nullptr, 16);
        if (fd >= 0) wait.file = LinkTarget(common::StrCat(proc_self, "/fd/", fd));
      }
    }
    waits.push_back(std::move(wait));
  }
  return waits;
}

}  // namespace stormark::agent
