#include "controller/fleet/local_agent.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "common/strings.h"
#include "controller/fleet/agent_client.h"

namespace stormark::controller {
namespace {

using common::StrCat;

std::string TempRoot() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/var/tmp";
}

bool WaitForExit(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    const pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno == ECHILD)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

std::string LocalAgent::DefaultBinary() {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    self[n] = '\0';
    std::string dir(self);
    dir = dir.substr(0, dir.rfind('/'));
    const std::string candidate = dir + "/stormark-agent";
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "stormark-agent";
}

std::string LocalAgent::LastLogLine() const {
  std::ifstream in(work_dir_ + "/agent.log");
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

common::StatusOr<std::unique_ptr<LocalAgent>> LocalAgent::Start(const std::string& agent_binary,
                                                                const std::string& data_dir) {
  std::unique_ptr<LocalAgent> agent(new LocalAgent());
  std::string pattern = TempRoot() + "/stormark-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    return common::ErrnoError(StrCat("cannot create a temporary directory under ", TempRoot()),
                              errno);
  }
  agent->work_dir_ = pattern;
  if (data_dir.empty()) {
    agent->data_dir_ = agent->work_dir_ + "/data";
    agent->own_data_dir_ = true;
    if (mkdir(agent->data_dir_.c_str(), 0700) != 0) {
      return common::ErrnoError(StrCat("cannot create ", agent->data_dir_), errno);
    }
  } else {
    char resolved[PATH_MAX];
    if (realpath(data_dir.c_str(), resolved) == nullptr) {
      return common::ErrnoError(StrCat("--dir ", data_dir), errno);
    }
    agent->data_dir_ = resolved;
  }
  const std::string config = agent->work_dir_ + "/agent.yaml";
  {
    std::ofstream out(config);
    out << "# Written by stormark for its embedded agent.\ntargets:\n  scratch:\n    dir: \""
        << agent->data_dir_
        << "\"\n"
        // The user runs their own commands on their own machine, as themselves: an agent
        // that is not root runs them as its own user; a root one must be told root.
        << "commands:\n  enabled: true\n"
        << (geteuid() == 0 ? "  user: root\n" : "") << "allow_tuning: true\n";
    if (!out) return common::ErrnoError(StrCat("cannot write ", config), errno);
  }
  // The agent refuses a config that group or others may write (agent/config/strict_modes.h), which
  // a umask of 002 would give.
  if (chmod(config.c_str(), 0600) != 0) return common::ErrnoError(StrCat("chmod ", config), errno);
  agent->address_ = StrCat("unix:", agent->work_dir_, "/agent.sock");
  const std::string log = agent->work_dir_ + "/agent.log";

  // Everything the child needs is built before fork: after it, only exec-safe calls.
  std::vector<std::string> args = {agent_binary, "--listen", agent->address_, "--config", config};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return common::ErrnoError("cannot start the local agent", errno);
  if (pid == 0) {
    // The agent must not outlive the controller, even if the controller is killed.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    // Out of the terminal's process group: Ctrl-C goes to the controller, which aborts the
    // phase in order, rather than straight to the agent.
    setpgid(0, 0);
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (agent_binary.find('/') != std::string::npos) {
      execv(argv[0], argv.data());
    } else {
      execvp(argv[0], argv.data());
    }
    _exit(127);
  }
  agent->pid_ = pid;

  // Wait until it answers, or has died.
  auto channel = AgentClient::MakeChannel(agent->address_);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < until) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      agent->pid_ = -1;
      const std::string last = agent->LastLogLine();
      return absl::UnavailableError(StrCat("the local agent (", agent_binary, ") exited at start",
                                           last.empty()
                                               ? (WIFEXITED(status) && WEXITSTATUS(status) == 127
                                                      ? std::string(": cannot execute it")
                                                      : std::string())
                                               : StrCat(": ", last)));
    }
    if (channel->WaitForConnected(std::chrono::system_clock::now() +
                                  std::chrono::milliseconds(200))) {
      return agent;
    }
  }
  return absl::UnavailableError("the local agent did not answer within 20 s");
}

LocalAgent::~LocalAgent() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    if (!WaitForExit(pid_, std::chrono::seconds(10))) {
      kill(pid_, SIGKILL);
      WaitForExit(pid_, std::chrono::seconds(5));
    }
  }
  if (!work_dir_.empty()) {
    if (own_data_dir_) rmdir(data_dir_.c_str());
    for (const char* name : {"/agent.yaml", "/agent.sock", "/agent.sock.lock", "/agent.log"}) {
      unlink((work_dir_ + name).c_str());
    }
    rmdir(work_dir_.c_str());
  }
}

}  // namespace stormark::controller
