// The embedded default: with no --agent, the controller starts its own stormark-agent on a
// temporary directory, talks to it over a unix socket, and stops it (by PID) at the end.
#ifndef STORMARK_CONTROLLER_FLEET_LOCAL_AGENT_H_
#define STORMARK_CONTROLLER_FLEET_LOCAL_AGENT_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace stormark::controller {

class LocalAgent {
 public:
  // Starts `agent_binary` with one target, "scratch", at `data_dir`; or, when `data_dir` is
  // empty, at a new temporary directory under $TMPDIR (default /var/tmp, which is on disk
  // where /tmp may be memory). Waits until the agent answers.
  static common::StatusOr<std::unique_ptr<LocalAgent>> Start(const std::string& agent_binary,
                                                             const std::string& data_dir);
  // Stops the agent (SIGTERM, then SIGKILL after 10 s) and removes the temporary files.
  ~LocalAgent();

  LocalAgent(const LocalAgent&) = delete;
  LocalAgent& operator=(const LocalAgent&) = delete;

  // "unix:/var/tmp/stormark-XXXXXX/agent.sock".
  const std::string& address() const { return address_; }
  const std::string& data_dir() const { return data_dir_; }

  // The stormark-agent next to the running executable, else the one on PATH.
  static std::string DefaultBinary();

 private:
  LocalAgent() = default;
  // The last line the agent wrote to its log, for error messages.
  std::string LastLogLine() const;

  pid_t pid_ = -1;
  std::string work_dir_;  // our temporary directory (0700): config, socket, log
  std::string data_dir_;
  bool own_data_dir_ = false;
  std::string address_;
};

}  // namespace stormark::controller

#endif  // STORMARK_CONTROLLER_FLEET_LOCAL_AGENT_H_
