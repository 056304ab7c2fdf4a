"""The controller interrupted or killed mid-phase: the agents abort the phase and remove its
files, and an interrupted run still writes its report and exits 130."""

import json
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

GIB = 1 << 30
# Unsynced, so the workload notices an abort between blocks; see agent_sigterm_test.py.
SIZES = (("1G", GIB), ("4G", 4 * GIB))
SIGNAL_AFTER_RUN_SECONDS = 0.4


class ControllerInterruptedTest(h.StormarkTestCase):

    def start_long_phase(self, agents, json_path):
        """Starts a write on `agents` and waits until it is under way on the first. Returns the
        controller and the phase id."""
        for size, size_bytes in SIZES:
            args = ["run", "--rw", "write", "--size", size, "--direct", "--bs", "4k", "--no-fdatasync", "--no-progress",
                    "--json", json_path]
            for agent in agents:
                args += ["--agent", agent.address]
            ctl = self.start_stormark(args)
            # The first phase id seen in this attempt's log lines.
            start = len(agents[0].log())
            deadline = time.monotonic() + 60
            while not re.search(r"run phase '([^']+)'", agents[0].log()[start:]):
                self.assertLess(time.monotonic(), deadline, agents[0].log())
                if not ctl.running():
                    self.fail(f"stormark ended early:\n{ctl.wait().describe()}")
                time.sleep(0.02)
            phase_id = re.search(r"run phase '([^']+)'", agents[0].log()[start:]).group(1)
            time.sleep(SIGNAL_AFTER_RUN_SECONDS)
            if not re.search(r"phase '%s' (SUCCEEDED|FAILED|ABORTED)" % re.escape(phase_id),
                             agents[0].log()):
                return ctl, phase_id, size_bytes
            ctl.wait(timeout=240)  # Finished already; try a longer phase.
        self.fail("every phase finished before the controller could be stopped")

    def test_sigint_aborts_every_agent_and_exits_130(self):
        self.check_interrupted_by(signal.SIGINT)

    def test_sighup_is_an_interrupt_too(self):
        # The terminal or ssh session the run was started from went away.
        self.check_interrupted_by(signal.SIGHUP)

    def check_interrupted_by(self, sig):
        a = self.start_agent("a")
        b = self.start_agent("b")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl, phase_id, size_bytes = self.start_long_phase([a, b], json_path)
        ctl.proc.send_signal(sig)
        result = ctl.wait(timeout=60)
        self.assertEqual(result.returncode, 130, result.describe())
        self.assert_no_crash(result)
        self.assertIn("stormark: interrupted", result.stderr)

        report = self.load_json(json_path)
        self.assertTrue(report["interrupted"])
        phase = report["phases"][0]
        self.assertEqual(phase["phase_id"], phase_id)
        for agent in (a, b):
            r = self.result_for(phase, agent.address)
            self.assertEqual(r["status"], "aborted", r)
            self.assertLess(r["bytes"], size_bytes)
            agent.wait_for_log(r"phase '%s' ABORTED" % re.escape(phase_id), timeout=10)
            self.assertEqual(os.listdir(agent.target_dir), [], agent.log())
            self.assertIsNone(agent.proc.poll(), "the agent keeps serving")

        # The results database has the run as interrupted, with the aborted phase.
        with sqlite3.connect(self.default_results_db()) as db:
            run_id, status = db.execute("SELECT run_id, status FROM runs "
                                        "ORDER BY started_unix_nanos DESC LIMIT 1").fetchone()
            self.assertEqual(status, "interrupted")
            self.assertEqual(report["run_id"], run_id)
            rows = db.execute("SELECT status FROM host_results WHERE run_id = ?",
                              (run_id,)).fetchall()
            self.assertEqual(rows, [("aborted",), ("aborted",)])

    def test_an_interrupt_still_runs_the_points_teardown(self):
        # What a setup hook did (here a marker; in a real sweep, a mount over the target) must
        # not outlive an interrupted run: the teardown runs, bounded, and the output says so.
        agent = self.start_agent("a", extra_config="commands: {enabled: true, user: root}\n")
        marker = os.path.join(self.make_dir(), "mounted")
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
setup:
  - touch {marker}
teardown:
  - rm {marker}
phases:
  - {{name: w, workload: stream, rw: write, size: 4G, bs: 4k, direct: true, fdatasync: false}}
