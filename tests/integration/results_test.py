"""The results history: `stormark run` records every run in a SQLite file, `stormark results`
lists, shows and compares them, and a controller killed mid-run leaves its finished phases
readable and the run marked incomplete."""

import os
import re
import signal
import sqlite3
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")


class ResultsTest(h.StormarkTestCase):

    def setUp(self):
        self.db = os.path.join(self.make_dir(), "results.db")

    def run_ok(self, args, timeout=120, env=None):
        result = self.run_stormark(args, timeout=timeout, env=env)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        return result

    def run_refused(self, args, *needles):
        """A bad-input command: exit 2 and one 'stormark:' line holding every needle."""
        result = self.run_stormark(args, timeout=60)
        self.assertEqual(result.returncode, 2, result.describe())
        self.assert_no_crash(result)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertTrue(lines[0].startswith("stormark: "), result.describe())
        for needle in needles:
            self.assertIn(needle, lines[0], result.describe())
        return result

    def bench(self, agents, label, *extra):
        args = ["run", "--rw", "write", "--size", "8M", "--db", self.db, "--label", label,
                "--no-progress"] + list(extra)
        for agent in agents:
            args += ["--agent", agent.address]
        result = self.run_ok(args)
        run_id = RUN_ID.search(result.stdout).group(1)
        self.assertIn(f"Results: {self.db} (stormark results show {run_id})", result.stdout)
        return run_id, result

    def results(self, *args):
        return self.run_ok(["results", "--db", self.db] + list(args))

    def test_two_runs_are_listed_shown_and_compared(self):
        a = self.start_agent("a")
        b = self.start_agent("b")
        first, first_run = self.bench([a, b], "before")
        time.sleep(1.1)  # Run ids and start times are per second.
        second, second_run = self.bench([a, b], "after", "--baseline", b.address)
        self.assertIn(f"Compared with {b.address}", second_run.stdout)
        self.assertRegex(second_run.stdout, rf"  {re.escape(b.address)}\s+local\s+scratch\s+1\s+[\d.]+( \*)?\s+1\.00")

        listed = self.results("list").stdout.splitlines()
        self.assertTrue(listed[0].startswith("run "), listed)
        self.assertEqual(len(listed), 3, listed)
        self.assertTrue(listed[1].startswith(second), listed)  # Newest first.
        self.assertTrue(listed[2].startswith(first), listed)
        for line, label in ((listed[1], "after"), (listed[2], "before")):
            self.assertRegex(line, rf"{label}\s+{re.escape(a.address)}, {re.escape(b.address)}"
                                   rf"\s+1/1\s+completed$")

        # `show` prints the tables `run` printed, from the store.
        shown = self.results("show", first[:-2]).stdout
        self.assertEqual(h.phase_tables(shown), h.phase_tables(first_run.stdout))
        self.assertEqual(len(h.phase_tables(shown)), 1)
        for agent in (a, b):
            self.assertIn(agent.address, shown)
        self.assertIn("completed", shown.splitlines()[0])

        compared = self.results("compare", first, "latest").stdout
        self.assertIn(f"A  {first}", compared)
        self.assertIn(f"B  {second}", compared)
        for agent in (a, b):
            self.assertRegex(compared, rf"seq-write\s+{re.escape(agent.address)}\s+scratch\s+1/1"
                                       rf"\s+MiB/s .*noise unknown")
        self.assertIn("all hosts", compared)

        baseline = self.results("show", "latest", "--baseline", a.address).stdout
        self.assertIn(f"Compared with {a.address}", baseline)
        self.assertRegex(baseline, rf"  {re.escape(a.address)}\s+local\s+scratch\s+1\s+[\d.]+( \*)?\s+1\.00")

        # The raw store, as a user's own query would read it.
        with sqlite3.connect(self.db) as db:
            self.assertEqual(db.execute("PRAGMA user_version").fetchone()[0], 7)
            runs = db.execute("SELECT run_id, status, label FROM runs ORDER BY started_unix_nanos")
            self.assertEqual(runs.fetchall(), [(first, "completed", "before"),
                                               (second, "completed", "after")])
            rows = db.execute("SELECT host, status, bytes, result IS NOT NULL FROM host_results "
                              "WHERE run_id = ? ORDER BY host_index", (first,)).fetchall()
            self.assertEqual(rows, [(a.address, "succeeded", 8 * MIB, 1),
                                    (b.address, "succeeded", 8 * MIB, 1)])
            buckets = db.execute("SELECT SUM(count) FROM latency_buckets WHERE run_id = ?",
                                 (first,)).fetchone()[0]
            ops = db.execute("SELECT SUM(ops) FROM host_results WHERE run_id = ?",
                             (first,)).fetchone()[0]
            self.assertEqual(buckets, ops)
            fs = db.execute("SELECT DISTINCT filesystem FROM targets").fetchall()
            self.assertTrue(fs and fs[0][0], fs)

        # Bad input: one line, exit 2.
        self.run_refused(["results", "--db", self.db, "show", "r1999"], "no run 'r1999'")
        self.run_refused(["results", "--db", self.db, "show", "r"], "ambiguous", first, second)
        self.run_refused(["results", "--db", self.db, "show", "latest", "--baseline", "nope"],
                         "--baseline nope")

    def test_default_database_is_under_xdg_data_home(self):
        data_home = self.make_dir()
        env = {"XDG_DATA_HOME": data_home, "TMPDIR": self.make_dir()}
        result = self.run_ok(["run", "--rw", "write", "--size", "8M", "--no-progress"], env=env)
        path = os.path.join(data_home, "stormark", "results.db")
        self.assertIn(f"Results: {path}", result.stdout)
        listed = self.run_ok(["results", "list"], env=env).stdout
        self.assertRegex(listed, r"seq-write\s+local\s+1/1\s+completed")

        skipped = self.run_ok(["run", "--rw", "write", "--size", "8M", "--no-progress",
                               "--no-db"], env=env)
        self.assertNotIn("Results:", skipped.stdout)
        self.assertEqual(len(self.run_ok(["results", "list"], env=env).stdout.splitlines()), 2)

    def test_unusable_database_is_refused_before_anything_runs(self):
        agent = self.start_agent()
        junk = self.write_file(os.path.join(self.make_dir(), "junk.db"), "x" * 4096)
        self.run_refused(["run", "--agent", agent.address, "--rw", "write", "--size", "8M",
                          "--db", junk, "--no-progress"], "results database", junk,
                         "not a database")
        self.assertNotRegex(agent.log(), r"prepared phase")
        self.run_refused(["results", "--db", junk, "list"], junk, "not a database")
        missing = os.path.join(self.make_dir(), "none.db")
        self.run_refused(["results", "--db", missing, "list"], missing)
        self.assertFalse(os.path.exists(missing))

    def test_write_failure_mid_run_is_reported_and_loses_no_other_output(self):
        agent = self.start_agent()
        # A store that accepts the run but refuses its phases.
        self.run_ok(["run", "--agent", agent.address, "--rw", "write", "--size", "8M",
                     "--db", self.db, "--no-progress"])
        with sqlite3.connect(self.db) as db:
            db.execute("CREATE TRIGGER refuse BEFORE INSERT ON phases "
                       "BEGIN SELECT RAISE(ABORT, 'disk on fire'); END")
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--rw", "write", "--size",
                                    "8M", "--db", self.db, "--json", json_path, "--no-progress"])
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertRegex(lines[0], r"^stormark: results database: cannot record the start of "
                                   r"phase 1 'seq-write': .*disk on fire")
        self.assertEqual(len(h.phase_tables(result.stdout)), 1, result.describe())
        self.assertNotIn("Results:", result.stdout)
        report = self.load_json(json_path)
        self.assert_succeeded_result(report["phases"][0], report["phases"][0]["results"][0],
                                     8 * MIB)
        # The run row stays as the crash rule reads it: started, never ended.
        listed = self.results("list").stdout.splitlines()
        self.assertRegex(listed[1], r"0/1\s+incomplete$")

    def test_report_reads_trimmed_phases_back_and_a_lost_phase_is_one_line(self):
        # A phase's results leave the controller's memory once the database holds them; the
        # --json report reads them back at the end (docs/results-and-reports.md, "Results
        # history"). Whole when the file is intact; when another process deletes a finished
        # phase's rows while the run goes on, one line and exit 1, and the report is still
        # written, that phase with the figures the controller kept.
        agent = self.start_agent()
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), (
            "phases:\n"
            "  - {name: quick, workload: stream, rw: write, size: 8M}\n"
            "  - {name: timed, workload: randio, rw: randread, bs: 4k, size: 8M, runtime: 4s,\n"
            "     time_based: true, rate_iops: 200}\n"))
        work = self.make_dir()
        whole_json = os.path.join(work, "whole.json")
        self.run_ok(["run", "--agent", agent.address, "--plan", plan, "--db", self.db,
                     "--json", whole_json, "--no-progress"])
        whole = self.load_json(whole_json)
        quick = whole["phases"][0]["results"][0]
        self.assertGreater(len(quick["series"]), 0)
        self.assertGreater(len(quick["environment"]["host"]), 0)

        cut_json = os.path.join(work, "cut.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--plan", plan, "--db",
                                   self.db, "--json", cut_json, "--no-progress"])
        deadline = time.monotonic() + 60
        while True:
            self.assertLess(time.monotonic(), deadline, "phase 1 of the second run never ended")
            self.assertIsNone(ctl.proc.poll(), "the run ended before its rows could be deleted")
            with sqlite3.connect(self.db, timeout=10) as db:
                ended = db.execute(
                    "SELECT p.run_id FROM phases p JOIN runs r USING (run_id) WHERE "
                    "p.phase_index = 0 AND p.finished = 1 AND r.finished_unix_nanos IS NULL"
                ).fetchall()
                if ended:
                    db.execute("DELETE FROM host_results WHERE run_id = ? AND phase_index = 0",
                               (ended[0][0],))
                    break
            time.sleep(0.05)
        ctl.proc.wait(timeout=60)
        result = h.Result(ctl.args, ctl.proc.returncode, ctl.stdout(), ctl.stderr())
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertRegex(lines[0], r"^stormark: --json: written with summaries only: the results "
                                   r"database no longer holds the result of host \S+ in phase 1$")
        cut = self.load_json(cut_json)
        kept = cut["phases"][0]["results"][0]
        self.assertEqual(kept["bytes"], 8 * MIB)
        self.assertEqual(kept["status"], "succeeded")
        self.assertEqual(kept["series"], [])
        self.assertGreater(len(cut["phases"][1]["results"][0]["series"]), 0)
        # The agent still serves.
        self.run_ok(["run", "--agent", agent.address, "--rw", "write", "--size", "8M",
                     "--no-db", "--no-progress"])

    def test_window_is_measured_from_stored_series_and_a_lost_series_is_one_line(self):
        # Each host's series leaves the controller's memory as its row is written; the phase's
        # validity line measures the window in which both hosts ran from the stored rows
        # (docs/results-and-reports.md, "Results history"). Then another process edits the
        # file so that every series row is deleted as it is written: one line, exit 1, the
        # window pro rata and saying so, and the --json report (read from the results' own
        # copies) still whole.
        a = self.start_agent("a")
        b = self.start_agent("b")
        work = self.make_dir()
        args = ["run", "--agent", a.address, "--agent", b.address, "--workload", "randio",
                "--set", "rw=randread", "--size", "8M", "--set", "runtime=2s", "--set",
                "time_based=true", "--set", "rate_iops=500",
                "--db", self.db, "--no-progress"]
        intact = self.run_ok(args + ["--json", os.path.join(work, "intact.json")])
        window = re.search(r"all 2 hosts ran together for .*", intact.stdout)
        self.assertIsNotNone(window, intact.stdout)
        self.assertNotIn("pro rata", window.group(0))
        with sqlite3.connect(self.db, timeout=10) as db:
            db.execute("CREATE TRIGGER lose_series AFTER INSERT ON series BEGIN DELETE FROM "
                       "series WHERE run_id = NEW.run_id AND phase_index = NEW.phase_index AND "
                       "host_index = NEW.host_index AND offset_nanos = NEW.offset_nanos; END")
        lost_json = os.path.join(work, "lost.json")
        lost = self.run_stormark(args + ["--json", lost_json], timeout=120)
        self.assertEqual(lost.returncode, 1, lost.describe())
        self.assert_no_crash(lost)
        lines = lost.stderr.splitlines()
        self.assertEqual(len(lines), 1, lost.describe())
        self.assertRegex(lines[0], r"^stormark: phase 1 '[^']+': the window in which all hosts "
                                   r"ran is estimated pro rata: reading the hosts' series back: "
                                   r"0 samples of host \S+'s series are stored, where its result "
                                   r"had [1-9]\d*$")
        self.assertRegex(lost.stdout, r"all 2 hosts ran together for .*\(pro rata")
        report = self.load_json(lost_json)
        for result in report["phases"][0]["results"]:
            self.assertGreater(len(result["series"]), 0, result["host"])
        # Both agents still serve.
        self.run_ok(["run", "--agent", a.address, "--agent", b.address, "--rw", "write",
                     "--size", "8M", "--no-db", "--no-progress"])

    def test_two_controllers_write_one_new_database_at_once_under_load(self):
        """Attack: two controllers create and write the same new results file at the same
        moment, each a fleet of simulated agents whose results carry long series (the writer
        seconds behind). Both runs are recorded whole: each one's export is byte for byte its
        own --json report, and the file passes SQLite's integrity check."""
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                        "bench"))
        import fleet_sim  # noqa: E402  bench/fleet_sim.py: the simulator, stopped by PID.
        agents, base = 300, self.make_dir()
        sims = []
        for i in range(2):
            sim = fleet_sim.Simulator(agents, base, 0, i, series_interval_ms=10)
            self.addCleanup(sim.stop)
            sims.append(sim)
        for sim in sims:
            sim.ready()
        controllers, reports = [], []
        for i, sim in enumerate(sims):
            reports.append(os.path.join(base, f"run-{i}.json"))
            args = ["run", "--workload", "randio", "--target", "sink", "--set", "rw=randread",
                    "--set", "rate_iops=200", "--set", "runtime=3s", "--set", "time_based=true",
                    "--set", "repeat=2", "--db", self.db, "--json", reports[i], "--no-progress",
                    "--label", f"fleet {i}"]
            for port in sim.ports:
                args += ["--agent", f"127.0.0.1:{port}"]
            controllers.append(self.start_stormark(args))
        runs = []
        for c in controllers:
            result = c.wait(timeout=300)
            self.assertEqual(result.returncode, 0, result.describe())
            self.assert_no_crash(result)
            runs.append(RUN_ID.search(result.stdout).group(1))
        listed = self.results("list").stdout
        for i, run_id in enumerate(runs):
            self.assertRegex(listed, rf"{run_id} .* fleet {i} .* 2/2 +completed", listed)
            export = os.path.join(base, f"export-{i}.json")
            self.results("export", run_id, "--format", "json", "-o", export)
            with open(export, "rb") as a, open(reports[i], "rb") as b:
                self.assertTrue(a.read() == b.read(), f"run {run_id}: export differs from --json")
        with sqlite3.connect(self.db) as db:
            self.assertEqual(db.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            for run_id in runs:
                rows = db.execute("SELECT count(*) FROM host_results WHERE run_id = ?",
                                  (run_id,)).fetchone()[0]
                self.assertEqual(rows, 2 * agents, run_id)
                samples = db.execute("SELECT count(*) FROM series WHERE run_id = ?",
                                     (run_id,)).fetchone()[0]
                self.assertGreater(samples, 2 * agents * 250, run_id)

    def test_killed_controller_leaves_finished_phases_and_an_incomplete_run(self):
        agent = self.start_agent(extra_config="commands: {enabled: true}\n")
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), (
            "setup:\n"
            "  - 'true'\n"
            "phases:\n"
            "  - name: quick\n"
            "    workload: stream\n"
            "    rw: write\n"
            "    size: 8M\n"
            # Long and unsynced, so it is surely under way when the controller dies.
            "  - name: long\n"
            "    workload: stream\n"
            "    rw: write\n"
            "    size: 4G\n"
            "    bs: 4k\n"
            "    direct: true\n"
            "    fdatasync: false\n"))
        ctl = self.start_stormark(["run", "--agent", agent.address, "--plan", plan,
                                   "--db", self.db, "--no-progress"])
        # Ids count the setup hook too: RUN-1-setup-1, then quick RUN-2 and long RUN-3.
        agent.wait_for_log(r"run phase '[^']+-3'", timeout=60)
        ctl.proc.send_signal(signal.SIGKILL)
        ctl.proc.wait(timeout=10)

        with sqlite3.connect(self.db) as db:
            (run_id, status, finished), = db.execute(
                "SELECT run_id, status, finished_unix_nanos FROM runs").fetchall()
            self.assertEqual((status, finished), ("running", None))
            # The phase in flight has its row, unfinished, and no host's result yet.
            phases = db.execute("SELECT phase_index, name, finished FROM phases").fetchall()
            self.assertEqual(phases, [(0, "quick", 1), (1, "long", 0)])
            rows = db.execute("SELECT phase_index, status, bytes, bytes_per_second > 0 "
                              "FROM host_results").fetchall()
            self.assertEqual(rows, [(0, "succeeded", 8 * MIB, 1)])

        listed = self.results("list").stdout
        self.assertRegex(listed, rf"{run_id} .*1/2\s+incomplete")
        shown = self.results("show", run_id).stdout
        self.assertIn("incomplete", shown.splitlines()[0])
        self.assertIn("1 of 2 phases were recorded, and the results that had come in of the "
                      "phase it stopped in", shown)
        tables = h.phase_tables(shown)
        self.assertEqual([t["title"].split(":")[0] for t in tables],
                         ["Phase 1/2  quick", "Phase 2/2  long"])
        self.assertEqual(h.parse_row(tables[0]["rows"][0], agent.address)["status"], "ok")
        self.assertEqual(h.parse_row(tables[1]["rows"][0], agent.address)["status"], "ERROR")
        self.assertIn(f"x {agent.address}: no result recorded: the phase had not ended", shown)
        # The setup hook was recorded as it ran, so the killed run still shows it.
        self.assertIn("  setup `true`: ok on 1 host", shown)


if __name__ == "__main__":
    h.main()
