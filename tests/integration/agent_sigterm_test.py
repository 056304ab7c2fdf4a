"""An agent stopped by SIGTERM or SIGINT: it aborts the held phase, removes the phase's files
and exits 0; the controller reports the host as not succeeded."""

import os
import re
import signal
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

GIB = 1 << 30
# Small O_DIRECT writes without a final fdatasync: slow enough to be running when the signal
# comes without needing gigabytes of free disk, and the workload checks for an abort between
# every two blocks (a final fdatasync could not be interrupted). A bigger size is tried only
# if the phase finished before the signal (a very fast machine).
SIZES = (("1G", GIB), ("4G", 4 * GIB))
# The controller starts the phase 250 ms after the Run calls go out; signal after that, so
# the workload is writing.
SIGNAL_AFTER_RUN_SECONDS = 0.4


class AgentSigtermTest(h.StormarkTestCase):

    def stop_agent_mid_phase(self, sig):
        json_path = os.path.join(self.make_dir(), "out.json")
        for size, size_bytes in SIZES:
            agent = self.start_agent("agent")
            ctl = self.start_stormark(["run", "--agent", agent.address, "--rw", "write",
                                       "--size", size, "--direct", "--bs", "4k", "--no-fdatasync", "--json", json_path,
                                       "--no-progress"])
            phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
            time.sleep(SIGNAL_AFTER_RUN_SECONDS)
            if not re.search(r"phase '%s' (SUCCEEDED|FAILED|ABORTED)" % re.escape(phase_id),
                             agent.log()):
                break
            ctl.wait(timeout=240)  # Finished before the signal; try a longer phase.
            agent.stop()
        else:
            self.fail("every phase finished before the signal could be sent")

        # The phase's files exist while it runs: the check below is not vacuous.
        self.assertEqual(agent.phase_dirs(), [f".stormark-{phase_id}"])
        agent.send_signal(sig)
        self.assertEqual(agent.wait(timeout=30), 0, agent.log())
        log = agent.log()
        self.assertIn("caught " + ("SIGINT" if sig == signal.SIGINT else "SIGTERM"), log)
        self.assertEqual(os.listdir(agent.target_dir), [], log)

        result = ctl.wait(timeout=60)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.describe())
        rows = h.rows_for(tables[0], agent.address)
        self.assertEqual(len(rows), 1, result.describe())
        self.assertNotEqual(h.parse_row(rows[0], agent.address)["status"], "ok", rows[0])
        self.assertTrue([n for n in tables[0]["notes"] if n.startswith(f"  x {agent.address}: ")],
                        result.describe())

        report = self.load_json(json_path)
        r = self.result_for(report["phases"][0], agent.address)
        self.assertNotEqual(r["status"], "succeeded", r)
        self.assertTrue(r["error"], r)
        self.assertLess(r["bytes"], size_bytes)
        self.assertIsNone(report["phases"][0]["all_hosts"])

    def test_sigterm_mid_phase_aborts_and_removes_files(self):
        self.stop_agent_mid_phase(signal.SIGTERM)

    def test_sigint_mid_phase_aborts_and_removes_files(self):
        self.stop_agent_mid_phase(signal.SIGINT)

    def test_sigterm_when_idle_exits_zero(self):
        agent = self.start_agent("idle")
        agent.send_signal(signal.SIGTERM)
        self.assertEqual(agent.wait(timeout=15), 0, agent.log())
        self.assertIn("stopped", agent.log())
        self.assertEqual(os.listdir(agent.target_dir), [])


if __name__ == "__main__":
    h.main()
