"""Our `postmark` workload against Debian's real PostMark (postmark 1.53), with one PostMark
script, in one directory, alternately: PostMark, ours, ours, PostMark, and again. PostMark
runs in that directory as its working directory (the script has no `set location`); ours
through the real `stormark` binary with its embedded agent on `--dir` that directory.

Counts: TOLERANCE 0. Ours draws PostMark's random numbers (MT19937 seeded as PostMark's
sgenrand() seeds it) and makes PostMark's choices in PostMark's order, so with the same seed
every count in PostMark's report (created, creation alone, created mixed, read, appended,
deleted, deletion alone, deleted mixed) must be equal, not close. Had we drawn our own random
numbers, the counts would be binomial: reads ~ Bin(T, bias_read / 10), so with T = 6000 and
bias 4 a standard deviation of sqrt(T p (1 - p)) = 38 files, and 4 sd = 152 files (6% of the 2400 reads)
would be the tolerance. That bound is still checked, for both tools, as a sanity check of
the script's meaning (BINOMIAL_SDS below). The data totals may differ by MEGABYTE_TOLERANCE =
0.05 MiB: PostMark adds bytes up in C floats (24-bit mantissa); 7000 or so additions to
totals under 64 MiB round by at most 2 bytes each, at most 0.02 MiB and in practice far less
(the model's unit test reproduces PostMark's float totals exactly); ours are exact.

Rates: PostMark's report counts whole seconds (time()), so its own figures carry up to a
second of error; its process's wall-clock time (measured here, sub-second) is the fair figure
to set against our "seconds total", since the counts are equal and a rate is count / time.
PostMark's process time adds only its start-up, five mkdir/rmdir and printing (milliseconds).
WALL_FACTOR: the median of our totals and the median of PostMark's wall times must be within
2.5x of each other. CPU_FACTOR: the same for CPU time (user + system; PostMark's from
getrusage of the child, ours from the agent's "total" measurement), within 3x: a looser
check, since the CPU time moves with ext4's history too (below).

Why so wide, and why CPU too. Measured on this VM (2 vCPUs shared with other engineers'
compiles, load average 5-8; ext4 on virtio): the same PostMark script took 1.7 s to 5.6 s in
PostMark from one run to the next, and ours 6.8 s to 25 s during one compile burst. Two things
move the figures: CPU contention (wall time only), and ext4's inode allocator, which skips
inodes deleted in the last dirty_expire_centisecs (30 s) with a scan (recently_deleted() was
16% of PostMark's profile, and most of both tools' time in find_inode_bit), so each run pays
for the deletions of the runs before it, whichever tool made them, and back-to-back runs get
slower (PostMark alone, four in a row: 0.77, 1.22, 1.48, 2.91 s with ours in between). The
order PostMark-ours-ours-PostMark gives both tools the same history on average; CPU time is
immune to the contention, though not to the history.

Measured: ten runs of this test (2 to 4 rounds of 8000 or 12000 transactions), medians ours /
PostMark: wall time 1.03x to 1.44x, CPU time 0.72x to 1.53x, once 2.81x (two PostMark runs
took 0.57 and 0.67 s of CPU against 1.81 s for the third). On tmpfs, where ext4's allocator is out of the picture, ours
took 0.23-0.28 s of CPU against PostMark's 0.21-0.23 s: the difference is the agent's bookkeeping
(two clock reads, a histogram and a set of names per operation), about 3 us per operation. So a
real 3x slowdown of ours shows as 3 x 1.03 = 3.1x or more, against 2.5x. Four rounds of 8000 took 33 s
on a quiet hour and 64 s on a busy one, hence 6000 transactions. It runs alone (RUN_SERIAL), as bonnie_vs_bonnie does.

Fails (not skips) when postmark is not installed: scripts/install-deps.sh installs it.
"""

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

POSTMARK = shutil.which("postmark") or ("/usr/bin/postmark"
                                        if os.access("/usr/bin/postmark", os.X_OK) else None)

TRANSACTIONS = 6000
BIAS_READ = 4
SCRIPT = f"""# PostMark's own script format; the same file drives both tools.
set size 500 12000
set number 1000
set transactions {TRANSACTIONS}
set subdirectories 5
set read 1024
set write 2048
set bias read {BIAS_READ}
set seed 7
run
quit
"""

