"""Two real agents and one controller: every host's figures arrive, add up, and are cleaned up."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class TwoAgentsTest(h.StormarkTestCase):

    def setUp(self):
        self.a = self.start_agent("a")
        self.b = self.start_agent("b")
        self.work = self.make_dir()
        self.json_path = os.path.join(self.work, "out.json")

    def check_phase_table(self, table, agents):
        """One row per host, each ok with a throughput, and an 'all hosts' row."""
        for agent in agents:
            rows = h.rows_for(table, agent.address)
            self.assertEqual(len(rows), 1, f"{agent.address} in {table}")
            row = h.parse_row(rows[0], agent.address)
            self.assertEqual(row["status"], "ok", rows[0])
            self.assertEqual(row["target"], "scratch", rows[0])
            self.assertIsNotNone(row["mibps"], rows[0])
            self.assertGreater(row["mibps"], 0, rows[0])
        all_rows = h.rows_for(table, "all hosts")
        self.assertEqual(len(all_rows), 1, table)
        self.assertEqual(h.parse_row(all_rows[0], "all hosts")["status"],
                         f"{len(agents)} hosts")
        self.assertEqual(len(table["rows"]), len(agents) + 1, table)
        self.assertFalse([n for n in table["notes"] if n.startswith("  x ")], table)

    def check_all_hosts(self, phase):
        results = phase["results"]
        total = phase["all_hosts"]
        self.assertIsNotNone(total)
        self.assertEqual(total["status"], "succeeded")
        self.assertEqual(total["hosts"], len(results))
        self.assertEqual(total["bytes"], sum(r["bytes"] for r in results))
        self.assertEqual(total["ops"], sum(r["ops"] for r in results))
        self.assertEqual(total["latency"]["count"], sum(r["latency"]["count"] for r in results))
        self.assertEqual(total["latency"]["max"], max(r["latency"]["max"] for r in results))

    def check_targets_clean(self):
        for agent in (self.a, self.b):
            self.assertEqual(os.listdir(agent.target_dir), [],
                             f"agent {agent.name} left files; its log:\n{agent.log()}")

    def test_write_phase_reports_both_hosts_exactly(self):
        size = 64 * MIB
        result = self.run_stormark(["run", "--agent", self.a.address, "--agent", self.b.address,
                                    "--rw", "write", "--size", "64M", "--bs", "1M",
                                    "--json", self.json_path, "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertEqual(result.stderr, "", result.describe())

        report = self.load_json(self.json_path)
        self.assertEqual([a["host"] for a in report["agents"]], [self.a.address, self.b.address])
        for agent in report["agents"]:
            self.assertEqual(agent["error"], "")
            self.assertTrue(agent["hostname"])
        self.assertFalse(report["interrupted"])
        self.assertEqual(len(report["phases"]), 1)
        phase = report["phases"][0]
        self.assertEqual(phase["name"], "seq-write")
        self.assertEqual(phase["workload"]["rw"], "write")
        self.assertEqual(phase["workload"]["block_size"], MIB)
        self.assertEqual([r["host"] for r in phase["results"]], [self.a.address, self.b.address])
        for agent in (self.a, self.b):
            r = self.result_for(phase, agent.address)
            self.assertEqual(r["target"], "scratch")
            self.assert_succeeded_result(phase, r, size)
        self.check_all_hosts(phase)
        self.assertEqual(phase["all_hosts"]["bytes"], 2 * size)

        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.stdout)
        self.check_phase_table(tables[0], [self.a, self.b])
        self.check_targets_clean()

    def test_default_plan_writes_then_reads(self):
        size = 32 * MIB
        result = self.run_stormark(["run", "--agent", self.a.address, "--agent", self.b.address,
                                    "--size", "32M", "--json", self.json_path, "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)

        report = self.load_json(self.json_path)
        phases = report["phases"]
        self.assertEqual([p["name"] for p in phases], ["seq-write", "seq-read"])
        self.assertEqual([p["workload"]["rw"] for p in phases], ["write", "read"])
        self.assertNotEqual(phases[0]["phase_id"], phases[1]["phase_id"])
        for phase in phases:
            for agent in (self.a, self.b):
                self.assert_succeeded_result(phase, self.result_for(phase, agent.address), size)
            self.check_all_hosts(phase)
            self.assertEqual(phase["all_hosts"]["bytes"], 2 * size)

        tables = h.phase_tables(result.stdout)
        self.assertEqual([t["title"].split()[1] for t in tables], ["1/2", "2/2"], result.stdout)
        for table in tables:
            self.check_phase_table(table, [self.a, self.b])
        self.check_targets_clean()


if __name__ == "__main__":
    h.main()
