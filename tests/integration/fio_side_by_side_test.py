"""The same job file under Debian's fio and under stormark run --fio, on one loop device this
test attaches (root, losetup, fio), one tool after the other. The device's own counters
(/sys/block/loopN/stat) must agree with what each tool reports, within 2%, and both tools must
have moved the same bytes (and in each direction the same, but for the random split of the
mixed job).

The job file names its target through ${TARGET}: the device's path for fio, the agent's target
name for stormark, which reaches storage only through its targets."""

import json
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20

# Size-bound jobs (no time_based), so that each tool moves exactly the same bytes.
JOB = """[global]
filename=${TARGET}
direct=1
ioengine=psync
size=16m

[randwrite]
rw=randwrite
bs=4k

[seqread]
stonewall
rw=read
bs=64k

[randrw]
stonewall
rw=randrw
rwmixread=50
bs=8k
size=8m
"""

# In the style of the Kubernetes wrappers' files (kubestr, kbench): libaio with its batching
# options in an included file, fio's per-direction block sizes and a block-size split, and an
# end_fsync. Size-bound, so that both tools move the same bytes (the mixed job with norandommap:
# fio's random map ends a job of unlike sizes early, which `stormark fio --check` warns about).
KUBE_INCLUDE = """ioengine=libaio
direct=1
iodepth=16
iodepth_batch_submit=8
iodepth_batch_complete_min=4
size=16m
"""

KUBE_JOB = """[global]
include kube.inc
filename=${TARGET}
randrepeat=0
verify=0
gtod_reduce=1
group_reporting

[read_iops]
rw=randread
bs=4k

[mixed]
stonewall
rw=randrw
rwmixread=70
bs=4k,16k
norandommap

[write_bw]
stonewall
rw=write
bssplit=64k/50:128k/50
end_fsync=1
"""

# fio's trim and randtrim, which stormark runs as its trim workload.
TRIM_JOB = """[global]
filename=${TARGET}
ioengine=libaio

[trim]
rw=trim
bs=1m
size=16m

[randtrim]
stonewall
rw=randtrim
bs=64k
size=8m
offset=32m
"""

# kubestr's default file's shape: unlike jobs with no stonewall between them, which fio runs
# all at once (one run group). Size-bound, each job of one direction, so that both tools move
# the same bytes in each direction.
GROUP_JOB = """[global]
filename=${TARGET}
ioengine=libaio
direct=1
iodepth=8
randrepeat=0

[read_iops]
rw=randread
bs=4k
size=8m

[write_bw]
rw=write
bs=64k
size=8m
offset=32m
numjobs=2
offset_increment=8m
"""

# fio's trimwrite and randtrimwrite: each block discarded, then written. fio 3.33's
# randtrimwrite with an offset= discards one block and stops (fixed in fio 3.41 by 544be3b1,
# "io_u: fix offset calculation in randtrimwrite"), so this one starts at 0.
TRIMWRITE_JOB = """[global]
filename=${TARGET}
ioengine=psync

[trimwrite]
rw=trimwrite
bs=256k
size=8m
offset=16m

[randtrimwrite]
stonewall
rw=randtrimwrite
bs=64k
size=4m
"""


