"""Many agents in one run: 50 agents on loopback ports, one timed randio phase on their null
targets at one instant. The run completes on every agent within a bounded time and the start
skew is reported. The full-size measurement is bench/scale.py (200 agents)."""

import os
import re
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
        work = self.make_dir()
        json_path = os.path.join(work, "out.json")
        db = os.path.join(work, "results.db")
        args = ["run", "--workload", "randio", "--target", "sink", "--set", "rw=randread",
                "--set", "rate_iops=200", "--set", "runtime=2s", "--set", "time_based=true",
                "--json", json_path, "--db", db,
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
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout, file=sys.stderr)

        # Past 32 hosts the tables are groups: the agents in a few lines, the phase a row per
        # group with the hosts' spread; the JSON above kept every host.
        out = result.stdout
        self.assertIn(f"  {AGENTS} agents: {AGENTS} answering\n", out)
        self.assertIn(f"  {AGENTS} hosts in 1 group by via and target; --all-hosts prints a row "
                      "per host and the randio table\n", out)
        group = [l for l in out.splitlines() if l.startswith("  sink ")]
        self.assertEqual(len(group), 1, out)
        self.assertRegex(group[0], rf"^  sink +{AGENTS} +\d+ +\d+ \*? +\d+ +\d+ +\d+ .* "
                                   rf"{AGENTS} ok$")
        self.assertFalse([l for l in out.splitlines() if l.startswith(f"  {agents[7].address} ")],
                         out)
        self.assertLess(len(out.splitlines()), 40, out)
        # `results show` prints the same groups, and with --all-hosts a row per host.
        show = self.run_stormark(["results", "show", "latest", "--db", db])
        self.assertEqual(show.returncode, 0, show.describe())
        self.assertIn(group[0], show.stdout)
        every = self.run_stormark(["results", "show", "latest", "--db", db, "--all-hosts"])
        self.assertEqual(every.returncode, 0, every.describe())
        for agent in agents:
            self.assertRegex(every.stdout, rf"\n  {re.escape(agent.address)} +sink ")
        bad = self.run_stormark(["results", "show", "latest", "--db", db, "--group-by", "rack"])
        self.assertEqual(bad.returncode, 2, bad.describe())
        self.assertEqual(bad.stderr, "stormark: bad --group-by 'rack': give via (how the storage "
                                     "is reached, and the target), target, or label:KEY\n")

        # The HTML report draws the groups too: the same table, a chart line per group, and
        # a host on its own only when it stands out; with --all-hosts, a line per host.
        page = os.path.join(work, "report.html")
        report = self.run_stormark(["report", "latest", "--db", db, "-o", page])
        self.assertEqual(report.returncode, 0, report.describe())
        with open(page, encoding="utf-8") as f:
            html = f.read()
        self.assertIn(f"  {AGENTS} hosts in 1 group by via and target; --all-hosts prints a row "
                      "per host", html)
        self.assertIn(f'data-name="sink ({AGENTS} hosts)"', html)
        self.assertIn("the hosts&#39; MiB/s summed", html)
        drawn = [a for a in agents if f'data-name="{a.address} (' in html]
        self.assertLessEqual(len(drawn), 8, drawn)
        every_page = os.path.join(work, "every.html")
        every = self.run_stormark(["report", "latest", "--db", db, "-o", every_page,
                                   "--all-hosts"])
        self.assertEqual(every.returncode, 0, every.describe())
        with open(every_page, encoding="utf-8") as f:
            every_html = f.read()
        for agent in agents:
            self.assertIn(f'data-name="{agent.address}"', every_html)
        self.assertLess(len(html), len(every_html))
        bad = self.run_stormark(["report", "latest", "--db", db, "-o", page, "--group-by", "rack"])
        self.assertEqual(bad.returncode, 2, bad.describe())
        self.assertEqual(bad.stderr, "stormark: bad --group-by 'rack': give via (how the storage "
                                     "is reached, and the target), target, or label:KEY\n")


if __name__ == "__main__":
    h.main()
