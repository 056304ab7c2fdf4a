"""Fleet robustness: an agent that stops answering (SIGSTOP: hung process, host gone) is
failed by heartbeats within the timeout while its Run stream is open, and the others go on;
--fail-fast stops the run instead; an agent whose controller stops heartbeating drops its
phase; an unresolvable host name is one clear error."""

import json
import os
import re
import signal
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

NULL_TARGET = "  sink: {null: true}\n"
# Short heartbeats, so that the tests are quick; the defaults are 2 s and 10 s.
HEARTBEAT = ["--heartbeat-interval", "500ms", "--heartbeat-timeout", "3s"]


def randio_on_null(seconds):
    """A timed randio phase on the null target: light, and it runs exactly `seconds`."""
    return ["--workload", "randio", "--target", "sink", "--set", "rw=randread",
            "--set", f"runtime={seconds}s", "--set", "time_based=true", "--no-progress"]


class FleetRobustnessTest(h.StormarkTestCase):

    def start_agents(self, *names):
        return [self.start_agent(n, extra_targets=NULL_TARGET) for n in names]

    def stop_mid_phase(self, agent, ctl):
        """SIGSTOPs `agent` once its phase runs; SIGCONT on cleanup, whatever happens."""
        agent.wait_for_log(r"run phase '([^']+)'", timeout=60)
        time.sleep(0.8)  # Past the common start instant: the workload is running.
        self.assertTrue(ctl.running(), ctl.stderr())
        agent.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: agent.proc.poll() is None and agent.send_signal(signal.SIGCONT))
        return time.monotonic()

    def test_stopped_agent_is_failed_by_heartbeats_and_the_others_finish(self):
        a, b = self.start_agents("a", "b")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", a.address, "--agent", b.address,
                                   "--json", json_path, *HEARTBEAT, *randio_on_null(8)])
        self.stop_mid_phase(a, ctl)
        # The Run stream to a stays open: only heartbeats can tell. b runs its 8 s.
        result = ctl.wait(timeout=60)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        report = self.load_json(json_path)
        phase = report["phases"][0]
        a_row = self.result_for(phase, a.address)
        self.assertNotEqual(a_row["status"], "succeeded")
        self.assertRegex(a_row["error"], r"^no heartbeat from agent %s for 3\.\d s" %
                         re.escape(a.address))
        self.assertEqual(self.result_for(phase, b.address)["status"], "succeeded")
        self.assertTrue([line for line in result.stdout.splitlines()
                         if line.startswith(f"  x {a.address}: no heartbeat")], result.stdout)

        # Once it runs again, a's agent finds its controller gone and removes the phase. It
        # aborts it; or, when the phase's time was up while it was stopped, the workload ends
        # as the agent notices the closed stream; or the finished phase is dropped at once
        # since its lease has run out.
        a.send_signal(signal.SIGCONT)
        pid = re.escape(phase["phase_id"])
        a.wait_for_log(r"phase '%s' (ABORTED|SUCCEEDED: the controller went away)"
                       r"|removed abandoned phase '%s'" % (pid, pid), timeout=20)
        deadline = time.monotonic() + 10
        while a.phase_dirs() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(a.phase_dirs(), [], a.log())
        self.assertIsNone(a.proc.poll(), "the agent keeps serving")

    def test_fail_fast_stops_the_run_at_the_first_failure(self):
        a, b = self.start_agents("a", "b")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", a.address, "--agent", b.address,
                                   "--json", json_path, "--fail-fast", "--set", "repeat=3",
                                   *HEARTBEAT, *randio_on_null(30)])
        stopped_at = self.stop_mid_phase(a, ctl)
        result = ctl.wait(timeout=60)
        elapsed = time.monotonic() - stopped_at
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        # Heartbeat timeout (3 s) plus the abort, far before b's 30 s phase would end.
        self.assertLess(elapsed, 15, result.describe())
        self.assertIn(f"stormark: --fail-fast: stopped the run after host {a.address} failed "
                      "(no heartbeat", result.stderr)
        report = self.load_json(json_path)
        self.assertEqual(len(report["phases"]), 1, "the later repetitions did not start")
        phase = report["phases"][0]
        b_row = self.result_for(phase, b.address)
        self.assertEqual(b_row["status"], "aborted", b_row)
        self.assertTrue(b_row["error"].startswith("aborted: --fail-fast"), b_row)
        self.assertGreater(b_row["bytes"], 0, "b's figures so far are kept")
        b.wait_for_log(r"phase '%s' ABORTED" % re.escape(phase["phase_id"]), timeout=10)
        self.assertEqual(b.phase_dirs(), [])

    def test_without_fail_fast_a_failed_host_still_fails_the_exit_code(self):
        a = self.start_agents("a")[0]
        bad = f"127.0.0.1:{h.closed_loopback_port()}"
        result = self.run_stormark(["run", "--agent", a.address, "--agent", bad,
                                    *randio_on_null(1)])
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("ok", result.stdout)

    def test_agent_drops_its_phase_when_the_controller_stops_heartbeating(self):
        agent = self.start_agents("a")[0]
        ctl = self.start_stormark(["run", "--agent", agent.address, *HEARTBEAT,
                                   *randio_on_null(60)])
        phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(0.8)
        # A frozen controller keeps its connection open (its kernel still answers), so only
        # the lease can tell: no heartbeat for 3 s.
        ctl.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: ctl.proc.poll() is None and ctl.proc.send_signal(signal.SIGCONT))
        frozen_at = time.monotonic()
        match = agent.wait_for_log(r"phase '%s' ABORTED: (.*)" % re.escape(phase_id), timeout=20)
        self.assertLess(time.monotonic() - frozen_at, 8, agent.log())
        self.assertIn("no heartbeat from the controller for 3.", match.group(1))
        deadline = time.monotonic() + 10
        while agent.phase_dirs() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(agent.phase_dirs(), [], agent.log())
        ctl.proc.send_signal(signal.SIGCONT)
        result = ctl.wait(timeout=30)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)

    def test_unresolvable_host_name_is_one_clear_error(self):
        result = self.run_stormark(["run", "--agent", "no-such-host.invalid:7420",
                                    "--rw", "write", "--size", "1M", "--no-progress"])
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        lines = [l for l in result.stderr.splitlines() if "no-such-host.invalid" in l]
        self.assertEqual(lines, ["stormark: host no-such-host.invalid:7420: unreachable: the "
                                 "host name does not resolve"], result.describe())

    def test_bad_heartbeat_flags_are_refused_naming_the_flag(self):
        result = self.run_stormark(["run", "--heartbeat-interval", "5s",
                                    "--heartbeat-timeout", "6s", "--rw", "write"])
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertIn("must be at least twice the interval", result.stderr)
        result = self.run_stormark(["run", "--deadline", "soon", "--rw", "write"])
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertIn("--deadline soon: expected a duration", result.stderr)


if __name__ == "__main__":
    h.main()
