"""stormark's bonnie and postmark against Debian's bonnie++ 2.00 and PostMark 1.53 on a
memory-limited machine, within 15% on every compared test. This test runs the benchmark scripts
that print the docs' agreement tables (bench/bonnie_vs_bonnie.py, bench/postmark_vs_postmark.py)
with fewer rounds and reads their JSON:

- both tools are held to the same memory limit (stormark's `memory_limit`; the reference tool
  in a v1 memory cgroup of that limit), with bonnie's data file at twice the limit;
- every run gets a freshly made journaled ext4 on a loop device (direct I/O to its file), so no
  run inherits another's deletions or fragmentation, and the runs alternate which tool is first;
- the loop device's own counters say the data-file tests' reads reached it;
- each test's ratio of the medians (stormark / reference) must be within TOLERANCE = 15%
  either way. A test outside it is measured again, up to ATTEMPTS times in all, and judged on
  the medians of all its runs (3 each, then 6): this VM's virtual disk is cached by the host,
  and a neighbour moves single runs and even a median of 3 (CI, 2026-12-06: get_block read
  0.71 with spreads of 1.52x and 1.45x, then 1.15; each attempt judged alone failed it twice).
  The tolerance is never widened. A real error (a wrong unit, a doubled count) stays outside
  15% however many runs are pooled.

bonnie runs on the issue's machine: a 256 MiB limit, a 1 GiB loop device capped at 200 MB/s for
reads and for writes (a v1 blkio rule, bench/memlimited.py), and 96 x 1024 files, what 256 MiB
holds (docs/page-cache.md). Every test is compared, the file tests included, but for a test
that both tools printed as +++++ in every run (too fast to time: the stat tests, whose inodes
stay cached at 96 x 1024 files); a test that one tool timed and the other did not fails. Every
count of the two PostMark reports must be equal; the script stops when one is not.

Measured on the development VM (2026-12-06, bench/bonnie_vs_bonnie.py --repeat 5): every timed
test within 7% of bonnie++ (0.93-1.01), spreads 1.00-1.12x in both tools; postmark 0.95-1.01 of
PostMark (spreads up to 1.55x in PostMark, 1.40x in stormark). Not covered here: the stat gap at
256 x 1024 files (0.70-0.84 of bonnie++ on a 1 GiB limit, docs/performance.md), which this
machine cannot hold.

It runs alone (RUN_SERIAL): about 4-6 minutes for bonnie and 1 for postmark per attempt. The
per-character tests are of 4 MiB: 0.9 s at the fastest rate seen here (4,469 K/sec), over
bonnie++'s 0.5 s; 16 MiB took 27 s per test per run on a slow day."""

import json
import os
import statistics
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
BONNIE = next((p for p in ("/usr/sbin/bonnie++", "/usr/bin/bonnie++") if os.access(p, os.X_OK)),
              None)
TOLERANCE = 0.15
ATTEMPTS = 2  # An attempt takes 6-13 minutes here; two and PostMark fit CTest's 1800 s.
REPEAT = 3
MIB = 1 << 20
BENCH_TIMEOUT = 900
# The docs' 2026-12-06 table at 256 MiB (docs/performance.md), stated in full.
BONNIE_MACHINE = ("--limit", "256M", "--disk", "1G", "--bandwidth", "200M", "--char-size", "4M",
                  "--files", "96")
POSTMARK_MACHINE = ("--bandwidth", "0")  # 256 MiB on a 1 GiB disk, as measured 2026-12-04


def v1_memory_cgroup():
    with open("/proc/self/cgroup", encoding="utf-8") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return os.path.isdir("/sys/fs/cgroup/memory" + ("" if path == "/" else path))
    return False


def within(ratio):
    return ratio is not None and 1 - TOLERANCE <= ratio <= 1 + TOLERANCE


@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup, mkfs, mount, cgroups)")
@unittest.skipUnless(net.have("losetup") and net.have("mkfs.ext4"), "needs losetup and mkfs.ext4")
@unittest.skipUnless(v1_memory_cgroup(), "needs the v1 memory controller (the scripts use it)")
@unittest.skipUnless(os.path.exists("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device"),
                     "needs the v1 blkio controller (bonnie's disk is capped at 200 MB/s)")
