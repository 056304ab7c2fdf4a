"""fio job files as they are: `stormark run --fio FILE` on two agents at once, through the same
fleet, results store and reports as any plan; `stormark fio --check`; the one-line refusals;
and `stormark help fio` against docs/workloads/fio-options.md.

The corpus is examples/fio/: job files in the styles of the Kubernetes wrappers
(one [global], stonewalls, numjobs), of fio's examples (several [global] sections) and with an
include, a ${VAR} and arithmetic."""

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "..", "examples", "fio")
DOCS = os.path.join(HERE, "..", "..", "docs", "workloads", "fio-options.md")
RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")

# Each job file, and the phases (name, rw, numjobs) it must make.
EXPECTED = {
    "kube_style.fio": [("read_iops", "RANDREAD", 1), ("write_iops", "RANDWRITE", 2),
                       ("read_bw", "READ", 1)],
    "examples_style.fio": [("seq-write", "WRITE", 1), ("seq-read", "READ", 1),
                           ("mixed", "RANDRW", 1)],
    "with_include.fio": [("randrw", "RANDRW", 1)],
    "kubestr_default.fio": [("read_iops..write_bw", "RANDREAD", 1)],
}

# Debian's fio ships fiologparser.py as documentation only.
FIOLOGPARSER = "/usr/share/doc/fio/fiologparser.py.gz"