ROUNDS = int(os.environ.get("POSTMARK_VS_ROUNDS", "4"))
TOLERANCE = 0
BINOMIAL_SDS = 4
MEGABYTE_TOLERANCE = 0.05
WALL_FACTOR = 2.5
CPU_FACTOR = 3.0
RUN_TIMEOUT = 120  # seconds for one run of either tool

COUNTS = ("created", "created_alone", "created_mixed", "read", "appended", "deleted",
          "deleted_alone", "deleted_mixed")


def parse_report(text):
    """The figures of PostMark's verbose report (PostMark's own, or ours, which keeps its
    layout with decimal seconds): counts, seconds and megabytes."""
    def one(pattern):
        match = re.search(pattern, text)
        if not match:
            raise AssertionError(f"no /{pattern}/ in the report:\n{text}")
        return match.group(1)

    def megabytes(what):
        match = re.search(r"([\d.]+) (megabytes|kilobytes) " + what, text)
        if not match:
            raise AssertionError(f"no data {what} in the report:\n{text}")
        return float(match.group(1)) / (1024 if match.group(2) == "kilobytes" else 1)

    mixed = re.findall(r"Mixed with transactions: (\d+) files", text)
    if len(mixed) != 2:
        raise AssertionError(f"expected two 'Mixed with transactions' lines:\n{text}")
    return {
        "seconds_total": float(one(r"([\d.]+) seconds total")),
        "seconds_transactions": float(one(r"([\d.]+) seconds of transactions")),
        "created": int(one(r"(\d+) created \(")),
        "created_alone": int(one(r"Creation alone: (\d+) files")),
        "created_mixed": int(mixed[0]),
        "read": int(one(r"(\d+) read \(")),
        "appended": int(one(r"(\d+) appended \(")),
        "deleted": int(one(r"(\d+) deleted \(")),
        "deleted_alone": int(one(r"Deletion alone: (\d+) files")),
        "deleted_mixed": int(mixed[1]),
        "mb_read": megabytes("read"),
        "mb_written": megabytes("written"),
    }


