"""Environment capture and transport labels on two agents whose targets differ: each agent's
directory is an ext4 filesystem on a loop device this test creates; the test gives one loop
device a different read-ahead. The run, `results show` and `results compare` must say what
differs, label the rows by transport, and let the plan's label win over detection."""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


class EnvironmentTest(h.StormarkTestCase):

    def set_read_ahead(self, device, kb):
        # Our own loop device: changing its queue setting touches nothing else.
        with open(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb", "w") as f:
            f.write(str(kb))

    def test_differing_read_ahead_is_noted_everywhere_and_rows_carry_their_transport(self):
        first, second = [h.start_loop_agent(self, n, "allow_tuning: true\n") for n in ("a", "b")]
        a, dev_a, image_a = first.agent, first.device, first.image
        b, dev_b = second.agent, second.device
        self.set_read_ahead(dev_a, 128)
        self.set_read_ahead(dev_b, 4096)
        work = self.make_dir()
        db = os.path.join(work, "results.db")
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: a, address: "{a.address}"}}
  - {{name: b, address: "{b.address}", labels: {{transport: aoe}}}}
target: scratch
phases:
  - {{name: write, workload: stream, rw: write, size: 8M, bs: 64k, fdatasync: true}}
  - {{name: tuned, workload: stream, rw: write, size: 8M, bs: 64k, fdatasync: true,
      read_ahead_kb: 1024}}
""")
        json_path = os.path.join(work, "out.json")
        first = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--db", db,
                                   "--no-progress"])
        self.assertEqual(first.returncode, 0, first.describe())
        self.assert_no_crash(first)
        out = first.stdout
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(out)

        # The machine description, written from the agents' facts.
        self.assertIn("\nEnvironment\n", out)
        self.assertRegex(out, r"\n  a: Linux [^\n]*cpu_governor \S+")
        self.assertRegex(out, r"\n    vm: dirty_ratio \d+, dirty_background_ratio \d+")
        loop_a = os.path.basename(dev_a)
        self.assertRegex(out, rf"\n    scratch: local \(loop\) {loop_a} on {re.escape(image_a)}; "
                              r"ext4 \([^)]*\); scheduler \S+, read_ahead_kb 128")
        self.assertIn("  ! target scratch differs: read_ahead_kb (a: 128, b: 4096)", out)

        tables = out.split("\nPhase ")
        write, tuned = tables[1], tables[2].split("\nResults:")[0]
        # Rows carry their transport; b's plan label wins over the detected loop device.
        self.assertRegex(write, r"\n  a\s+local\s+scratch ")
        self.assertRegex(write, r"\n  b !\s+AoE\s+scratch ")
        self.assertIn("  ! differs: read_ahead_kb (a: 128, b: 4096)", write)
        self.assertIn("  ! b: labelled 'AoE' in the plan, but the agent detected local (loop); "
                      "the label is shown", write)
        # With the knob, both ran at 1024: the snapshot is taken as each phase starts.
        self.assertNotIn("differs: read_ahead_kb", tuned)

        report = self.load_json(json_path)
        phases = {p["name"]: p for p in report["phases"]}
        self.assertEqual(phases["write"]["environment_differs"]["keys"], ["read_ahead_kb"])
        self.assertEqual(phases["tuned"]["environment_differs"]["keys"], [])
        rows = {r["host"]: r for r in phases["write"]["results"]}
        self.assertEqual(rows["a"]["via"], "local")
        self.assertEqual(rows["b"]["via"], "AoE")
        self.assertFalse(rows["a"]["environment_differs"])
        self.assertTrue(rows["b"]["environment_differs"])
        self.assertEqual(rows["b"]["environment"]["target"]["read_ahead_kb"], "4096")
        self.assertEqual(phases["tuned"]["results"][1]["environment"]["target"]["read_ahead_kb"],
                         "1024")
        self.assertIn("vm.dirty_ratio", rows["a"]["environment"]["host"])
        agent_a = report["agents"][0]
        self.assertEqual(agent_a["targets"][0]["transport"], "local")
        self.assertEqual(agent_a["targets"][0]["transport_detail"], "loop")
        self.assertEqual(agent_a["targets"][0]["environment"]["backing_file"], image_a)
        self.assertIn("cpu_governor", agent_a["environment"])
        # The agents put the knob back.
        with open(f"/sys/block/{loop_a}/queue/read_ahead_kb") as f:
            self.assertEqual(f.read().strip(), "128")

        # Stored with the result: `results show` prints the same notes again.
        show = self.run_stormark(["results", "show", "latest", "--db", db])
        self.assertEqual(show.returncode, 0, show.describe())
        self.assertIn("  ! differs: read_ahead_kb (a: 128, b: 4096)", show.stdout)
        self.assertIn("  ! target scratch differs: read_ahead_kb (a: 128, b: 4096)", show.stdout)
        self.assertRegex(show.stdout, r"\n  b !\s+AoE\s+scratch ")

        # A second run with a's read-ahead changed: the comparison says so.
        self.set_read_ahead(dev_a, 512)
        second = self.run_stormark(["run", "--plan", plan, "--db", db, "--no-progress"])
        self.assertEqual(second.returncode, 0, second.describe())
        run_ids = re.findall(r"run (r\d{8}-\d{6}-[0-9a-f]{4})", first.stdout + second.stdout)
        compare = self.run_stormark(["results", "compare", run_ids[0], run_ids[-1], "--db", db])
        self.assertEqual(compare.returncode, 0, compare.describe())
        self.assertIn("  ! a scratch: differs: read_ahead_kb (A: 128, B: 512)", compare.stdout)
        self.assertRegex(compare.stdout, r"\n  write\s+a !\s+scratch")
        self.assertNotRegex(compare.stdout, r"\n  write\s+b !")


if __name__ == "__main__":
    h.main()
