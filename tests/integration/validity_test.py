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
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

FAKETIME = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1"
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

    @unittest.skipUnless(os.path.exists(FAKETIME), "needs libfaketime (apt-get install faketime)")
    def test_a_clock_stepped_in_mid_phase_makes_that_phase_invalid(self):
        """An NTP step on one host: libfaketime moves one agent's wall clock 5 s ahead while
        the first of two phases runs (its monotonic clock, which times the phase, keeps going).
        The controller's sync after the phase sees the offset moved, so that phase's clock
        estimate is good to +-5 s only and its aggregate is INVALID; the second phase, synced
        afresh, is valid, and the agent served both."""
        offset_file = self.write_file(os.path.join(self.work, "faketime"), "+0\n")
        stepped = self.start_agent("stepped", env={
            "LD_PRELOAD": FAKETIME, "FAKETIME_TIMESTAMP_FILE": offset_file,
            "FAKETIME_CACHE_DURATION": "1", "DONT_FAKE_MONOTONIC": "1"})
        plan = self.write_file(os.path.join(self.work, "two.yaml"), (
            "hosts:\n"
            f"  - {{name: steady, address: \"{self.agents[0].address}\"}}\n"
            f"  - {{name: stepped, address: \"{stepped.address}\"}}\n"
            "phases:\n"
            "  - {name: one, workload: randio, rw: randread, bs: 4k, size: 8M, runtime: 5s,\n"
            "     time_based: true, rate_iops: 500}\n"
            "  - {name: two, workload: randio, rw: randread, bs: 4k, size: 8M, runtime: 2s,\n"
            "     time_based: true, rate_iops: 500}\n"))
        json_path = os.path.join(self.work, "stepped.json")
        controller = self.start_stormark(["run", "--plan", plan, "--db", self.db,
                                          "--no-progress", "--json", json_path])
        # Phase one has begun once its file is laid out; the step lands within its 5 s.
        deadline = time.monotonic() + 60
        while not os.listdir(stepped.target_dir):
            self.assertLess(time.monotonic(), deadline, "phase one never began")
            time.sleep(0.05)
        time.sleep(1)
        with open(offset_file, "w") as f:
            f.write("+5\n")
        result = controller.wait(timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        one, two = self.load_json(json_path)["phases"]
        self.assertEqual(one["validity"]["verdict"], "invalid", one["validity"])
        self.assertTrue(one["validity"]["why"].startswith("the clock estimate is good to +-5."),
                        one["validity"])
        self.assertGreater(one["validity"]["clock_uncertainty_nanos"], 4_900_000_000)
        self.assertRegex(result.stdout, r"validity: INVALID: the clock estimate is good to "
                                        r"\+-5\.\d+ s only, more than 1% of the shortest host's "
                                        r"5\.00 s: too poor to say")
        self.assertEqual(two["validity"]["verdict"], "valid", two["validity"])
        # The second phase's sync saw the new offset: the stepped agent is 5 s ahead.
        offsets = {r["host"]: r["clock_offset_nanos"] for r in two["results"]}
        self.assertAlmostEqual(offsets["stepped"] / 1e9, 5.0, delta=0.1)
        for phase in (one, two):
            for row in phase["results"]:
                self.assertEqual(row["status"], "succeeded", row)

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
