// A name NUL-terminated for a system call, on the stack when it fits: a phase's names are
// components of at most 64 characters (IsValidName), so the calls of a timed loop (a create, a
// stat, a delete) allocate nothing. A longer one goes to the heap rather than being cut; the
// kernel answers ENAMETOOLONG for what it will not take.
#ifndef STORMARK_AGENT_DIR_C_NAME_H_
#define STORMARK_AGENT_DIR_C_NAME_H_

#include <limits.h>

#include <cstring>
#include <string>
#include <string_view>

namespace stormark::agent {

class CName {
 public:
  explicit CName(std::string_view name) {
    if (name.size() < sizeof(buf_)) {
      std::memcpy(buf_, name.data(), name.size());
      buf_[name.size()] = '\0';
    } else {
      long_ = std::string(name);
    }
  }
  CName(const CName&) = delete;
  CName& operator=(const CName&) = delete;
  const char* c_str() const { return long_.empty() ? buf_ : long_.c_str(); }

 private:
  char buf_[NAME_MAX + 1];
  std::string long_;
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DIR_C_NAME_H_