class FioJobsTest(h.StormarkTestCase):

    def setUp(self):
        self.work = self.make_dir("stormark-itest-fio-")
        self.db = os.path.join(self.work, "results.db")
        self.env = {"FIO_TARGET": "scratch"}

    def run_fio(self, job, *args, agents=(), expect=0):
        addresses = [a for agent in agents for a in ("--agent", agent.address)]
        result = self.run_stormark(["run", "--fio", os.path.join(CORPUS, job), "--no-progress"] +
                                   addresses + list(args), env=self.env, timeout=240)
        self.assert_no_crash(result)
        if expect == 0 and "io_uring with depth" in result.stdout + result.stderr:
            self.skipTest("io_uring is not available on this machine")
        self.assertEqual(result.returncode, expect, result.describe())
        return result

    def test_every_job_file_runs_on_two_agents_into_the_store_and_the_report(self):
        agents = [self.start_agent(n) for n in ("left", "right")]
        for job, phases in EXPECTED.items():
            with self.subTest(job=job):
                json_path = os.path.join(self.work, job + ".json")
                result = self.run_fio(job, "--db", self.db, "--json", json_path, agents=agents)
                report = self.load_json(json_path)
                self.assertEqual(report["status"], "complete", result.stdout)
                got = [(p["name"], p["workload"]["rw"], p["workload"].get("numjobs", 1) or 1)
                       for p in report["phases"]]
                self.assertEqual(got, phases)
                for phase in report["phases"]:
                    # Both hosts, at once, each with a result; and the all-hosts row.
                    self.assertEqual(sorted(r["host"] for r in phase["results"]),
                                     sorted(a.address for a in agents))
                    for row in phase["results"]:
                        self.assertEqual(row["status"], "succeeded", row)
                        self.assertGreater(row["bytes"], 0, row)
                    self.assertIsNotNone(phase["all_hosts"])
                # Recorded: results show prints it again, and the HTML report is written.
                run_id = RUN_ID.search(result.stdout).group(1)
                shown = self.run_stormark(["results", "show", run_id, "--db", self.db])
                self.assertEqual(shown.returncode, 0, shown.describe())
                for name, _, _ in phases:
                    self.assertIn(f"  {name}: randio ", shown.stdout)
                html = os.path.join(self.work, job + ".html")
                made = self.run_stormark(["report", run_id, "-o", html, "--db", self.db])
                self.assertEqual(made.returncode, 0, made.describe())
                self.assertIn(phases[0][0], h.read_text(html))

    @unittest.skipUnless(shutil.which("fio_jsonplus_clat2csv"), "needs Debian's fio package")
    def test_fio_json_is_read_by_fios_own_tools(self):
        agents = [self.start_agent(n) for n in ("left", "right")]
        plain = os.path.join(self.work, "fio.json")
        plus = os.path.join(self.work, "fio-plus.json")
        self.run_fio("kube_style.fio", "--no-db", "--fio-json", plain, "--fio-json-plus", plus,
                     agents=agents)
        with open(plain) as f:
            report = json.load(f)
        # fio's layout: a job per phase and host, with its hostname; All clients per phase.
        self.assertEqual(len(report["jobs"]), 3 * 2)
        self.assertEqual({j["hostname"] for j in report["jobs"]}, {a.address for a in agents})
        clients = [c for c in report["client_stats"] if c["hostname"] == "All clients"]
        self.assertEqual([c["jobname"] for c in clients], ["read_iops", "write_iops", "read_bw"])
        for c in clients:
            mine = [j for j in report["jobs"] if j["jobname"] == c["jobname"]]
            for d in ("read", "write"):
                self.assertEqual(c[d]["io_bytes"], sum(j[d]["io_bytes"] for j in mine))
                self.assertEqual(c[d]["clat_ns"]["N"], sum(j[d]["clat_ns"]["N"] for j in mine))
        read = report["jobs"][0]["read"]
        for key in ("io_bytes", "bw_bytes", "bw", "iops", "runtime", "total_ios"):
            self.assertGreater(read[key], 0, key)
        self.assertIn("99.000000", read["clat_ns"]["percentile"])
        # fio_jsonplus_clat2csv reads the json+ bins, and checks its own CSV against them.
        dest = os.path.join(self.work, "clat.csv")
        for extra in ([], ["--validate"]):
            done = subprocess.run(["fio_jsonplus_clat2csv", plus, dest] + extra,
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertEqual(len([f for f in os.listdir(self.work) if f.startswith("clat_job")]), 6)

    @unittest.skipUnless(os.path.exists(FIOLOGPARSER), "needs Debian's fio package")
    def test_interval_logs_are_read_by_fiologparser(self):
        """A run group's jobs, each logging its bandwidth and latency every 500 ms on two
        agents; fiologparser.py's figures from the logs agree with the run's own."""
        agents = [self.start_agent(n) for n in ("left", "right")]
        logs = self.make_dir()
        job = os.path.join(self.work, "logged.fio")
        with open(os.path.join(CORPUS, "kubestr_default.fio")) as f:
            text = f.read()
        text = text.replace("[global]\n", "[global]\nlog_avg_msec=500\nwrite_bw_log=" + logs +
                            "/kube\nwrite_lat_log=" + logs + "/kube\n", 1)
        self.write_file(job, text)
        json_path = os.path.join(self.work, "logged.json")
        result = self.run_stormark(["run", "--fio", job, "--no-progress", "--no-db", "--json",
                                    json_path] + [x for a in agents for x in ("--agent", a.address)],
                                   env=self.env, timeout=240)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIn("fio logs: 24 files", result.stdout)  # 4 jobs x 3 logs x 2 hosts
        parser = os.path.join(self.work, "fiologparser.py")
        with gzip.open(FIOLOGPARSER, "rt") as f:
            self.write_file(parser, f.read())
        row = self.load_json(json_path)["phases"][0]["results"][0]
        host = re.sub(r"[^A-Za-z0-9._-]", "_", row["host"])
        elapsed = row["elapsed_seconds"]
        for number, job_figures in enumerate(row["jobs"], start=1):
            name = job_figures["name"]
            m = job_figures["measurements"][0]
            bw_log = os.path.join(logs, f"kube_bw.{number}.log.{host}")
            lat_log = os.path.join(logs, f"kube_lat.{number}.log.{host}")
            with open(bw_log) as f:
                lines = f.read().splitlines()
            # Every 500 ms, for the 2 s measured: 4 lines (the last may be a short one).
            self.assertIn(len(lines), (4, 5), lines)
            self.assertRegex(lines[0], r"^\d+, \d+, [01], 0$")
            # fiologparser.py's default: the mean bandwidth over the run, in KiB/s.
            done = subprocess.run([sys.executable, parser, bw_log], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            from_logs = float(done.stdout.strip())
            ours = m["bytes"] / elapsed / 1024
            self.assertLess(abs(from_logs - ours), 0.1 * ours,
                            f"{name}: fiologparser.py {from_logs:.0f} KiB/s, the run {ours:.0f}")
            done = subprocess.run([sys.executable, parser, "-a", lat_log], capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            # Its per-second means of the interval means: one line per second of the run (a
            # third for a last interval past 2 s), each between the job's fastest and slowest
            # I/O.
            means = [float(line.split(", ")[1]) for line in done.stdout.splitlines()]
            self.assertIn(len(means), (2, 3), done.stdout)
            for mean in means:
                self.assertGreaterEqual(mean, m["latency"]["min"], (name, done.stdout))
                self.assertLessEqual(mean, m["latency"]["max"], (name, done.stdout))

    def test_a_log_of_a_later_job_of_a_run_group_holds_that_jobs_figures(self):
        """Only the writer of a reader+writer group logs: its file has writes (ddir 1), not
        the reader's reads."""
        agent = self.start_agent()
        logs = self.make_dir()
        job = self.write_file(os.path.join(self.work, "later_log.fio"), (
            "[global]\nsize=2m\ntime_based\nruntime=1\nlog_avg_msec=200\n"
            "[reader]\nrw=randread\n"
            f"[writer]\nrw=randwrite\noffset=2m\nwrite_bw_log={logs}/w\n"))
        result = self.run_stormark(["run", "--fio", job, "--agent", agent.address, "--no-db",
                                    "--no-progress"], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        host = re.sub(r"[^A-Za-z0-9._-]", "_", agent.address)
        self.assertEqual(sorted(os.listdir(logs)), [f"w_bw.2.log.{host}"])
        with open(os.path.join(logs, f"w_bw.2.log.{host}")) as f:
            ddirs = {line.split(", ")[2] for line in f.read().splitlines()}
        self.assertEqual(ddirs, {"1"})

    @unittest.skipUnless(os.path.exists(FIOLOGPARSER), "needs Debian's fio package")
    def test_each_clone_of_a_numjobs_job_has_its_own_log(self):
        """numjobs=3 with write_bw_log: three logs, .1 to .3, as fio names them, each from its
        own thread; fiologparser.py adds them up to the job's bandwidth. With per_job_logs=0:
        one log without the number, the clones' lines one after another."""
        agent = self.start_agent()
        host = re.sub(r"[^A-Za-z0-9._-]", "_", agent.address)
        parser = os.path.join(self.work, "fiologparser.py")
        with gzip.open(FIOLOGPARSER, "rt") as f:
            self.write_file(parser, f.read())
        for per_job in ("1", "0"):
            logs = self.make_dir()
            job = self.write_file(os.path.join(self.work, f"clones{per_job}.fio"), (
                "[global]\nsize=4m\ntime_based\nruntime=2\nlog_avg_msec=500\n"
                f"per_job_logs={per_job}\n"
                f"[reader]\nrw=randread\nnumjobs=3\nrate_iops=500\nwrite_bw_log={logs}/c\n"))
            check = self.run_stormark(["fio", "--check", job])
            self.assertEqual(check.returncode, 0, check.describe())
            self.assertIn(f"logs of reader: {logs}/c_bw.1.log.HOST (clone 1; clones 2 to 3: .2 "
                          f"to .3)" if per_job == "1" else
                          f"logs of reader: {logs}/c_bw.log.HOST (its 3 clones one after "
                          f"another)", check.stdout)
            json_path = os.path.join(self.work, f"clones{per_job}.json")
            result = self.run_stormark(["run", "--fio", job, "--agent", agent.address, "--no-db",
                                        "--no-progress", "--json", json_path], timeout=120)
            self.assert_no_crash(result)
            self.assertEqual(result.returncode, 0, result.describe())
            row = self.load_json(json_path)["phases"][0]["results"][0]
            read = next(m for m in row["measurements"] if m["name"] == "read")
            ours = read["bytes"] / row["elapsed_seconds"] / 1024
            if per_job == "0":
                self.assertEqual(sorted(os.listdir(logs)), [f"c_bw.log.{host}"])
                with open(os.path.join(logs, f"c_bw.log.{host}")) as f:
                    lines = f.read().splitlines()
                self.assertIn(len(lines), range(12, 16), lines)  # 3 clones x 4 intervals
                continue
            names = [f"c_bw.{n}.log.{host}" for n in (1, 2, 3)]
            self.assertEqual(sorted(os.listdir(logs)), names)
            paths = [os.path.join(logs, n) for n in names]
            # Each clone runs at 500 reads/s: about 2000 KiB/s in each of its own logs.
            for path in paths:
                done = subprocess.run([sys.executable, parser, path], capture_output=True,
                                      text=True, timeout=60)
                self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
                self.assertLess(abs(float(done.stdout) - 2000), 200, (path, done.stdout))
            # fiologparser.py sums the files it is given: the job's bandwidth.
            done = subprocess.run([sys.executable, parser] + paths, capture_output=True,
                                  text=True, timeout=60)
            self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
            self.assertLess(abs(float(done.stdout) - ours), 0.1 * ours, (done.stdout, ours))

    def test_the_job_files_values_reach_the_agent(self):
        json_path = os.path.join(self.work, "out.json")
        self.run_fio("with_include.fio", "--dir", self.make_dir(), "--no-db", "--json",
                     json_path)
        phase = self.load_json(json_path)["phases"][0]
        spec = phase["workload"]
        # From the include, the ${VAR}, the arithmetic and rwmixwrite.
        self.assertEqual((spec["engine"], spec["iodepth"], spec["direct"]), ("LIBAIO", 4, True))
        self.assertEqual((spec["bs_min"], spec["size_bytes"]), (4096, 8 << 20))
        self.assertEqual(spec["rwmixread"], 75)
        self.assertEqual(phase["results"][0]["target"], "scratch")

    def test_check_prints_the_phases_notes_and_pitfalls(self):
        job = os.path.join(self.work, "deep.fio")
        self.write_file(job, "[global]\nsize=1KiB\ngroup_reporting\n[j]\nrw=randread\n"
                             "iodepth=32\n")
        checked = self.run_stormark(["fio", "--check", job])
        self.assertEqual(checked.returncode, 0, checked.describe())
        out = checked.stdout
        self.assertIn(f"{job}: 1 phase, each run on every host at once", out)
        self.assertIn("Phase 1/1  j: randio randread", out)
        self.assertIn("parameters: rw: RANDREAD", out)
        self.assertIn(f"{job}:3: group_reporting: ignored: ", out)
        # fio's KiB under kb_base=1024 is 1000 bytes; psync keeps one request in flight.
        self.assertIn(f"! {job}:2: size=1KiB: fio reads this unit as 1000 bytes", out)
        self.assertIn("iodepth=32 with a synchronous engine (psync)", out)
        # The job file alone is the same as --check; no file is one line saying what to give.
        alone = self.run_stormark(["fio", job])
        self.assertEqual((alone.returncode, alone.stdout), (0, out), alone.describe())
        none = self.run_stormark(["fio"])
        self.assertEqual(none.returncode, 2, none.describe())
        self.assertEqual(none.stderr, "stormark: fio: give the job file: stormark fio --check "
                                      "JOBFILE\n")
        only = self.run_stormark(["fio", "--check", os.path.join(CORPUS, "kube_style.fio"),
                                  "--section", "write_iops"])
        self.assertEqual(only.returncode, 0, only.describe())
        self.assertIn(": 1 phase,", only.stdout)
        self.assertIn("write_iops", only.stdout)

    def test_one_file_gives_each_host_its_own_values(self):
        """axboe/fio#1688: a plan's hosts, each with labels; the job file reads them, and each
        host runs with its own depth and block size, which its result reports."""
        agents = [self.start_agent(n) for n in ("left", "right")]
        job = self.write_file(os.path.join(self.work, "per_host.fio"),
                              "[global]\nioengine=io_uring\nsize=1m\n"
                              "[j]\nrw=randread\niodepth=${STORMARK_LABEL_DEPTH}\n"
                              "bs=${STORMARK_LABEL_BS}\ndescription=on ${STORMARK_HOST}\n")
        plan = self.write_file(os.path.join(self.work, "plan.yaml"), (
            "hosts:\n"
            f"  - {{name: left, address: \"{agents[0].address}\", "
            "labels: {depth: 4, bs: 4k}}\n"
            f"  - {{name: right, address: \"{agents[1].address}\", "
            "labels: {depth: 16, bs: 16k}}\n"
            "phases:\n"
            f"  - {{fio: {job}}}\n"))
        json_path = os.path.join(self.work, "per_host.json")
        result = self.run_stormark(["run", "--plan", plan, "--no-progress", "--no-db", "--json",
                                    json_path, "--set", "runtime=2s"], timeout=120)
        self.assert_no_crash(result)
        if "io_uring with depth" in result.stdout + result.stderr:
            self.skipTest("io_uring is not available on this machine")
        self.assertEqual(result.returncode, 0, result.describe())
        rows = {r["host"]: r for r in self.load_json(json_path)["phases"][0]["results"]}
        self.assertEqual((rows["left"]["resolved"]["iodepth"], rows["left"]["resolved"]["bs"]),
                         ("4", "4k"))
        self.assertEqual((rows["right"]["resolved"]["iodepth"], rows["right"]["resolved"]["bs"]),
                         ("16", "16k"))
        # --check shows the file as one host reads it, and says that it differs by host.
        check = self.run_stormark(["fio", "--check", job], env={"STORMARK_X": "1"})
        self.assertEqual(check.returncode, 2, check.describe())
        self.assertIn("${STORMARK_LABEL_DEPTH} is not set: the host has no such label",
                      check.stderr)
        # A host without the label: one line naming the host, before anything runs.
        bare = self.write_file(os.path.join(self.work, "bare.yaml"), (
            "hosts:\n"
            f"  - {{name: left, address: \"{agents[0].address}\", "
            "labels: {depth: 4, bs: 4k}}\n"
            f"  - {{name: right, address: \"{agents[1].address}\"}}\n"
            "phases:\n"
            f"  - {{fio: {job}}}\n"))
        missing = self.run_stormark(["run", "--plan", bare, "--no-progress", "--no-db"])
        self.assert_no_crash(missing)
        self.assertEqual(missing.returncode, 2, missing.describe())
        self.assertIn("on host 'right'", missing.stderr)
        self.assertIn("${STORMARK_LABEL_DEPTH} is not set", missing.stderr)
        self.assertNotIn("Phase ", missing.stdout)

    def test_each_host_reads_its_targets_facts(self):
        """${STORMARK_TARGET_SIZE} and friends: one file sizes the job to each host's own
        device, as its agent describes it."""
        agents = [self.start_agent(n, extra_targets=(
            f"  img: {{block: $BASE/disk.img, size: {size}, disposable: true}}\n"))
            for n, size in (("small", "16M"), ("large", "32M"))]
        job = self.write_file(os.path.join(self.work, "facts.fio"),
                              "[j]\nfilename=img\nrw=randread\nbs=4k\n"
                              "size=(${STORMARK_TARGET_SIZE_MIB}/4)m\n"
                              "description=${STORMARK_TARGET_KIND} ${STORMARK_TARGET_NAME}\n")
        json_path = os.path.join(self.work, "facts.json")
        result = self.run_stormark(["run", "--fio", job, "--no-progress", "--no-db", "--json",
                                    json_path] + [x for a in agents for x in ("--agent", a.address)],
                                   timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        rows = {r["host"]: r for r in self.load_json(json_path)["phases"][0]["results"]}
        self.assertEqual(rows[agents[0].address]["resolved"]["size"], "4M")
        self.assertEqual(rows[agents[1].address]["resolved"]["size"], "8M")
        self.assertEqual(rows[agents[1].address]["bytes"], 8 << 20)

    def test_refusals_are_one_line_naming_file_line_and_option(self):
        cases = [
            ("[j]\nfilename=/dev/sdb\n", ":2: filename=/dev/sdb: stormark reaches storage "
                                         "only through the agent's targets"),
            ("[j]\nzonemode=zbd\n", ":2: zonemode=zbd: not supported: zoned block devices"),
            ("[j]\nfrobnicate=1\n", ":2: frobnicate=1: not an option of fio 3.33"),
            ("[j]\nioengine=posixaio\n", ":2: ioengine=posixaio: not supported: stormark "
                                          "runs psync (sync, pvsync), io_uring and libaio"),
            ("[j]\nbssplit=4k/60:64k/60\n", ":2: bssplit=4k/60:64k/60: bad bssplit"),
            ("[a]\nrw=read\n[b]\nrw=write\ndirect=1\n",
             ":1: the jobs from 'a' on run at the same time (no stonewall between them): "
             "randio: job 'b': the jobs of a run group share one open device"),
            ("[a]\nrw=read\n[b]\nrw=trim\n", ":3: job 'b' runs at the same time as job 'a'"),
            ("rw=read\n[j]\n", ":1: "),
            ("[global]\nsize=8m\n[check]\nrw=randread\nverify=crc32c\n"
             "[scribble]\nrw=randwrite\noffset=4m\n",
             ":5: verify=crc32c: job 'check' verifies bytes 4M-8M, which job 'scribble' "
             "writes at the same time: its verify would check data another job overwrote"),
        ]
        for text, why in cases:
            with self.subTest(job=text):
                job = self.write_file(os.path.join(self.work, "bad.fio"), text)
                for args in (["run", "--fio", job, "--no-db", "--no-progress"],
                             ["fio", "--check", job]):
                    result = self.run_stormark(args)
                    self.assert_no_crash(result)
                    self.assertEqual(result.returncode, 2, result.describe())
                    lines = result.stderr.splitlines()
                    self.assertEqual(len(lines), 1, result.describe())
                    self.assertTrue(lines[0].startswith(f"stormark: {job}"), lines[0])
                    self.assertIn(why, lines[0])
                    self.assertNotIn("Phase ", result.stdout)

    def start_img_agent(self, name="verify"):
        """An agent with a disposable 16 MiB block target 'img' on a file; returns it and the
        file's path."""
        agent = self.start_agent(name, extra_targets=(
            "  img: {block: $BASE/disk.img, size: 16M, disposable: true}\n"))
        return agent, os.path.join(os.path.dirname(agent.target_dir), "disk.img")

    def run_job_text(self, agent, name, text, expect, timeout=120):
        job = self.write_file(os.path.join(self.work, name), text)
        json_path = os.path.join(self.work, name + ".json")
        result = self.run_stormark(["run", "--fio", job, "--agent", agent.address, "--no-db",
                                    "--no-progress", "--json", json_path], timeout=timeout)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        return result, self.load_json(json_path)["phases"][0]["results"][0]

    def test_each_job_of_a_run_group_verifies_for_itself(self):
        """Issue 20: a verifying writer, an unverified reader of the same bytes and a verifying
        reader of others, at once on one agent's block target: each verifying job lays out,
        checks and reports its own bytes."""
        agent, _ = self.start_img_agent()
        result, row = self.run_job_text(agent, "verify_group.fio", (
            "[global]\nfilename=img\nbs=4k\nsize=4m\n"
            "[writer]\nrw=randwrite\nverify=crc32c\n"
            "[reader]\nrw=randread\n"
            "[checker]\nrw=read\noffset=4m\nverify=crc32c\n"), expect=0)
        self.assertEqual(row["status"], "succeeded", row)
        jobs = {j["name"]: j for j in row["jobs"]}
        self.assertEqual(sorted(jobs), ["checker", "reader", "writer"])
        self.assertNotIn("verify", jobs["reader"])
        # 1024 units each read back; the checker also checked each of its 1024 reads.
        self.assertEqual(jobs["writer"]["verify"]["units_checked"], 1024)
        self.assertEqual(jobs["checker"]["verify"]["units_checked"], 2048)
        for name in ("writer", "checker"):
            self.assertEqual(jobs[name]["verify"]["mismatches"], 0)
        self.assertEqual(row["verify"]["units_checked"], 3072)
        self.assertIn(f"verify {agent.address} job 'writer': 1024 units of 4 KiB checked, "
                      "0 mismatches", result.stdout)
        self.assertIn(f"verify {agent.address} job 'checker': 2048 units", result.stdout)

    def test_verify_where_another_job_writes_is_refused_by_the_agent_before_writing(self):
        """The verifying job's region is the rest of the device, which only the agent knows:
        the agent refuses the phase in Prepare, naming both jobs and the bytes, and writes
        nothing."""
        agent, image = self.start_img_agent()
        result, row = self.run_job_text(agent, "verify_overlap.fio", (
            "[check]\nfilename=img\nrw=randread\nverify=crc32c\n"
            "[scribble]\nfilename=img\nrw=randwrite\nsize=1m\noffset=8m\n"), expect=1)
        self.assertNotEqual(row["status"], "succeeded", row)
        out = result.stdout + result.stderr
        self.assertIn("job 'check' verifies bytes 8M-9M, which job 'scribble' writes at the "
                      "same time", out)
        self.assertIn(agent.address, out)
        # The agent fills a new image with random data; verify's layout stamps every unit.
        with open(image, "rb") as f:
            self.assertNotIn(b"SMV1", f.read(), "the refused phase laid out verify data")

    def test_bytes_another_writer_overwrites_are_reported_not_passed(self):
        """The attack: something else writes into a verifying job's bytes while the group
        runs (here this test, through the image file). The verify reports it, naming the job
        and the host; it never passes it as clean."""
        agent, image = self.start_img_agent()
        stop = threading.Event()

        def scribble():
            # The agent creates the image when the phase prepares: reopened each time.
            while not stop.is_set():
                try:
                    with open(image, "r+b") as f:
                        f.seek(1 << 20)
                        f.write(b"scribbled" * 455)  # 4095 bytes: no header survives
                except FileNotFoundError:
                    pass
                stop.wait(0.05)
        writer = threading.Thread(target=scribble)
        writer.start()
        try:
            result, row = self.run_job_text(agent, "verify_attacked.fio", (
                "[global]\nfilename=img\nbs=4k\nsize=4m\ntime_based\nruntime=2\n"
                "[check]\nrw=randread\nverify=crc32c\n"
                "[other]\nrw=randread\noffset=4m\n"), expect=1)
        finally:
            stop.set()
            writer.join()
        check = {j["name"]: j for j in row["jobs"]}["check"]
        self.assertGreater(check["verify"]["mismatches"], 0, row)
        self.assertEqual(check["verify"]["first_mismatches"][0]["offset"], 1 << 20)
        self.assertEqual(check["verify"]["first_mismatches"][0]["kind"], "corrupt")
        self.assertIn("job 'check': verify: ", result.stdout + result.stderr)
        self.assertRegex(result.stdout, rf"verify {re.escape(agent.address)} job 'check': "
                                        r"\d+ units of 4 KiB checked, [1-9]\d* mismatch")

    def test_a_job_file_given_as_a_plan_says_to_use_fio(self):
        job = os.path.join(CORPUS, "kube_style.fio")
        result = self.run_stormark(["run", "--plan", job, "--no-db"])
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertEqual(result.stderr.strip(),
                         f"stormark: {job}: this is a fio job file, not a plan: run it with "
                         f"stormark run --fio {job} (stormark fio --check {job} shows what it "
                         "runs)")
        # Given with no flag at all: the flag that takes it.
        bare = self.run_stormark(["run", job, "--no-db"])
        self.assertEqual(bare.returncode, 2, bare.describe())
        self.assertEqual(bare.stderr.splitlines()[0],
                         f"stormark: {job}: a fio job file is given with --fio: stormark run "
                         f"--fio {job}")

    def test_help_fio_lists_every_option_and_matches_the_docs(self):
        md = self.run_stormark(["help", "fio", "--markdown"])
        self.assertEqual(md.returncode, 0, md.describe())
        self.assertEqual(md.stdout, h.read_text(DOCS),
                         "docs/workloads/fio-options.md is out of date: "
                         "stormark help fio --markdown > docs/workloads/fio-options.md")
        text = self.run_stormark(["help", "fio"])
        for name in ("zonemode", "group_reporting", "bsrange", "ioengine", "norandommap"):
            self.assertIn(name, text.stdout)


if __name__ == "__main__":
    h.main()
