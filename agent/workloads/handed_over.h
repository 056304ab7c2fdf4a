// A data file one phase leaves for the next one to read, on a `dir:` target: the default
// plan's write-then-read reads back the very file its write phase wrote, instead of laying
// out a second one (which doubled what reached the disk).
//
// The controller asks for it (PhaseSpec.hand_over_to names the next phase); the phase runner
// (agent/runner/phase_runner.h) keeps the file past the writer's Cleanup for that one phase,
// of the same identity and target, and removes it when any other phase is prepared, when the
// writer's lease lapses without a heartbeat from its controller (or, without a lease, after
// the reclaim time), and when the agent stops. The reader gets the writer's own Dir, so every
// guarantee of agent/dir/dir.h holds for it: it reaches only the inode the writer created,
// and its Cleanup removes that file and the writer's phase directory.
#ifndef STORMARK_AGENT_WORKLOADS_HANDED_OVER_H_
#define STORMARK_AGENT_WORKLOADS_HANDED_OVER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "agent/dir/dir.h"

namespace stormark::agent {

struct HandedOver {
  std::unique_ptr<Dir> dir;  // The writer's phase directory, holding `file` alone.
  std::string file;          // Its name in `dir`.
  uint64_t bytes = 0;        // Written in full, from offset 0, by requests that completed.
  std::string from_phase;    // The writer's phase id (set by the runner).
  std::string how;           // What wrote it: "stream write".
};

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_WORKLOADS_HANDED_OVER_H_
