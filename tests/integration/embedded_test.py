"""`stormark run` without --agent: it starts its own agent, and leaves nothing behind."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class EmbeddedTest(h.StormarkTestCase):

    def setUp(self):
        # The controller makes its work directory (config, socket, log) under $TMPDIR.
        self.tmpdir = self.make_dir("stormark-itest-tmpdir-")
        self.env = {"TMPDIR": self.tmpdir}
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def check_local_result(self, phase, size_bytes):
        self.assertEqual(len(phase["results"]), 1)
        result = phase["results"][0]
        self.assertEqual(result["host"], "local")
        self.assert_succeeded_result(phase, result, size_bytes)
        self.assertEqual(phase["all_hosts"]["bytes"], size_bytes)

    def test_write_on_a_given_dir_leaves_it_and_tmpdir_empty(self):
        data = self.make_dir("stormark-itest-data-")
        result = self.run_stormark(["run", "--rw", "write", "--size", "32M", "--dir", data,
                                    "--json", self.json_path, "--no-progress"], env=self.env)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertEqual(result.stderr, "", result.describe())
        self.assertIn(f"(embedded, on {data})", result.stdout)

        report = self.load_json(self.json_path)
        self.assertEqual([a["host"] for a in report["agents"]], ["local"])
        self.assertEqual(report["agents"][0]["error"], "")
        self.assertEqual(report["agents"][0]["targets"][0]["path"], data)
        self.assertEqual(len(report["phases"]), 1)
        self.check_local_result(report["phases"][0], 32 * MIB)

        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.stdout)
        rows = h.rows_for(tables[0], "local")
        self.assertEqual(len(rows), 1, result.stdout)
        self.assertEqual(h.parse_row(rows[0], "local")["status"], "ok")
        self.assertEqual(h.rows_for(tables[0], "all hosts"), [], "one host: no 'all hosts' row")

        self.assertEqual(os.listdir(data), [])
        self.assertEqual(os.listdir(self.tmpdir), [], "the controller's work directory remains")

    def test_default_dir_is_made_under_tmpdir_and_removed(self):
        result = self.run_stormark(["run", "--size", "16M", "--json", self.json_path,
                                    "--no-progress"], env=self.env)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        # The data directory was inside our TMPDIR, so the run did use it.
        self.assertIn(f"(embedded, on {self.tmpdir}/", result.stdout)

        report = self.load_json(self.json_path)
        self.assertEqual([p["name"] for p in report["phases"]], ["seq-write", "seq-read"])
        for phase in report["phases"]:
            self.check_local_result(phase, 16 * MIB)
        self.assertEqual(os.listdir(self.tmpdir), [], "the controller's work directory remains")

    def check_bad_dir(self, bad, why):
        result = self.run_stormark(["run", "--rw", "write", "--size", "8M", "--dir", bad,
                                    "--no-progress"], env=self.env)
        self.assertEqual(result.returncode, 2, result.describe())  # bad input: nothing ran
        self.assert_no_crash(result)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertTrue(lines[0].startswith(f"stormark: --dir {bad}: "), result.describe())
        self.assertIn(why, lines[0])
        self.assertNotIn("Phase ", result.stdout)
        self.assertEqual(os.listdir(self.tmpdir), [], "no embedded agent was started")

    def test_missing_dir_is_bad_input(self):
        missing = os.path.join(self.make_dir(), "missing")
        self.check_bad_dir(missing, "No such file or directory")
        self.assertFalse(os.path.exists(missing))

    def test_dir_that_is_a_file_is_bad_input(self):
        path = self.write_file(os.path.join(self.make_dir(), "a-file"), "x")
        self.check_bad_dir(path, "not a directory")

if __name__ == "__main__":
    h.main()
