"""The validity verdict of a phase on several hosts (controller/report/validity.h), end to end.

Two real agents run one timed phase. When they ran together, the phase says `validity: valid`
with the window in which both ran. When one host started only after the other had finished
(here: a per-host `startdelay` from the host's label, the mistake of a fio job file shared by
hosts), each host's own figure still stands but their sum is no fleet's: the table labels the
aggregate `all hosts INVALID` and says why, as do the JSON, `results show`, the CSV export and
the HTML report, and the CI gate fails on it although no figure is slower.
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")
JOB = """[global]
ioengine=psync
rw=randread
bs=4k
size=8m
time_based=1
runtime=1s
rate_iops=500
[j]
startdelay=${STORMARK_LABEL_DELAY}
"""


class ValidityTest(h.StormarkTestCase):

    def setUp(self):
        self.agents = [self.start_agent(n) for n in ("early", "late")]
        self.work = self.make_dir()
        self.db = os.path.join(self.work, "results.db")
        self.job = self.write_file(os.path.join(self.work, "shared.fio"), JOB)

    def run_ok(self, args):
        result = self.run_stormark(args, timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        return result

    def run_with_delays(self, early, late, label):
        plan = self.write_file(os.path.join(self.work, f"{label}.yaml"), (
            "hosts:\n"
            f"  - {{name: early, address: \"{self.agents[0].address}\", "
            f"labels: {{delay: {early}}}}}\n"
            f"  - {{name: late, address: \"{self.agents[1].address}\", "
            f"labels: {{delay: {late}}}}}\n"
            "phases:\n"
            f"  - {{name: read, fio: {self.job}}}\n"))
        json_path = os.path.join(self.work, f"{label}.json")
        result = self.run_stormark(["run", "--plan", plan, "--db", self.db, "--no-progress",
                                    "--json", json_path], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        return result, self.load_json(json_path)["phases"][0], RUN_ID.search(result.stdout)[1]

    def test_hosts_that_never_ran_together_make_the_aggregate_invalid_everywhere(self):
        together, phase, base_run = self.run_with_delays("0", "0", "together")
        self.assertRegex(together.stdout, r"  validity: valid: start spread .* is .* of the "
                                          r"shortest host's .* \(limit 1%\)\n")
        self.assertRegex(together.stdout, r"  all 2 hosts ran together for [\d.]+ (s|ms): ")
        self.assertNotIn("INVALID", together.stdout)
        self.assertEqual(phase["validity"]["verdict"], "valid", phase["validity"])
        self.assertGreater(phase["validity"]["all_running"]["seconds"], 0.5)
        self.assertFalse(phase["all_hosts"]["invalid"])

        apart, phase, run = self.run_with_delays("0", "3s", "apart")
        out = apart.stdout
        # "late" waited 3 s before its 1 s region; "early" had finished about 2 s before.
        why = re.search(r"  validity: INVALID: late started ([\d.]+) s after early had "
                        r"finished: the hosts never ran together; the all-hosts figures are not "
                        r"the fleet's\n", out)
        self.assertIsNotNone(why, out)
        self.assertGreater(float(why[1]), 1.5, out)
        self.assertLess(float(why[1]), 2.5, out)
        self.assertRegex(out, r"\n  all hosts INVALID ")
        self.assertNotIn("ran together for", out)
        validity = phase["validity"]
        self.assertEqual(validity["verdict"], "invalid", validity)
        self.assertIn("late started", validity["why"])
        self.assertEqual(validity["all_running"]["seconds"], 0)
        self.assertGreater(validity["last_start_unix_nanos"], validity["first_end_unix_nanos"])
        self.assertTrue(phase["all_hosts"]["invalid"])
        self.assertTrue(phase["all_hosts"]["warnings"][0].startswith("INVALID: late started"))
        # Each host's own figure stands: both read at their rate limit.
        for row in phase["results"]:
            self.assertEqual(row["status"], "succeeded", row)

        # The stored run is judged alike.
        shown = self.run_ok(["results", "--db", self.db, "show", run])
        self.assertIn("validity: INVALID: late started", shown.stdout)
        self.assertIn("all hosts INVALID", shown.stdout)
        csv = self.run_ok(["results", "--db", self.db, "export", run, "--format", "csv"])
        self.assertIn(",all hosts,,invalid,note,INVALID: late started", csv.stdout)
        html_path = os.path.join(self.work, "report.html")
        self.run_ok(["report", "--db", self.db, run, "--output", html_path])
        html = h.read_text(html_path)
        self.assertIn('all hosts <span class="status-invalid">INVALID</span>', html)
        self.assertIn("validity: INVALID: late started", html)

        # The gate: no figure is slower than the baseline's (each host ran at its rate limit),
        # but the candidate's aggregate is INVALID, so the gate fails.
        gate = self.run_stormark(["results", "--db", self.db, "compare", "--baseline", base_run,
                                  run, "--fail-if-slower", "50%", "--metric", "ops/s"])
        self.assert_no_crash(gate)
        self.assertEqual(gate.returncode, 1, gate.describe())
        self.assertRegex(gate.stdout, r"gate: FAILED: 1 of 3 checks, 1 phase run INVALID \(the "
                                      r"hosts did not run together\)")
        self.assertRegex(gate.stdout, r"read\.j\s+all hosts\s+validity\s+-\s+-\s+run 1: INVALID: "
                                      r"late started")
        # The same comparison the other way round passes: the valid run is the candidate.
        back = self.run_stormark(["results", "--db", self.db, "compare", "--baseline", run,
                                  base_run, "--fail-if-slower", "50%", "--metric", "ops/s"])
        self.assertEqual(back.returncode, 0, back.describe())

    def test_a_bad_limit_is_one_line_naming_the_plan_line(self):
        # The line of the value (the phase's map begins on the line above).
        plan = self.write_file(os.path.join(self.work, "bad.yaml"),
                               "phases:\n  - {workload: stream, rw: write, size: 1M,\n"
                               "     start_spread_limit: 1}\n")
        result = self.run_stormark(["run", "--plan", plan, "--agent", self.agents[0].address,
                                    "--no-db", "--no-progress"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertEqual(result.stderr.strip().splitlines(),
                         [f"stormark: {plan}:3: phase 'phase1': bad start_spread_limit '1': give "
                          "a share of the phase, such as 1%"], result.describe())


if __name__ == "__main__":
    h.main()
