// A shared library loaded when a target first needs it (dlopen), not when the agent starts.
//
// libnbd and libiscsi bring GnuTLS, p11-kit, libxml2, ICU, libnl and rdma-core with them: about
// 4 MiB of every idle agent's memory, and their start-up code in every agent's start, for the
// few hosts that reach an NBD or iSCSI export from user space. So the agent is not linked with
// them: the device that needs one loads it, and binds the functions it calls by name into a
// table of its own (nbd_library.h, iscsi_library.h). A host without the library gets one line
// naming the Debian package when such a target is opened, and every other target still works.
//
// A loaded library stays loaded (RTLD_NODELETE): its functions stay valid after this object is
// gone, and a later device loads it again for nothing.
#ifndef STORMARK_AGENT_DEVICES_SHARED_LIBRARY_H_
#define STORMARK_AGENT_DEVICES_SHARED_LIBRARY_H_

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

class SharedLibrary {
 public:
  // Loads `soname` ("libnbd.so.0"). The error names the library, the Debian package that ships
  // it and what needs it: "cannot load libnbd.so.0 (Debian package libnbd0), which nbd://
  // targets need: libnbd.so.0: cannot open shared object file: No such file or directory".
  static common::StatusOr<std::unique_ptr<SharedLibrary>> Open(std::string_view soname,
                                                               std::string_view package,
                                                               std::string_view needed_by);
  ~SharedLibrary();

  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // Sets *function to the library's function `name`, or to nullptr and Done() to an error
  // when it has none (a library older than the one the agent was built with).
  template <typename F>
  void Bind(const char* name, F** function) {
    *function = reinterpret_cast<F*>(Find(name));
  }
  // OK when every Bind found its function; else the first missing one, named.
  common::Status Done() const;

 private:
  SharedLibrary(void* handle, std::string soname, std::string package);
  void* Find(const char* name);

  void* const handle_;
  const std::string soname_;
  const std::string package_;
  std::string missing_;  // The first name Bind did not find.
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_DEVICES_SHARED_LIBRARY_H_
