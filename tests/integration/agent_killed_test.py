"""An agent killed in the middle of a phase: the controller reports the other host's figures,
names the lost one with a reason, and exits 1."""

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

# Synced writes big enough to be running when the kill comes; a bigger size is tried only
# if the first finished before it (a very fast disk).
SIZES = (("1G", GIB), ("4G", 4 * GIB))
# The controller starts the phase 250 ms after the Run calls go out; kill after that, so the
# workload is writing.
KILL_AFTER_RUN_SECONDS = 0.4


class AgentKilledTest(h.StormarkTestCase):

    def start_phase_and_kill(self, a, b, size, json_path):
        """Runs a synced write of `size` on both agents and SIGKILLs `a` mid-phase. Returns the
        controller's Result, or None if `a` finished before the kill could land."""
        ctl = self.start_stormark(["run", "--agent", a.address, "--agent", b.address,
                                   "--rw", "write", "--size", size, "--bs", "1M", "--fdatasync",
                                   "--json", json_path, "--no-progress"])
        match = a.wait_for_log(r"run phase '([^']+)'", timeout=60)
        time.sleep(KILL_AFTER_RUN_SECONDS)
        if re.search(r"phase '%s' (SUCCEEDED|FAILED|ABORTED)" % re.escape(match.group(1)),
                     a.log()):
            ctl.wait(timeout=240)
            return None
        a.send_signal(signal.SIGKILL)
        self.assertEqual(a.wait(timeout=10), -signal.SIGKILL)
        return ctl.wait(timeout=240)

    def test_other_host_is_reported_and_lost_one_named(self):
        a = self.start_agent("a")
        b = self.start_agent("b")
        json_path = os.path.join(self.make_dir(), "out.json")
        for size, size_bytes in SIZES:
            result = self.start_phase_and_kill(a, b, size, json_path)
            if result is not None:
                break
        else:
            self.fail("agent a finished every phase before it could be killed")

        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)

        # The table: b's row has figures and is ok; a's row is not ok.
        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.describe())
        table = tables[0]
        b_rows = h.rows_for(table, b.address)
        self.assertEqual(len(b_rows), 1, result.describe())
        b_row = h.parse_row(b_rows[0], b.address)
        self.assertEqual(b_row["status"], "ok", b_rows[0])
        self.assertGreater(b_row["mibps"] or 0, 0, b_rows[0])
        a_rows = h.rows_for(table, a.address)
        self.assertEqual(len(a_rows), 1, result.describe())
        self.assertIn(h.parse_row(a_rows[0], a.address)["status"], ("ERROR", "FAILED", "ABORTED"))
        all_rows = h.rows_for(table, "all hosts")
        self.assertEqual(len(all_rows), 1, result.describe())
        self.assertEqual(h.parse_row(all_rows[0], "all hosts")["status"], "1 host")

        # A line names a as failed, with the reason.
        lost = [line for line in (result.stdout + result.stderr).splitlines()
                if a.address in line and "lost the agent" in line]
        self.assertTrue(lost, result.describe())
        self.assertFalse([n for n in table["notes"] if n.startswith(f"  x {b.address}")],
                         result.describe())

        report = self.load_json(json_path)
        phase = report["phases"][0]
        a_result = self.result_for(phase, a.address)
        self.assertNotEqual(a_result["status"], "succeeded")
        self.assertIn("lost the agent", a_result["error"])
        b_result = self.result_for(phase, b.address)
        self.assert_succeeded_result(phase, b_result, size_bytes)
        self.assertEqual(phase["all_hosts"]["hosts"], 1)
        self.assertEqual(phase["all_hosts"]["bytes"], size_bytes)

        # b cleaned up after its phase and still serves.
        self.assertEqual(os.listdir(b.target_dir), [], b.log())
        self.assertIsNone(b.proc.poll(), b.log())


if __name__ == "__main__":
    h.main()
