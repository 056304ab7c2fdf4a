#include "agent/devices/shared_library.h"

#include <dlfcn.h>

#include "common/strings.h"

namespace stormark::agent {

common::StatusOr<std::unique_ptr<SharedLibrary>> SharedLibrary::Open(std::string_view soname,
                                                                     std::string_view package,
                                                                     std::string_view needed_by) {
  const std::string name(soname);
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        common::StrCat("cannot load ", soname, " (Debian package ", package, "), which ", needed_by,
                       " need: ", error != nullptr ? error : "unknown error"));
  }
  return std::unique_ptr<SharedLibrary>(new SharedLibrary(handle, name, std::string(package)));
}

SharedLibrary::SharedLibrary(void* handle, std::string soname, std::string package)
    : handle_(handle), soname_(std::move(soname)), package_(std::move(package)) {}

SharedLibrary::~SharedLibrary() { dlclose(handle_); }  // It stays loaded: RTLD_NODELETE.

void* SharedLibrary::Find(const char* name) {
  void* address = dlsym(handle_, name);
  if (address == nullptr && missing_.empty()) missing_ = name;
  return address;
}

common::Status SharedLibrary::Done() const {
  if (missing_.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(common::StrCat(soname_, " has no function ", missing_,
                                                      ": the agent needs a newer ", package_,
                                                      " than this host's"));
}

}  // namespace stormark::agent