class PostmarkVsPostmarkTest(h.StormarkTestCase):

    def setUp(self):
        if POSTMARK is None:
            self.fail("postmark is not installed; scripts/install-deps.sh installs it "
                      "(Debian package postmark)")
        self.dir = self.make_dir("stormark-itest-postmark-dir-")  # both tools run here
        self.work = self.make_dir("stormark-itest-postmark-out-")  # script and reports
        self.script = self.write_file(os.path.join(self.work, "pm.cfg"), SCRIPT)
        self.runs = 0

    def run_theirs(self):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        try:
            done = subprocess.run([POSTMARK, self.script], cwd=self.dir,
                                  stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", timeout=RUN_TIMEOUT,
                                  preexec_fn=h._die_with_parent)
        except subprocess.TimeoutExpired:  # subprocess.run has killed it.
            self.fail(f"postmark did not finish within {RUN_TIMEOUT} s")
        wall = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = h.Result([POSTMARK, self.script], done.returncode, done.stdout, done.stderr)
        self.assertEqual(done.returncode, 0, result.describe())
        self.assertNotIn("out of files", done.stdout, result.describe())
        self.assertEqual(os.listdir(self.dir), [], "postmark left files behind")
        figures = parse_report(done.stdout)
        figures["wall"] = wall
        figures["cpu"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        return figures

    def run_ours(self):
        self.runs += 1
        json_path = os.path.join(self.work, f"ours{self.runs}.json")
        result = self.run_stormark(["run", "--postmark-config", self.script, "--dir", self.dir,
                                    "--json", json_path, "--no-progress"],
                                   timeout=RUN_TIMEOUT)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertEqual(os.listdir(self.dir), [], "our run left files behind")
        figures = parse_report(result.stdout)

        # The printed report says what the JSON says.
        report = self.load_json(json_path)
        self.assertEqual(len(report["phases"]), 1, report["phases"])
        host = report["phases"][0]["results"][0]
        self.assertEqual(host["status"], "succeeded", host)
        m = {x["name"]: x for x in host["measurements"]}
        self.assertEqual(figures["created_alone"], m["create_alone"]["ops"])
        self.assertEqual(figures["read"], m["read"]["ops"])
        self.assertEqual(figures["appended"], m["append"]["ops"])
        self.assertEqual(figures["deleted_alone"], m["delete_alone"]["ops"])
        self.assertAlmostEqual(figures["seconds_total"], m["total"]["elapsed_seconds"], delta=0.01)
        self.assertEqual(m["transactions"]["ops"], TRANSACTIONS)
        self.assertEqual(host["resolved"]["seed"], "7")
        self.assertEqual(host["resolved"]["subdirectories"], "5")
        self.assertEqual(host["resolved"]["out_of_files"], "false")
        figures["wall"] = m["total"]["elapsed_seconds"]
        figures["cpu"] = m["total"]["elapsed_seconds"] * m["total"]["cpu_percent"] / 100
        return figures

    def test_counts_equal_and_rates_agree_with_postmark(self):
        theirs, ours = [], []
        started = time.monotonic()
        for i in range(ROUNDS):
            # PostMark first in even rounds, ours first in odd ones: a run that follows more
            # deletions is slower (see above), and back-to-back runs pile them up.
            if i % 2 == 0:
                theirs.append(self.run_theirs())
                ours.append(self.run_ours())
            else:
                ours.append(self.run_ours())
                theirs.append(self.run_theirs())
        elapsed = time.monotonic() - started

        lines = [f"postmark vs PostMark 1.53, {TRANSACTIONS} transactions, {ROUNDS} rounds, "
                 f"{elapsed:.0f} s:"]
        for name in COUNTS:
            lines.append(f"  {name:14} ours {ours[0][name]:6}  postmark {theirs[0][name]:6}")
        for name in ("mb_read", "mb_written"):
            lines.append(f"  {name:14} ours {ours[0][name]:9.2f}  postmark {theirs[0][name]:9.2f}")
        medians = {}
        for name in ("wall", "cpu"):
            o = statistics.median(r[name] for r in ours)
            t = statistics.median(r[name] for r in theirs)
            medians[name] = o / t
            lines.append(f"  {name:5} s  ours {[round(r[name], 2) for r in ours]} median {o:.2f}"
                         f"  postmark {[round(r[name], 2) for r in theirs]} median {t:.2f}"
                         f"  ours/postmark {o / t:.2f}")
        lines.append(f"  postmark's own seconds total: {[r['seconds_total'] for r in theirs]}")
        summary = "\n".join(lines)
        print(summary, file=sys.stderr)

        for o, t in zip(ours, theirs):
            for name in COUNTS:
                self.assertLessEqual(abs(o[name] - t[name]), TOLERANCE, f"{name}\n{summary}")
            for name in ("mb_read", "mb_written"):
                self.assertLessEqual(abs(o[name] - t[name]), MEGABYTE_TOLERANCE,
                                     f"{name}\n{summary}")
            # PostMark's whole seconds hold its own wall time (it rounds down, and reports
            # at least 1).
            self.assertLessEqual(t["seconds_total"], t["wall"] + 1, summary)
            self.assertGreaterEqual(t["seconds_total"], t["wall"] - 1, summary)

        # Both tools' reads are the binomial count the script asks for.
        p = BIAS_READ / 10
        sd = (TRANSACTIONS * p * (1 - p)) ** 0.5
        for r in ours + theirs:
            self.assertLessEqual(abs(r["read"] - TRANSACTIONS * p), BINOMIAL_SDS * sd, summary)

        self.assertLessEqual(medians["wall"], WALL_FACTOR, f"ours too slow\n{summary}")
        self.assertGreaterEqual(medians["wall"], 1 / WALL_FACTOR, f"ours too fast\n{summary}")
        self.assertLessEqual(medians["cpu"], CPU_FACTOR, f"ours uses too much CPU\n{summary}")
        self.assertGreaterEqual(medians["cpu"], 1 / CPU_FACTOR, f"ours too cheap\n{summary}")


if __name__ == "__main__":
    h.main()
