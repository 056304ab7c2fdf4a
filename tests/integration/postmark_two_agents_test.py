"""Two real agents run one PostMark script from a plan: the phases come out side by side.

A plan phase takes the script with `config:` (relative to the plan); the script's two `run`
lines make two phases. The first prints the comparison table (a row per figure, a column per
host), the second PostMark's terse line per host. Both hosts ran the same seed, so their counts
are equal, and the table's counts are the JSON's. Sizes are tiny: this is about the wiring and
the format, not the figures (postmark_vs_postmark_test.py checks those).
"""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

SCRIPT = """set number 300
set size 500 4000
set transactions 3000
set subdirectories 3
run
set report terse
set transactions 1000
run
show
"""


class PostmarkTwoAgentsTest(h.StormarkTestCase):

    def setUp(self):
        self.a = self.start_agent("a")
        self.b = self.start_agent("b")
        self.work = self.make_dir()
        self.write_file(os.path.join(self.work, "pm.cfg"), SCRIPT)
        self.plan = self.write_file(
            os.path.join(self.work, "plan.yaml"),
            "phases:\n  - {name: pm, workload: postmark, config: pm.cfg, seed: 11}\n")
        self.json_path = os.path.join(self.work, "out.json")

    def table_cells(self, stdout, label):
        """The cells of the comparison table's row `label` (the first such row)."""
        for line in stdout.splitlines():
            if line.startswith("  " + label + "  "):
                return line[len(label) + 2:].split()
        raise AssertionError(f"no row '{label}' in:\n{stdout}")

    def test_script_phases_print_a_side_by_side_table_and_terse_lines(self):
        result = self.run_stormark(["run", "--plan", self.plan, "--agent", self.a.address,
                                    "--agent", self.b.address, "--json", self.json_path,
                                    "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertIn("pm.cfg:9: 'show' ignored", result.stderr)
        out = result.stdout
        self.assertIn("Phase 1/2  pm-1: postmark 300 files of 500-4000 B, 3000 transactions, "
                      "3 subdirectories, seed 11", out)
        self.assertIn("Phase 2/2  pm-2: postmark 300 files of 500-4000 B, 1000 transactions", out)

        header = [l for l in out.splitlines() if l.startswith("  PostMark ")]
        self.assertEqual(len(header), 1, out)
        self.assertEqual(header[0].split()[1:], [self.a.address, self.b.address])
        report = self.load_json(self.json_path)
        phases = report["phases"]
        self.assertEqual([p["name"] for p in phases], ["pm-1", "pm-2"])
        counts = []
        for host in phases[0]["results"]:
            self.assertEqual(host["status"], "succeeded", host)
            m = {x["name"]: x for x in host["measurements"]}
            counts.append((m["create_alone"]["ops"] + m["create_mixed"]["ops"], m["read"]["ops"],
                           m["append"]["ops"], m["delete_alone"]["ops"] + m["delete_mixed"]["ops"]))
            self.assertEqual(host["resolved"]["seed"], "11")
            self.assertEqual(m["transactions"]["ops"], 3000)
        self.assertEqual(counts[0], counts[1], "same seed, same counts")
        created, read, appended, deleted = counts[0]
        self.assertEqual(self.table_cells(out, "files created"), [str(created)] * 2)
        self.assertEqual(self.table_cells(out, "files read"), [str(read)] * 2)
        self.assertEqual(self.table_cells(out, "files appended"), [str(appended)] * 2)
        self.assertEqual(self.table_cells(out, "files deleted"), [str(deleted)] * 2)

        # PostMark's terse report: a table with the host in its own column, then PostMark's
        # thirteen figures, the two times whole seconds as PostMark prints them.
        headers = [l.split() for l in out.splitlines() if l.startswith("host ")]
        self.assertEqual(len(headers), 1, out)
        self.assertEqual(len(headers[0]), 14, headers[0])
        for agent in (self.a, self.b):
            rows = [l.split() for l in out.splitlines()
                    if l.split()[:1] == [agent.address] and len(l.split()) == 14]
            self.assertEqual(len(rows), 1, out)
            self.assertRegex(rows[0][1], r"^[1-9][0-9]*$", rows[0])
            self.assertRegex(rows[0][2], r"^[1-9][0-9]*$", rows[0])
        # Never "host: figures", which reads every field one place off.
        self.assertNotRegex(out, rf"(?m)^{re.escape(self.a.address)}: [0-9]")
        for agent in (self.a, self.b):
            self.assertEqual(os.listdir(agent.target_dir), [], agent.log())


if __name__ == "__main__":
    h.main()
