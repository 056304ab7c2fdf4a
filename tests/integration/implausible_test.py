"""Attack: one agent of a fleet reports a figure no run can produce (an elapsed time of 2^63 - 1
ns, a series sample at 2^63 - 6 ns, a progress near 2^63), through the whole path of `stormark
run`: its host fails with one line naming the field, the run's exit status says a host failed,
the phase's figures are the honest hosts' in the table, the JSON report and the results file,
and `results show` reads them back the same. The liar is a simulated agent of
stormark-fleet-sim (bench/fleet_sim/lies.h) in a process of its own, beside honest ones."""

import os
import re
import sqlite3
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import stormark_harness as h  # noqa: E402
import fleet_sim  # noqa: E402  bench/fleet_sim.py: the simulator, stopped by PID.

RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")
AGENTS = 4
LIAR = 2

# Each lie, and what the liar's host says for it.
LIES = {
    "elapsed": "the agent's result is not plausible: elapsed_nanos is 9223372036854775807: "
               "longer than the ",
    "series-offset": "the agent's result is not plausible: series[0].offset_nanos is "
                     "9223372036854775802",
    "bytes": "the agent's result is not plausible: bytes is 18446744073709551615: past 1 EiB/s",
    "progress-elapsed": "the agent's progress is not plausible: elapsed_nanos is "
                        "9223372036854775807",
}


class ImplausibleTest(h.StormarkTestCase):

    def run_fleet(self, lie):
        base = self.make_dir()
        sim = fleet_sim.Simulator(AGENTS, base, 0, 0, lie=lie, liar=LIAR)
        self.addCleanup(sim.stop)
        sim.ready()
        db = os.path.join(base, "results.db")
        report = os.path.join(base, "run.json")
        # A time-based phase of 2.5 s: a progress every second, then the result.
        args = ["run", "--workload", "randio", "--target", "sink", "--set", "rw=randread",
                "--set", "rate_iops=200", "--set", "runtime=2500ms", "--set", "time_based=true",
                "--db", db, "--json", report, "--no-progress"]
        for port in sim.ports:
            args += ["--agent", f"127.0.0.1:{port}"]
        result = self.run_stormark(args, timeout=120)
        self.assert_no_crash(result)
        return sim, db, report, result

    def test_a_lying_agent_fails_its_host_and_the_others_figures_stand(self):
        for lie, said in LIES.items():
            with self.subTest(lie=lie):
                sim, db, report, result = self.run_fleet(lie)
                liar = f"127.0.0.1:{sim.ports[LIAR]}"
                # A host failed: exit 1, and its one line under the table names the field and
                # the value.
                self.assertEqual(result.returncode, 1, result.describe())
                self.assertIn(f"{liar}: {said}", result.stdout + result.stderr,
                              result.describe())
                # The JSON report: the liar failed, the phase's figures are the three others'.
                phase = self.load_json(report)["phases"][0]
                rows = {row["host"]: row for row in phase["results"]}
                self.assertEqual(rows[liar]["status"], "error", rows[liar])
                self.assertIn(said, rows[liar]["error"])
                honest = [row for host, row in rows.items() if host != liar]
                self.assertEqual(len(honest), AGENTS - 1)
                for row in honest:
                    self.assertEqual(row["status"], "succeeded", row)
                    self.assertGreater(row["bytes"], 0, row)
                self.assertEqual(phase["all_hosts"]["hosts"], AGENTS - 1, phase["all_hosts"])
                self.assertEqual(phase["all_hosts"]["bytes"], sum(r["bytes"] for r in honest))
                self.assertLess(phase["all_hosts"]["bytes"], 1 << 40)
                # The results file and `results show` say the same.
                run_id = RUN_ID.search(result.stdout).group(1)
                shown = self.run_stormark(["results", "--db", db, "show", run_id])
                self.assertEqual(shown.returncode, 0, shown.describe())
                self.assert_no_crash(shown)
                self.assertIn(said, shown.stdout, shown.describe())
                self.assertNotIn("9223372036854775807 B", shown.stdout)
                with sqlite3.connect(db) as conn:
                    stored = dict(conn.execute(
                        "SELECT host, status FROM host_results WHERE run_id = ?", (run_id,)))
                self.assertEqual(stored[liar], "error", stored)
                # The simulator still serves every agent: the next run of the honest ones passes.
                again = ["run", "--workload", "randio", "--target", "sink", "--set",
                         "rw=randread", "--set", "rate_iops=100", "--set", "runtime=1s",
                         "--set", "time_based=true", "--no-db", "--no-progress"]
                for i, port in enumerate(sim.ports):
                    if i != LIAR:
                        again += ["--agent", f"127.0.0.1:{port}"]
                honest_run = self.run_stormark(again, timeout=60)
                self.assertEqual(honest_run.returncode, 0, honest_run.describe())
                sim.stop()


if __name__ == "__main__":
    h.main()
