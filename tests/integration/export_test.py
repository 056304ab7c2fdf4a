"""`stormark results export`: a recorded run as JSON (stormark.run/1), CSV (a row per host, phase
and metric), bonnie++ CSV (the lines `run --csv` wrote) and the Prometheus text format, written
to a file, to standard output, or pushed to a Pushgateway (here a tiny HTTP server on loopback
that this test starts and stops)."""

import csv
import http.server
import io
import json
import os
import re
import stat
import sys
import threading
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")
SAMPLE = re.compile(r'^([a-z_]+)\{([^}]*)\} (\S+)$')


class Gateway(http.server.BaseHTTPRequestHandler):
    """Records every push; answers 200, or 400 to a body with a timestamp."""
    pushes = []

    def do_PUT(self):
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        Gateway.pushes.append((self.command, self.path, self.headers["Content-Type"], body))
        self.send_response(200)
        self.end_headers()

    do_POST = do_PUT

    def log_message(self, *args):
        pass


class ExportTest(h.StormarkTestCase):

    def setUp(self):
        self.agents = [self.start_agent(n) for n in ("e1", "e2")]
        self.work = self.make_dir()
        self.db = os.path.join(self.work, "results.db")
        plan = self.write_file(os.path.join(self.work, "plan.yaml"), """
phases:
  - {name: seq-write, workload: stream, rw: write, size: 8M, fdatasync: true}
  - {name: bon, workload: bonnie, size: 16M, fast: true, files: "1:0:0:1", seeks: 100}
""")
        self.csv_path = os.path.join(self.work, "run.csv")
        self.json_path = os.path.join(self.work, "run-report.json")
        args = ["run", "--plan", plan, "--db", self.db, "--no-progress", "--label", "exp,\"1\"",
                "--csv", self.csv_path, "--json", self.json_path]
        for agent in self.agents:
            args += ["--agent", agent.address]
        result = self.run_stormark(args, timeout=180)
        self.assertEqual(result.returncode, 0, result.describe())
        self.run_id = RUN_ID.search(result.stdout).group(1)

    def export(self, *args, code=0):
        result = self.run_stormark(["results", "export", "--db", self.db] + list(args))
        self.assertEqual(result.returncode, code, result.describe())
        self.assert_no_crash(result)
        return result

    def test_json_csv_and_bonnie_csv(self):
        out = os.path.join(self.work, "run.json")
        self.export("latest", "--format", "json", "-o", out)
        report = self.load_json(out)
        self.assertEqual(report["run_id"], self.run_id)
        # The run's own --json report, byte for byte, to a file and to standard output.
        self.assertEqual(h.read_text(out), h.read_text(self.json_path))
        self.assertEqual(self.export("latest", "--format", "json").stdout,
                         h.read_text(self.json_path))
        self.assertEqual([p["name"] for p in report["phases"]], ["seq-write", "bon"])
        self.assertEqual(len(report["phases"][0]["results"]), 2)

        rows = list(csv.DictReader(io.StringIO(self.export(self.run_id, "--format",
                                                           "csv").stdout)))
        self.assertEqual(list(rows[0].keys()),
                         ["run_id", "started", "phase_index", "phase", "repetition",
                          "sweep_point", "host", "target", "status", "metric", "value", "unit",
                          "marks"])
        for agent in self.agents:
            mine = {r["metric"]: r for r in rows
                    if r["host"] == agent.address and r["phase"] == "seq-write"}
            self.assertEqual(mine["bytes"]["value"], str(8 << 20))
            self.assertEqual(mine["bytes"]["unit"], "B")
            self.assertEqual(mine["throughput"]["unit"], "B/s")
            self.assertGreater(float(mine["latency_p99"]["value"]),
                               float(mine["latency_p50"]["value"]) - 1)
            self.assertEqual(mine["bytes"]["status"], "succeeded")
        keys = [(r["phase_index"], r["host"], r["metric"]) for r in rows if r["metric"] != "note"]
        self.assertEqual(len(keys), len(set(keys)), "one row per host, phase and metric")
        # A host's notes are rows of their own, and its rows carry the table's "*" mark.
        for r in rows:
            noted = any(n["metric"] == "note" for n in rows
                        if (n["phase_index"], n["host"]) == (r["phase_index"], r["host"]))
            self.assertEqual("*" in r["marks"], noted, r)

        bonnie = self.export("latest", "--format", "bonnie-csv").stdout
        self.assertEqual(bonnie, h.read_text(self.csv_path))
        self.assertEqual(len(bonnie.splitlines()), 2)
        self.assertTrue(all(line.startswith("1.98,2.00a,") for line in bonnie.splitlines()))

    def test_prometheus_to_a_file_and_to_a_pushgateway(self):
        text = self.export("latest", "--format", "prometheus").stdout
        families = {}
        for line in text.splitlines():
            if line.startswith("# TYPE "):
                _, _, name, kind = line.split(" ")
                families[name] = kind
                continue
            if line.startswith("#"):
                continue
            match = SAMPLE.match(line)
            self.assertIsNotNone(match, line)
            float(match.group(3))
        self.assertEqual(families["stormark_throughput_bytes_per_second"], "gauge")
        self.assertEqual(families["stormark_latency_seconds"], "summary")
        for agent in self.agents:
            self.assertRegex(text, r'stormark_bytes\{label="exp,\\"1\\"",'
                                   r'phase="seq-write",sweep="",repetition="1",host="%s",'
                                   r'target="scratch"\} 8388608\n' % re.escape(agent.address))
        self.assertIn('stormark_run_start_time_seconds{run_id="%s",label=' % self.run_id, text)

        Gateway.pushes = []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Gateway)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        env = {"http_proxy": "", "HTTP_PROXY": "", "no_proxy": "*"}
        pushed = self.run_stormark(["results", "export", "--db", self.db, "latest", "--format",
                                    "prometheus", "--push", url], env=env)
        self.assertEqual(pushed.returncode, 0, pushed.describe())
        self.assertIn(f"pushed {self.run_id} to {url}/metrics/job/stormark", pushed.stdout)
        self.assertEqual(len(Gateway.pushes), 1)
        method, path, content_type, body = Gateway.pushes[0]
        self.assertEqual((method, path), ("PUT", "/metrics/job/stormark"))
        self.assertTrue(content_type.startswith("text/plain; version=0.0.4"), content_type)
        self.assertEqual(body, text)

        # A group URL is used as given; a gateway that is not there fails the push (exit 1).
        self.run_stormark(["results", "export", "--db", self.db, "latest", "--format",
                           "prometheus", "--push", url + "/metrics/job/nightly/array/md0",
                           "-o", os.path.join(self.work, "m.prom")], env=env)
        self.assertEqual(Gateway.pushes[-1][1], "/metrics/job/nightly/array/md0")
        self.assertEqual(h.read_text(os.path.join(self.work, "m.prom")), text)
        gone = f"http://127.0.0.1:{h.closed_loopback_port()}"
        failed = self.run_stormark(["results", "export", "--db", self.db, "latest", "--format",
                                    "prometheus", "--push", gone], env=env)
        self.assertEqual(failed.returncode, 1, failed.describe())
        self.assertEqual(len(failed.stderr.splitlines()), 1, failed.describe())
        self.assertIn(f"--push {gone}/metrics/job/stormark", failed.stderr)

    def test_a_device_or_a_pipe_given_as_output_is_written_not_replaced(self):
        """Attack, from a mistake made here: `-o /dev/null` as root renamed a regular file over
        the host's /dev/null. A device node, and a link to the controller's own standard output
        (what /dev/stdout is), each made by this test in its directory, stay what they were and
        receive the output; `--json` and the HTML report write the same way."""
        null = os.path.join(self.work, "null")
        os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        stdout = os.path.join(self.work, "stdout")
        os.symlink("/proc/self/fd/1", stdout)
        for fmt in ("csv", "json", "prometheus"):
            self.export("latest", "--format", fmt, "-o", null)
        result = self.export("latest", "--format", "csv", "-o", stdout)
        self.assertIn(self.run_id, result.stdout)
        report = self.run_stormark(["report", "latest", "--db", self.db, "-o", null])
        self.assertEqual(report.returncode, 0, report.describe())
        st = os.stat(null)
        self.assertTrue(stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3), st)
        self.assertTrue(os.path.islink(stdout))
        self.assertEqual(sorted(n for n in os.listdir(self.work) if ".tmp" in n), [])

    def test_bad_input_is_one_line_and_exit_2(self):
        for args, needle in (
                (["latest", "--format", "json", "--push", "http://x"], "--push"),
                (["latest", "--format", "prometheus", "--push", "ftp://x"], "ftp://x"),
                (["r1999", "--format", "csv"], "no run 'r1999'")):
            result = self.export(*args, code=2)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
            self.assertIn(needle, result.stderr)


if __name__ == "__main__":
    h.main()