""")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--plan", plan,
                                   "--no-progress", "--no-db"])
        deadline = time.monotonic() + 60
        while len(re.findall(r"run phase '", agent.log())) < 2:
            self.assertLess(time.monotonic(), deadline, agent.log())
            if not ctl.running():
                self.fail(f"stormark ended early:\n{ctl.wait().describe()}")
            time.sleep(0.02)
        self.assertTrue(os.path.exists(marker), "the setup ran")
        time.sleep(SIGNAL_AFTER_RUN_SECONDS)
        ctl.proc.send_signal(signal.SIGINT)
        result = ctl.wait(timeout=120)
        self.assertEqual(result.returncode, 130, result.describe())
        self.assert_no_crash(result)
        self.assertRegex(result.stdout, r"teardown `rm [^`]*` after the interrupt \(at most "
                                        r"60\.0 s\): ok on 1 host")
        self.assertIn("status: interrupted:", result.stdout)
        self.assertFalse(os.path.exists(marker), "the teardown ran after the interrupt")
        # The agent's log names hooks as hooks, not as numbered phases.
        self.assertRegex(agent.log(), r"phase '[^']*-setup-1'")
        self.assertRegex(agent.log(), r"phase '[^']*-teardown-1'")

    def test_killed_controller_makes_the_agent_remove_its_files(self):
        agent = self.start_agent()
        ctl, phase_id, _ = self.start_long_phase([agent], os.path.join(self.make_dir(), "o.json"))
        self.assertEqual(agent.phase_dirs(), [f".stormark-{phase_id}"])
        ctl.proc.send_signal(signal.SIGKILL)
        ctl.proc.wait(timeout=10)
        agent.wait_for_log(r"phase '%s' ABORTED: .*went away" % re.escape(phase_id), timeout=30)
        # The log line comes just before the files are removed; allow for that.
        deadline = time.monotonic() + 10
        while os.listdir(agent.target_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(os.listdir(agent.target_dir), [], agent.log())

        # The slot is free: a new run on the same agent succeeds.
        json_path = os.path.join(self.make_dir(), "again.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--rw", "write",
                                    "--size", "8M", "--json", json_path, "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        phase = self.load_json(json_path)["phases"][0]
        self.assert_succeeded_result(phase, phase["results"][0], 8 << 20)

    def test_a_killed_controller_leaves_the_results_that_had_arrived(self):
        # One host after another: a's result is in, b is running, and the controller dies. The
        # database keeps a's row (written as it came, not at the phase's end), and `results
        # show` gives b a row that says why it has no figures.
        a = self.start_agent("a")
        b = self.start_agent("b")
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), """
mode: sequential
phases:
  - {name: rr, workload: randio, rw: randread, size: 8M, runtime: 3s, time_based: true}
""")
        ctl = self.start_stormark(["run", "--agent", a.address, "--agent", b.address,
                                   "--plan", plan, "--no-progress"])
        db_path = self.default_results_db()
        deadline = time.monotonic() + 60
        rows = []
        while not rows:
            self.assertLess(time.monotonic(), deadline, a.log())
            if not ctl.running():
                self.fail(f"stormark ended early:\n{ctl.wait().describe()}")
            time.sleep(0.05)
            if os.path.exists(db_path):
                with sqlite3.connect(db_path) as db:
                    rows = db.execute("SELECT host, status, ops FROM host_results").fetchall()
        self.assertEqual(len(rows), 1, rows)
        self.assertEqual(rows[0][:2], (a.address, "succeeded"))
        self.assertGreater(rows[0][2], 0)
        b.wait_for_log(r"run phase '", timeout=30)
        ctl.proc.send_signal(signal.SIGKILL)
        ctl.proc.wait(timeout=10)

        shown = self.run_stormark(["results", "show", "latest"])
        self.assertEqual(shown.returncode, 0, shown.describe())
        self.assert_no_crash(shown)
        self.assertIn("0 of 1 phases were recorded, and the results that had come in of the "
                      "phase it stopped in (the hosts without one say so)", shown.stdout)
        a_row = next(l for l in shown.stdout.splitlines() if l.startswith(f"  {a.address} "))
        self.assertNotIn("ERROR", a_row)
        self.assertIn(f"{b.address}: no result recorded: the phase had not ended (still "
                      "running, or its controller stopped)", shown.stdout)
        # a's figures are not the fleet's: the verdict and the aggregate row say so, in the JSON too.
        self.assertIn("  validity: INVALID: the phase had not ended when it was recorded (its "
                      "controller stopped, or it still runs): 1 of 2 hosts had reported",
                      shown.stdout)
        self.assertRegex(shown.stdout, r"\n  mean of hosts INVALID ")
        exported = self.run_stormark(["results", "export", "latest", "--format", "json"])
        self.assertEqual(exported.returncode, 0, exported.describe())
        validity = json.loads(exported.stdout)["phases"][0]["validity"]
        self.assertEqual(validity["verdict"], "invalid")
        listed = self.run_stormark(["results", "list"])
        self.assertEqual(listed.returncode, 0, listed.describe())
        self.assertRegex(listed.stdout, r"0/1\s+incomplete")

        # b's agent ends the phase the controller left, and both serve the next run.
        b.wait_for_log(r"phase '[^']+' ABORTED: .*went away", timeout=30)
        result = self.run_stormark(["run", "--agent", a.address, "--agent", b.address,
                                    "--rw", "write", "--size", "8M", "--no-progress", "--no-db"])
        self.assertEqual(result.returncode, 0, result.describe())


if __name__ == "__main__":
    h.main()
