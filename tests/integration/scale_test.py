"""Many agents in one run: 50 agents on loopback ports, one timed randio phase on their null
targets at one instant. The run completes on every agent within a bounded time and the start
skew is reported. The full-size measurement is bench/scale.py (200 agents)."""

import os
import resource
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

AGENTS = 50


class ScaleTest(h.StormarkTestCase):

    def test_fifty_agents_run_one_phase_together(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
        agents = [self.start_agent(f"s{i}", extra_targets="  sink: {null: true}\n")
                  for i in range(AGENTS)]
        json_path = os.path.join(self.make_dir(), "out.json")
        args = ["run", "--workload", "randio", "--target", "sink", "--set", "rw=randread",
                "--set", "rate_iops=200", "--set", "runtime=2s", "--set", "time_based=true",
                "--json", json_path,
                "--no-progress"]
        for agent in agents:
            args += ["--agent", agent.address]
        result = self.run_stormark(args, timeout=120)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        phase = self.load_json(json_path)["phases"][0]
        self.assertEqual(len(phase["results"]), AGENTS)
        for r in phase["results"]:
            self.assertEqual(r["status"], "succeeded", r)
            self.assertGreater(r["ops"], 0, r)
        # Skew is measured and printed; its size depends on this machine's load.
        self.assertIsNotNone(phase["start_skew_nanos"])
        self.assertGreaterEqual(phase["start_skew_nanos"], 0)
        self.assertIn("start skew", result.stdout)
        lates = sorted(r["start_late_nanos"] for r in phase["results"])
        # Every agent started within a second of the common instant, even on a busy machine.
        self.assertLess(lates[-1], 1_000_000_000, lates)
        self.assertEqual(len([l for l in result.stdout.splitlines() if l.startswith("  x ")]), 0)


if __name__ == "__main__":
    h.main()
