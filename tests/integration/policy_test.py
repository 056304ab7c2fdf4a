"""The agent's policy (agent/config/policy.h) refuses what its config does not allow, with one clear
error at the controller and a log line at the agent naming who asked. Other refusals have
their own tests: commands when disabled (command_test), writes to a target not marked
disposable (randio_test, block_safety_test), names that would leave the target directory
(tests/agent/rpc/service_test.cc)."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


class PolicyTest(h.StormarkTestCase):

    def refused(self, agent, args, expect_in):
        result = self.run_stormark(["run", "--agent", agent.address, "--no-progress", "--no-db"]
                                   + args)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn(expect_in, result.stdout + result.stderr)
        self.assertEqual(agent.phase_dirs(), [])
        return result

    def test_size_over_max_size_is_refused_and_logged_with_the_peer(self):
        agent = self.start_agent("cap", extra_config="limits: {max_size: 4M}\n")
        self.refused(agent, ["--rw", "write", "--size", "8M"],
                     "over this agent's limits.max_size (4 MiB)")
        agent.wait_for_log(r"refused prepare of phase '[^']+' on target 'scratch': stream "
                           r"would lay out up to 8 MiB.* \[peer ipv4:127\.0\.0\.1:\d+\]")

    def test_postmark_pool_over_max_size_is_refused(self):
        agent = self.start_agent("pm", extra_config="limits: {max_size: 1M}\n")
        self.refused(agent, ["--workload", "postmark", "--set", "number=1000",
                             "--set", "size=1000:100000"], "limits.max_size")

    def test_requested_runtime_over_max_runtime_is_refused(self):
        agent = self.start_agent("rt", extra_config="limits: {max_runtime: 1s}\n")
        self.refused(agent, ["--workload", "randio", "--set", "rw=randread",
                             "--set", "size=4M", "--set", "runtime=5s",
                             "--set", "time_based=true"], "limits.max_runtime")

    def test_phase_running_past_max_runtime_is_stopped(self):
        agent = self.start_agent("watchdog", extra_config=(
            "commands: {enabled: true}\nlimits: {max_runtime: 1s}\n"))
        result = self.refused(agent, ["--workload", "command", "--set", "command=sleep 30"],
                              "stopped after 1.00 s: this agent's limits.max_runtime")
        self.assertNotIn("Traceback", result.stderr)

    def test_dir_target_outside_scratch_refuses_to_start(self):
        work = self.make_dir()
        inside = os.path.join(work, "bench")
        outside = os.path.join(work, "home")
        os.mkdir(inside)
        os.mkdir(outside)
        config = self.write_file(os.path.join(work, "agent.yaml"),
                                 f"scratch: [{inside}]\ntargets:\n  a: {{dir: {inside}}}\n"
                                 f"  b: {{dir: {outside}}}\n")
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertIn("agent.yaml:4: target 'b'", result.stderr)
        self.assertIn("outside the agent's scratch directories", result.stderr)


if __name__ == "__main__":
    h.main()
