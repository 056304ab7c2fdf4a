"""Bad input and unreachable hosts: the documented exit code, one `stormark:` line naming the
problem, and no crash text."""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


class ErrorsTest(h.StormarkTestCase):

    def setUp(self):
        # A private TMPDIR: a refused run must not leave an embedded agent's directory in it.
        self.tmpdir = self.make_dir("stormark-itest-tmpdir-")
        self.env = {"TMPDIR": self.tmpdir}

    def run_refused(self, args, code):
        result = self.run_stormark(args, timeout=60, env=self.env)
        self.assertEqual(result.returncode, code, result.describe())
        self.assert_no_crash(result)
        return result

    def error_lines(self, result, *needles):
        """The stderr lines that start with 'stormark:' and contain every needle; there must be
        exactly one. Every stderr line must be a 'stormark:' line."""
        lines = result.stderr.splitlines()
        for line in lines:
            self.assertTrue(line.startswith("stormark: "), result.describe())
        matching = [l for l in lines if all(n in l for n in needles)]
        self.assertEqual(len(matching), 1, f"one line with {needles}:\n{result.describe()}")
        return matching[0]

    def test_bad_size_is_refused_before_anything_runs(self):
        result = self.run_refused(["run", "--rw", "write", "--size", "10X"], 2)
        self.error_lines(result, "'10X'", "size")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertNotIn("Phase ", result.stdout)
        self.assertEqual(os.listdir(self.tmpdir), [], "no embedded agent was started")

    def test_rw_is_the_random_workloads_pattern_and_a_stream_is_told_so(self):
        # A fio user's first try: --rw is randio's pattern, as fio's rw= is.
        agent = self.start_agent()
        ran = self.run_stormark(["run", "--agent", agent.address, "--workload", "randio",
                                 "--rw", "randread", "--size", "8M", "--set", "runtime=1s",
                                 "--set", "time_based=true", "--no-progress", "--no-db"],
                                timeout=120, env=self.env)
        self.assertEqual(ran.returncode, 0, ran.describe())
        self.assertRegex(ran.stdout, r"randio randread")
        # The stream workload reads or writes; the line says where random I/O is.
        result = self.run_refused(["run", "--rw", "randread", "--size", "8M"], 2)
        self.error_lines(result, "--rw randread", "--workload randio")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertEqual(os.listdir(self.tmpdir), [], "no embedded agent was started")
        # A workload without a pattern says so, naming the flag.
        result = self.run_refused(["run", "--workload", "bonnie", "--rw", "read"], 2)
        self.error_lines(result, "--rw read", "no phase takes 'rw'")

    def test_a_set_that_no_phase_takes_is_refused_not_ignored(self):
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"),
                               "phases:\n  - {name: w, workload: stream, rw: write}\n"
                               "  - {name: b, workload: bonnie}\n")
        result = self.run_refused(["run", "--plan", plan, "--set", "iodepth=32"], 2)
        line = self.error_lines(result, "iodepth=32", "no phase takes 'iodepth'")
        self.assertIn("w (stream)", line)
        result = self.run_refused(["run", "--plan", plan, "--set", "x.size=4M"], 2)
        self.error_lines(result, "no phase 'x'")
        result = self.run_refused(["run", "--plan", plan, "--set", "phases.2.size=4M"], 2)
        self.error_lines(result, "phases 0 to 1")
        # files= is bonnie's: it applies to phase b, and to w nothing is silently done.
        result = self.run_refused(["run", "--plan", plan, "--set", "w.files=4"], 2)
        self.error_lines(result, "no phase takes 'files'")
        self.assertEqual(os.listdir(self.tmpdir), [], "no embedded agent was started")

    def test_bad_block_size_names_bs(self):
        result = self.run_refused(["run", "--rw", "write", "--bs", "1Q"], 2)
        self.error_lines(result, "'1Q'", "bs")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())

    def test_unreachable_agent_exits_1_naming_it(self):
        address = f"127.0.0.1:{h.closed_loopback_port()}"
        result = self.run_refused(["run", "--agent", address, "--rw", "write", "--size", "8M",
                                   "--no-progress"], 1)
        self.error_lines(result, address, "unreachable")
        self.assertNotIn("Phase ", result.stdout)

    def test_a_port_alone_is_refused_saying_how_to_write_it(self):
        result = self.run_refused(["run", "--agent", "18301", "--rw", "write", "--size", "8M",
                                   "--no-progress"], 2)
        self.error_lines(result, "'18301'", "a port alone names no host", "localhost:18301")

    def test_a_host_without_port_names_the_port_it_tried(self):
        import socket
        with socket.socket() as probe:
            probe.settimeout(1)
            if probe.connect_ex(("127.0.0.1", 7420)) == 0:
                h.skip_for_host(self, "something listens on 127.0.0.1:7420")
        result = self.run_refused(["run", "--agent", "localhost", "--rw", "write", "--size",
                                   "8M", "--no-progress"], 1)
        self.error_lines(result, "host localhost:", "unreachable",
                         "tried localhost:7420: no port was given, and 7420 is the default")

    def test_a_stopped_agent_is_said_to_accept_but_not_answer(self):
        import signal
        agent = self.start_agent()
        agent.send_signal(signal.SIGSTOP)
        self.addCleanup(agent.send_signal, signal.SIGCONT)
        result = self.run_refused(["run", "--agent", agent.address, "--rw", "write", "--size",
                                   "8M", "--no-progress"], 1)
        self.error_lines(result, agent.address, "GetInfo timed out",
                         "accepted the connection but did not answer")
        agent.send_signal(signal.SIGCONT)
        ok = self.run_stormark(["run", "--agent", agent.address, "--rw", "write", "--size",
                                "8M", "--no-progress", "--no-db"], env=self.env)
        self.assertEqual(ok.returncode, 0, ok.describe())

    def test_an_option_error_points_at_its_subcommands_help(self):
        for argv, where in ((["run", "--bogus"], "stormark run --help"),
                            (["results", "show", "--bogus"], "stormark results show --help"),
                            (["--bogus"], "stormark --help")):
            result = self.run_refused(argv, 2)
            self.assertIn(f"Run '{where}' for usage.", result.stderr, result.describe())

    def test_a_missing_or_unknown_command_names_the_word_and_the_choices(self):
        """The usual mistakes: `results report` (report is its own command), a typo, no command,
        no run. CLI11's own text ('A subcommand is required', 'RUN is required') said neither
        what was wrong nor what to give."""
        for argv, line in (
                (["results", "report", "latest"],
                 "stormark: results: unknown command 'report' (give list, show, compare or "
                 "export); the HTML report is 'stormark report RUN -o FILE'"),
                (["results", "shwo", "latest"],
                 "stormark: results: unknown command 'shwo' (give list, show, compare or export)"),
                (["results"], "stormark: results: give a command: list, show, compare or export"),
                (["certs"], "stormark: certs: give a command: init or issue"),
                ([], "stormark: give a command: run, agents, certs, results, report, fio or help"),
                (["results", "show"],
                 "stormark: results show: give the run: its id, a unique prefix of one, or "
                 "'latest' ('stormark results list' lists them)"),
                (["report", "-o", "r.html"],
                 "stormark: report: give the run: its id, a unique prefix of one, or 'latest' "
                 "('stormark results list' lists them)")):
            result = self.run_refused(argv, 2)
            self.assertEqual(result.stderr.splitlines()[0], line, result.describe())

    def test_help_names_every_subcommand_and_each_flags_default(self):
        results = self.run_stormark(["results", "--help"])
        self.assertEqual(results.returncode, 0, results.describe())
        first = results.stdout.splitlines()[0]
        for sub in ("list", "show", "compare", "export"):
            self.assertIn(sub, first)
        run = self.run_stormark(["run", "--help"])
        self.assertNotIn("{false}", run.stdout)
        self.assertRegex(run.stdout, r"--fdatasync\s+fdatasync inside the timed region \(the default")
        self.assertRegex(run.stdout, r"--no-fdatasync\s+no fdatasync")
        both = self.run_refused(["run", "--fdatasync", "--no-fdatasync"], 2)
        self.assertIn("stormark: run: give --fdatasync or --no-fdatasync, not both", both.stderr)

    def test_unknown_target_is_refused_naming_it_and_the_host(self):
        agent = self.start_agent()
        result = self.run_refused(["run", "--agent", agent.address, "--target", "nope",
                                   "--rw", "write", "--size", "8M", "--no-progress"], 2)
        self.error_lines(result, "'nope'", agent.address)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertNotIn("Phase ", result.stdout)
        self.assertNotRegex(agent.log(), r"prepared phase")
        self.assertEqual(os.listdir(agent.target_dir), [])

    def test_plan_error_names_file_and_line(self):
        agent = self.start_agent()
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), (
            "phases:\n"                # 1
            "  - name: first\n"        # 2
            "    workload: stream\n"   # 3
            "    rw: write\n"          # 4
            "    size: 8M\n"           # 5
            "  - name: second\n"       # 6
            "    workload: stream\n"   # 7
            "    rw: read\n"           # 8
            "    bs: 12 apples\n"))    # 9
        result = self.run_refused(["run", "--agent", agent.address, "--plan", plan,
                                   "--no-progress"], 2)
        line = self.error_lines(result, "plan.yaml:9")
        self.assertIn("second", line)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertNotRegex(agent.log(), r"prepared phase")

    def test_plan_yaml_syntax_error_names_file_and_line(self):
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), (
            "phases:\n"
            "  - name: first\n"
            "    workload: stream\n"
            "    rw: [write\n"))
        result = self.run_refused(["run", "--plan", plan, "--no-progress"], 2)
        self.error_lines(result, "plan.yaml:")
        self.assertEqual(os.listdir(self.tmpdir), [])

    def test_agent_config_error_names_file_and_line(self):
        work = self.make_dir()
        config = self.write_file(os.path.join(work, "bad.yaml"), (
            "targets:\n"                                     # 1
            f"  good:\n    dir: {work}\n"                    # 2-3
            f"  scratch:\n    dir: {work}/does-not-exist\n"  # 4-5
        ))
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assertEqual(result.returncode, 2, result.describe())
        self.assert_no_crash(result)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn("bad.yaml:5", lines[0])
        self.assertIn("does-not-exist", lines[0])
        self.assertNotIn("listening", result.stderr)

    def test_agent_refuses_plain_text_on_a_non_loopback_address(self):
        work = self.make_dir()
        config = self.write_file(os.path.join(work, "agent.yaml"),
                                 f"targets:\n  scratch:\n    dir: {work}\n")
        result = self.run_agent_binary(["--listen", "0.0.0.0:0", "--config", config])
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertNotIn("listening on", result.stderr)
        self.assertRegex(result.stderr, r"TLS")
        self.assertRegex(result.stderr, r"--insecure")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())

    def test_unreachable_and_good_agent_reports_the_good_one(self):
        good = self.start_agent("good")
        bad = f"127.0.0.1:{h.closed_loopback_port()}"
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_refused(["run", "--agent", good.address, "--agent", bad,
                                   "--rw", "write", "--size", "16M", "--json", json_path,
                                   "--no-progress"], 1)
        self.error_lines(result, bad, "unreachable")
        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.describe())
        good_rows = h.rows_for(tables[0], good.address)
        self.assertEqual(len(good_rows), 1, result.describe())
        row = h.parse_row(good_rows[0], good.address)
        self.assertEqual(row["status"], "ok", good_rows[0])
        self.assertGreater(row["mibps"] or 0, 0, good_rows[0])
        bad_rows = h.rows_for(tables[0], bad)
        self.assertEqual(len(bad_rows), 1, result.describe())
        self.assertEqual(h.parse_row(bad_rows[0], bad)["status"], "ERROR")
        self.assertTrue([n for n in tables[0]["notes"]
                         if n.startswith(f"  x {bad}: ") and "unreachable" in n],
                        result.describe())

        report = self.load_json(json_path)
        agents = {a["host"]: a for a in report["agents"]}
        self.assertEqual(agents[good.address]["error"], "")
        self.assertIn("unreachable", agents[bad]["error"])
        phase = report["phases"][0]
        self.assert_succeeded_result(phase, self.result_for(phase, good.address), 16 << 20)
        bad_result = self.result_for(phase, bad)
        self.assertEqual(bad_result["status"], "error")
        self.assertIn("unreachable", bad_result["error"])
        self.assertEqual(phase["all_hosts"]["hosts"], 1)
        self.assertEqual(os.listdir(good.target_dir), [])


if __name__ == "__main__":
    h.main()