class MemoryLimitedAgreementTest(h.StormarkTestCase):

    def bench(self, script, *args):
        """Runs a bench script with --json and returns what it wrote, and its printed table. On
        a timeout the script gets SIGTERM, so that it lifts its disk's throttle and detaches its
        loop devices before it is killed."""
        out = os.path.join(self.make_dir(), "out.json")
        argv = [sys.executable, os.path.join(BENCH, script), "--repeat", str(REPEAT),
                "--settle", "1", "--json", out, *args]
        env = dict(os.environ, STORMARK_BIN_DIR=h.bin_dir())
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env,
                                preexec_fn=h._die_with_parent)
        try:
            stdout, stderr = proc.communicate(timeout=BENCH_TIMEOUT)
        except subprocess.TimeoutExpired:
            h._stop_process(proc, grace_seconds=60)
            stdout, stderr = proc.communicate()
            self.fail(f"{' '.join(argv)} took over {BENCH_TIMEOUT} s:\n{stdout}\n{stderr}")
        self.assertEqual(proc.returncode, 0, f"{' '.join(argv)}:\n{stdout}\n{stderr}")
        print(stdout, file=sys.stderr)
        with open(out, encoding="utf-8") as f:
            return json.load(f), stdout

    def agree(self, measure, name):
        """Calls measure() -> ({test: (reference runs, stormark runs)}, table) until every test
        is within the tolerance, ATTEMPTS times at most. A test outside it is judged again on
        the ratio of the medians of all its runs so far (3, then 6 each): more runs of the same
        two tools, alternating, under the same tolerance."""
        pending, tables, runs = None, [], {}
        for _ in range(ATTEMPTS):
            measured, table = measure()
            tables.append(table)
            for test, (theirs, ours) in measured.items():
                pooled = runs.setdefault(test, ([], []))
                pooled[0].extend(theirs)
                pooled[1].extend(ours)
            ratios = {t: statistics.median(o) / statistics.median(r) for t, (r, o) in runs.items()
                      if pending is None or t in pending}
            pending = [t for t, r in ratios.items() if not within(r)]
            if not pending:
                return
            tables.append("pooled: " + ", ".join(f"{t} {ratios[t]:.2f} (stormark "
                                                  f"{runs[t][1]}, reference {runs[t][0]})"
                                                  for t in pending))
        self.fail(f"{name}: outside {TOLERANCE:.0%} in {ATTEMPTS} attempts: {pending}\n"
                  + "\n".join(tables))

    @unittest.skipUnless(BONNIE, "needs bonnie++ (scripts/install-deps.sh installs it)")
    def test_bonnie_agrees_with_bonnie_plus_plus_on_every_test(self):
        def measure():
            report, table = self.bench("bonnie_vs_bonnie.py", *BONNIE_MACHINE)
            measured = {}
            for test, row in report["tests"].items():
                if all(x is None for x in row["reference"] + row["stormark"]):
                    continue  # +++++ in every run of both tools: too fast for either to time
                # Every other test was timed by both tools in every run.
                self.assertIsNotNone(row["ratio"], f"{test} was +++++ in a run\n{table}")
                measured[test] = (row["reference"], row["stormark"])
            # The data-file tests read the file (2 x the limit) twice, rewrite and block input,
            # of which the limit's worth at most was cached: at least 2 x the limit reached the
            # disk, in every run.
            floor = 2 * report["limit"] / MIB
            for run in report["bonnie++_runs"] + report["stormark_runs"]:
                self.assertGreaterEqual(run["device_read_mib"], floor, table)
            return measured, table
        self.agree(measure, "bonnie vs bonnie++")

    @unittest.skipUnless(net.have("postmark"), "needs postmark (scripts/install-deps.sh)")
    def test_postmark_agrees_with_postmark_on_time_and_cpu(self):
        def measure():
            report, table = self.bench("postmark_vs_postmark.py", *POSTMARK_MACHINE)
            measured = {}
            for case, result in report["cases"].items():
                for name, row in result["tests"].items():
                    measured[f"{case} {name}"] = (row["reference"], row["stormark"])
            # Beyond the cache, the reads of files written long before reach the disk.
            beyond = report["cases"]["beyond-cache"]
            for run in beyond["postmark_runs"] + beyond["stormark_runs"]:
                self.assertGreater(run["device_read_mib"], 64, table)
            return measured, table
        self.agree(measure, "postmark vs PostMark")


if __name__ == "__main__":
    h.main()