@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup)")
@unittest.skipUnless(net.have("losetup") and net.have("fio"), "needs losetup and fio")
class FioSideBySideTest(h.StormarkTestCase):

    def setUp(self):
        work = self.make_dir("stormark-fio-sbs-")
        backing = os.path.join(work, "disk.img")
        with open(backing, "wb") as f:
            f.truncate(64 * MIB)
        self.device = net.run("losetup", "-f", "--show", backing).stdout.strip()
        self.addCleanup(net.run, "losetup", "-d", self.device, check=False)
        self.job = self.write_file(os.path.join(work, "job.fio"), JOB)
        self.work = work
        self.agent = self.start_agent("fio-sbs", extra_targets=(
            f"  loop: {{block: {self.device}, disposable: true}}\n"))

    def device_bytes(self):
        """(read, written) bytes of the loop device so far, and its (reads, writes) completed."""
        with open(f"/sys/block/{os.path.basename(self.device)}/stat") as f:
            fields = f.read().split()
        return int(fields[2]) * 512, int(fields[6]) * 512, int(fields[0]), int(fields[4])

    def measured(self, run):
        """Runs `run`; returns what the device saw, (read, written), and what it reported."""
        before = self.device_bytes()
        reported = run()
        after = self.device_bytes()
        return tuple(a - b for a, b in zip(after, before)), reported

    def run_fio(self):
        out = os.path.join(self.work, "fio.json")
        subprocess.run(["fio", self.job, "--output-format=json", f"--output={out}"], check=True,
                       env=dict(os.environ, TARGET=self.device), capture_output=True, timeout=300)
        with open(out) as f:
            jobs = json.load(f)["jobs"]
        return (sum(j["read"]["io_bytes"] for j in jobs),
                sum(j["write"]["io_bytes"] for j in jobs))

    def run_stormark(self, phases_expected=("randwrite", "seqread", "randrw")):
        out = os.path.join(self.work, "stormark.json")
        result = super().run_stormark(["run", "--fio", self.job, "--agent", self.agent.address,
                                       "--json", out, "--no-db", "--no-progress"],
                                      env={"TARGET": "loop"}, timeout=300)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        phases = self.load_json(out)["phases"]
        self.assertEqual(tuple(p["name"] for p in phases), phases_expected)
        read = written = 0
        for phase in phases:
            row = phase["results"][0]
            self.assertEqual(row["status"], "succeeded", row)
            # randio's per-operation figures: reads and writes apart.
            by_op = {m["name"]: m["bytes"] for m in row["measurements"]}
            self.assertEqual(sum(by_op.values()), row["bytes"], row["measurements"])
            read += by_op.get("read", 0)
            written += by_op.get("write", 0)
        return read, written

    def assert_close(self, device, reported, what):
        for i, direction in enumerate(("read", "written")):
            self.assertLessEqual(abs(device[i] - reported[i]), 0.02 * max(reported[i], MIB),
                                 f"{what}: the device saw {device[i] / MIB:.2f} MiB {direction}, "
                                 f"the tool reported {reported[i] / MIB:.2f} MiB")

    def test_the_device_saw_what_each_tool_reported_and_both_did_the_same_work(self):
        fio_device, fio_reported = self.measured(self.run_fio)
        ours_device, ours_reported = self.measured(self.run_stormark)
        self.assert_close(fio_device, fio_reported, "fio")
        self.assert_close(ours_device, ours_reported, "stormark")
        # The same bytes in all; the randrw job's 8 MiB are split at random by each tool's own
        # generator (1024 requests at 50%: a standard deviation of 16 requests, 128 KiB, for
        # each tool), so its split agrees within 1 MiB, five standard deviations of the
        # difference, which a wrong rwmixread (70/30 would be 1.6 MiB off) does not.
        self.assertEqual(sum(ours_reported), sum(fio_reported))
        # The same requests reached the device: the block sizes and the sequential pass
        # (merged alike) give the same counts of reads and of writes, within 2%. Before a
        # phase writes a block device, the agent reads its first and last blocks for a
        # filesystem's signature (32 small reads, measured), which fio does not: two of the
        # three jobs write.
        print(f"device requests (reads, writes): fio {fio_device[2:]}, stormark "
              f"{ours_device[2:]}", file=sys.stderr)
        probe = 2 * 32
        self.assertLessEqual(abs(ours_device[2] - probe - fio_device[2]), 0.02 * fio_device[2],
                             f"reads completed: stormark {ours_device[2]} ({probe} of them "
                             f"the agent's signature probes), fio {fio_device[2]}")
        self.assertLessEqual(abs(ours_device[3] - fio_device[3]), 0.02 * fio_device[3],
                             f"writes completed: stormark {ours_device[3]}, fio {fio_device[3]}")
        self.assertLessEqual(abs(ours_reported[0] - fio_reported[0]), MIB,
                             f"reads: stormark {ours_reported[0]}, fio {fio_reported[0]}")

    def discards(self):
        """(discard requests, bytes discarded) the loop device has completed so far."""
        with open(f"/sys/block/{os.path.basename(self.device)}/stat") as f:
            fields = f.read().split()
        return int(fields[11]), int(fields[13]) * 512

    def test_trim_jobs_discard_what_fios_discard(self):
        self.job = self.write_file(os.path.join(self.work, "trim.fio"), TRIM_JOB)
        before = self.discards()
        out = os.path.join(self.work, "fio-trim.json")
        subprocess.run(["fio", self.job, "--output-format=json", f"--output={out}"], check=True,
                       env=dict(os.environ, TARGET=self.device), capture_output=True, timeout=300)
        middle = self.discards()
        with open(out) as f:
            fio_trimmed = sum(j["trim"]["io_bytes"] for j in json.load(f)["jobs"])
        json_out = os.path.join(self.work, "stormark-trim.json")
        fio_json_out = os.path.join(self.work, "stormark-trim-fio.json")
        result = super().run_stormark(["run", "--fio", self.job, "--agent", self.agent.address,
                                       "--json", json_out, "--fio-json", fio_json_out,
                                       "--no-db", "--no-progress"],
                                      env={"TARGET": "loop"}, timeout=300)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        after = self.discards()
        phases = self.load_json(json_out)["phases"]
        self.assertEqual([p["name"] for p in phases], ["trim", "randtrim"])
        ours_trimmed = sum(p["results"][0]["bytes"] for p in phases)
        fio_device = (middle[0] - before[0], middle[1] - before[1])
        ours_device = (after[0] - middle[0], after[1] - middle[1])
        print(f"discards (requests, bytes): fio {fio_device}, stormark {ours_device}",
              file=sys.stderr)
        # 24 MiB each, and the device discarded exactly that, in the same requests.
        self.assertEqual(fio_trimmed, 24 * MIB)
        self.assertEqual(ours_trimmed, 24 * MIB)
        self.assertEqual(fio_device[1], 24 * MIB)
        self.assertEqual(ours_device, fio_device)
        # stormark's fio-format JSON has them in fio's trim block, as fio's own does.
        with open(fio_json_out) as f:
            ours_fio = json.load(f)["jobs"]
        self.assertEqual([(j["jobname"], j["trim"]["io_bytes"]) for j in ours_fio],
                         [("trim", 16 * MIB), ("randtrim", 8 * MIB)])

    def test_unlike_jobs_without_stonewall_run_at_once_as_fio_runs_them(self):
        self.job = self.write_file(os.path.join(self.work, "group.fio"), GROUP_JOB)
        fio_out = os.path.join(self.work, "fio-group.json")

        def fio():
            subprocess.run(["fio", self.job, "--output-format=json", f"--output={fio_out}"],
                           check=True, env=dict(os.environ, TARGET=self.device),
                           capture_output=True, timeout=300)
            with open(fio_out) as f:
                jobs = json.load(f)["jobs"]
            return (sum(j["read"]["io_bytes"] for j in jobs),
                    sum(j["write"]["io_bytes"] for j in jobs))

        fio_device, fio_reported = self.measured(fio)
        ours_fio_json = os.path.join(self.work, "stormark-group-fio.json")
        json_out = os.path.join(self.work, "stormark-group.json")

        def ours():
            result = super(FioSideBySideTest, self).run_stormark(
                ["run", "--fio", self.job, "--agent", self.agent.address, "--json", json_out,
                 "--fio-json", ours_fio_json, "--no-db", "--no-progress"],
                env={"TARGET": "loop"}, timeout=300)
            self.assert_no_crash(result)
            self.assertEqual(result.returncode, 0, result.describe())
            self.assertIn("read_iops: read", result.stdout)  # the table's per-job rows
            phases = self.load_json(json_out)["phases"]
            self.assertEqual([p["name"] for p in phases], ["read_iops..write_bw"])
            row = phases[0]["results"][0]
            self.assertEqual(row["status"], "succeeded", row)
            by_op = {m["name"]: m["bytes"] for m in row["measurements"]}
            return by_op.get("read", 0), by_op.get("write", 0)

        ours_device, ours_reported = self.measured(ours)
        self.assert_close(fio_device, fio_reported, "fio")
        self.assert_close(ours_device, ours_reported, "stormark")
        # Each job moved its size, in its direction: 8 MiB read, 2 x 8 MiB written.
        self.assertEqual(fio_reported, (8 * MIB, 16 * MIB))
        self.assertEqual(ours_reported, (8 * MIB, 16 * MIB))
        # The writes went where the job put them (32 MiB on), the reads read the first 8 MiB:
        # the device's own request counts agree within 2% after the agent's signature probe.
        print(f"run group device requests (reads, writes): fio {fio_device[2:]}, stormark "
              f"{ours_device[2:]}", file=sys.stderr)
        self.assertLessEqual(abs(ours_device[2] - 32 - fio_device[2]), 0.02 * fio_device[2])
        self.assertLessEqual(abs(ours_device[3] - fio_device[3]), 0.02 * fio_device[3] + 2)
        # Per job, as fio reports them (fio gives one entry per numjobs clone).
        with open(fio_out) as f:
            fio_jobs = json.load(f)["jobs"]
        with open(ours_fio_json) as f:
            ours_jobs = json.load(f)["jobs"]

        def per_job(jobs):
            out = {}
            for j in jobs:
                got = out.setdefault(j["jobname"], [0, 0])
                got[0] += j["read"]["io_bytes"]
                got[1] += j["write"]["io_bytes"]
            return out

        self.assertEqual(per_job(ours_jobs), per_job(fio_jobs))
        self.assertEqual(per_job(ours_jobs), {"read_iops": [8 * MIB, 0], "write_bw": [0, 16 * MIB]})
        # They ran at once: the first job done before the last, in one timed region.
        row = self.load_json(json_out)["phases"][0]["results"][0]
        self.assertEqual([j["name"] for j in row["jobs"]], ["read_iops", "write_bw"])
        self.assertIn("stonewall", row)

    def test_trimwrite_discards_and_writes_what_fios_does(self):
        self.job = self.write_file(os.path.join(self.work, "trimwrite.fio"), TRIMWRITE_JOB)
        before = self.discards() + self.device_bytes()
        out = os.path.join(self.work, "fio-trimwrite.json")
        subprocess.run(["fio", self.job, "--output-format=json", f"--output={out}"], check=True,
                       env=dict(os.environ, TARGET=self.device), capture_output=True, timeout=300)
        middle = self.discards() + self.device_bytes()
        with open(out) as f:
            fio_jobs = json.load(f)["jobs"]
        fio_reported = (sum(j["trim"]["io_bytes"] for j in fio_jobs),
                        sum(j["write"]["io_bytes"] for j in fio_jobs))
        fio_json_out = os.path.join(self.work, "stormark-trimwrite-fio.json")
        result = super().run_stormark(["run", "--fio", self.job, "--agent", self.agent.address,
                                       "--fio-json", fio_json_out, "--no-db", "--no-progress"],
                                      env={"TARGET": "loop"}, timeout=300)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        after = self.discards() + self.device_bytes()
        with open(fio_json_out) as f:
            ours_jobs = json.load(f)["jobs"]
        ours_reported = (sum(j["trim"]["io_bytes"] for j in ours_jobs),
                         sum(j["write"]["io_bytes"] for j in ours_jobs))
        fio_device = [m - b for m, b in zip(middle, before)]
        ours_device = [a - m for a, m in zip(after, middle)]
        print(f"trimwrite device (discards, discarded, read, written): fio "
              f"{fio_device[:4]}, stormark {ours_device[:4]}", file=sys.stderr)
        # 12 MiB discarded and 12 MiB written by each tool, and the device saw exactly that.
        self.assertEqual(fio_reported, (12 * MIB, 12 * MIB))
        self.assertEqual(ours_reported, (12 * MIB, 12 * MIB))
        self.assertEqual(ours_device[0], fio_device[0])  # the same discard requests
        self.assertEqual(ours_device[1], 12 * MIB)
        self.assertEqual(fio_device[3], 12 * MIB)
        self.assertEqual(ours_device[3], 12 * MIB)

    def test_a_kubernetes_style_libaio_file_with_include(self):
        self.write_file(os.path.join(self.work, "kube.inc"), KUBE_INCLUDE)
        self.job = self.write_file(os.path.join(self.work, "kube.fio"), KUBE_JOB)
        check = super().run_stormark(["fio", "--check", self.job], env={"TARGET": "loop"})
        self.assertEqual(check.returncode, 0, check.describe())
        self.assertNotIn("libaio without direct", check.stdout + check.stderr)
        fio_device, fio_reported = self.measured(self.run_fio)
        ours_device, ours_reported = self.measured(
            lambda: self.run_stormark(("read_iops", "mixed", "write_bw")))
        self.assert_close(fio_device, fio_reported, "fio")
        self.assert_close(ours_device, ours_reported, "stormark")
        # 16 MiB per job: 48 MiB in all, by both tools. A random job of unlike sizes ends once
        # it has moved its size, its last I/O whole (fio's rule, which stormark follows), so
        # the mixed job may move up to one 16 KiB write more.
        for tool, reported in (("fio", fio_reported), ("stormark", ours_reported)):
            self.assertGreaterEqual(sum(reported), 48 * MIB, tool)
            self.assertLess(sum(reported), 48 * MIB + 16384, tool)
        # The mixed job reads 4 KiB and writes 16 KiB at 70/30 by count: reads are 7/13 of
        # its bytes, with a standard deviation of about 150 KiB for each tool's draw.
        self.assertLessEqual(abs(ours_reported[0] - fio_reported[0]), MIB,
                             f"reads: stormark {ours_reported[0]}, fio {fio_reported[0]}")
        print(f"kube-style device requests (reads, writes): fio {fio_device[2:]}, stormark "
              f"{ours_device[2:]}", file=sys.stderr)
        # Random 4 KiB reads at depth 16 do not merge: each tool's reads reached the device as
        # the requests it reported, within 2% (stormark's after the agent's signature probes,
        # 32 per writing phase, two of the three). The two tools' counts differ by the mixed
        # job's random split (randrepeat=0), so they are each held to their own report.
        with open(os.path.join(self.work, "fio.json")) as f:
            fio_reads = sum(j["read"]["total_ios"] for j in json.load(f)["jobs"])
        ours_reads = sum(m["ops"] for p in self.load_json(os.path.join(
            self.work, "stormark.json"))["phases"] for m in p["results"][0]["measurements"]
            if m["name"] == "read")
        probe = 2 * 32
        self.assertLessEqual(abs(fio_device[2] - fio_reads), 0.02 * fio_reads,
                             f"reads completed: {fio_device[2]}, fio reported {fio_reads}")
        self.assertLessEqual(abs(ours_device[2] - probe - ours_reads), 0.02 * ours_reads,
                             f"reads completed: {ours_device[2]}, stormark reported "
                             f"{ours_reads} (+{probe} probes)")


if __name__ == "__main__":
    h.main()
