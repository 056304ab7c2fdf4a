// The top of every thread a phase runs on (the set-up and run workers, randio's
// jobs, bonnie's seekers). An exception that leaves a thread's function
// terminates the whole process, so a request whose memory the host cannot give
// (an allocation deep in a container) would kill the agent and every phase
// after it. CatchAtThreadTop turns it into the phase's error instead: the phase
// fails, the agent carries on.
#ifndef STORMARK_AGENT_RUNNER_THREAD_TOP_H_
#define STORMARK_AGENT_RUNNER_THREAD_TOP_H_

#include <exception>
#include <new>
#include <stdexcept>
#include <string_view>

#include "common/status.h"

namespace stormark::agent {

// RESOURCE_EXHAUSTED "WHAT: out of memory (std::bad_alloc)" for an allocation
// failure (std::bad_alloc, or std::length_error from a container asked to hold
// more than it can), INTERNAL "WHAT: unexpected exception: ..." for any other.
// Never throws, even when the message itself cannot be allocated.
common::Status ThreadTopError(std::string_view what, const std::exception& e, bool allocation);

// Runs `work` (returning a Status) and returns its Status, or ThreadTopError
// for an exception that escapes it.
template <typename Work>
common::Status CatchAtThreadTop(std::string_view what, Work&& work) noexcept {
  try {
    return work();
  } catch (const std::bad_alloc& e) {
    return ThreadTopError(what, e, true);
  } catch (const std::length_error& e) {
    return ThreadTopError(what, e, true);
  } catch (const std::exception& e) {
    return ThreadTopError(what, e, false);
  } catch (...) {
    return absl::InternalError("unexpected exception of unknown type");
  }
}

}  // namespace stormark::agent

#endif  // STORMARK_AGENT_RUNNER_THREAD_TOP_H_
