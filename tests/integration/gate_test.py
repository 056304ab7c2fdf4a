"""The CI gate: `stormark results compare --baseline RUN --fail-if-slower 10%` passes on a rerun
of the same configuration, fails (exit 1) on an injected slowdown (a rate-limited randio in the
candidate run), and writes JUnit XML and a Markdown summary that say which figure regressed."""

import os
import re
import sys
import unittest
import xml.etree.ElementTree as ET

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")
RATE = 400  # IOPS per host, so the figure is set by the limit, not by this machine's load.


class GateTest(h.StormarkTestCase):

    def setUp(self):
        self.agents = [self.start_agent(n) for n in ("g1", "g2")]
        self.work = self.make_dir()
        self.db = os.path.join(self.work, "results.db")
        self.plan = self.write_file(os.path.join(self.work, "randio.yaml"), f"""
repeat: 3
phases:
  - {{name: randread, workload: randio, rw: randread, bs: 4k, size: 16M, runtime: 1s,
      time_based: true, rate_iops: {RATE}}}
""")

    def bench(self, *extra, agents=None):
        args = ["run", "--plan", self.plan, "--db", self.db, "--no-progress"] + list(extra)
        for agent in agents or self.agents:
            args += ["--agent", agent.address]
        result = self.run_stormark(args, timeout=240)
        self.assertEqual(result.returncode, 0, result.describe())
        return RUN_ID.search(result.stdout).group(1)

    def gate(self, *args):
        # Throughput only: the injected slowdown is a rate limit, and the latency of 4 KiB
        # reads from the page cache on a shared 2-core machine moves by more than 10% between
        # any two runs (the default metrics also gate p50/p99 latency and elapsed time).
        result = self.run_stormark(["results", "--db", self.db, "compare", "--fail-if-slower",
                                    "10%", "--metric", "ops/s", "--metric", "MiB/s"] +
                                   list(args))
        self.assert_no_crash(result)
        return result

    def test_gate_passes_a_rerun_and_fails_a_slowdown(self):
        first = self.bench()
        second = self.bench()
        # The same plan and label: latest-same-plan finds the first run.
        passed = self.gate("--baseline", "latest-same-plan", "--junit",
                           os.path.join(self.work, "pass.xml"))
        self.assertEqual(passed.returncode, 0, passed.describe())
        self.assertIn(f"A  {first}", passed.stdout)
        self.assertIn(f"B  {second}", passed.stdout)
        # 4 figures, and the validity verdict of each of the 3 runs of the phase on 2 hosts.
        self.assertRegex(passed.stdout, r"gate: PASSED: none of 7 checks is slower than 10\.0%")
        suite = ET.parse(os.path.join(self.work, "pass.xml")).getroot()
        self.assertEqual((suite.get("tests"), suite.get("failures")), ("7", "0"))

        # The injected slowdown: a quarter of the rate.
        slow = self.bench("--set", f"phases.0.rate_iops={RATE // 4}")
        junit = os.path.join(self.work, "gate.xml")
        markdown = os.path.join(self.work, "gate.md")
        failed = self.gate("--baseline", second, slow, "--junit", junit, "--markdown", markdown)
        self.assertEqual(failed.returncode, 1, failed.describe())
        self.assertRegex(failed.stdout, r"gate: FAILED: 4 of 7 checks regressed past 10\.0%")
        for agent in self.agents:
            self.assertRegex(failed.stdout, rf"randread\s+{re.escape(agent.address)}\s+scratch\s+"
                                            rf"ops/s .*7\d\.\d% slower, beyond the noise")

        suite = ET.parse(junit).getroot()
        self.assertEqual(suite.tag, "testsuites")
        self.assertEqual((suite.get("tests"), suite.get("failures")), ("7", "4"))
        cases = suite.findall("./testsuite/testcase")
        validity = [c for c in cases if c.get("name") == "all hosts  validity"]
        self.assertEqual(len(validity), 3, [c.get("name") for c in cases])
        for case in validity:  # The hosts ran together: a slow run is still a valid one.
            self.assertIsNone(case.find("failure"), ET.tostring(case))
        cases = [c for c in cases if c not in validity]
        self.assertEqual(sorted(c.get("name") for c in cases),
                         sorted(f"{a.address} scratch {m}" for a in self.agents
                                for m in ("MiB/s", "ops/s")))
        for case in cases:
            self.assertEqual(case.get("classname"), "stormark.randread")
            failure = case.find("failure")
            self.assertIsNotNone(failure, ET.tostring(case))
            self.assertIn("beyond the noise", failure.get("message"))
        md = h.read_text(markdown)
        self.assertTrue(md.startswith("### stormark gate: FAILED: 4 of 7 checks"), md)
        self.assertIn(f"Candidate `{slow}` against baseline `{second}`", md)
        self.assertEqual(md.count("| FAIL | randread |"), 4, md)

        # The slowed run has no earlier run with its plan: an error, not a pass.
        missing = self.gate("--baseline", "latest-same-plan", slow)
        self.assertEqual(missing.returncode, 2, missing.describe())
        self.assertIn("no completed run before", missing.stderr)
        self.assertIn("2 earlier completed runs with that label ran other phases", missing.stderr)

        # The same plan on fewer hosts is no baseline for the full set, nor the other way.
        alone = self.bench(agents=self.agents[:1])
        other = self.gate("--baseline", "latest-same-plan", alone)
        self.assertEqual(other.returncode, 2, other.describe())
        self.assertIn("the same plan and the same hosts", other.stderr)
        self.assertIn("2 ran the same plan on other hosts", other.stderr)

        # Bad input is one line and exit 2.
        bad = self.run_stormark(["results", "--db", self.db, "compare", "--baseline", first,
                                 "--fail-if-slower", "ten"])
        self.assertEqual(bad.returncode, 2, bad.describe())
        self.assertEqual(len(bad.stderr.splitlines()), 1, bad.describe())


if __name__ == "__main__":
    h.main()
