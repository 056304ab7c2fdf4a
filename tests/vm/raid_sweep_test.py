"""The RAID post's sweep, run for real (raid-xfs-parameter-sweeps.txt): a qemu guest (vmlab.py)
with four virtual disks; one plan sweeps `mdadm --chunk` x `mkfs.xfs -d agcount` x `mount -o
logbufs` (2 x 2 x 2 points, each run twice). As in the post's loop, setup hooks create the md
RAID 5 array, make XFS on it and mount it with the point's values; teardown hooks unmount, stop
the array and zero the disks' superblocks. The command phases are the post's: `dd ...
conv=fdatasync` and a tar extraction (of a small tarball the guest makes at boot).

The hooks run on the guest's agent, as root (`commands.user: root`), in the agent's root, which
is the host's root over 9p: mdadm, mkfs.xfs and xfs_info are the host's own binaries, the md
and XFS drivers the guest kernel's.

- Every point ran on the array and filesystem it claims: a `layout` phase captures /proc/mdstat,
  `mdadm --detail`, `xfs_info` and the target's /proc/mounts line, which must show the point's
  chunk, agcount and logbufs; mkfs.xfs took the stripe geometry from md (sunit = chunk, swidth =
  3 x chunk), as the post notes it does for software RAID.
- Every phase ran twice at every point; each write reached md0 (the disk's own counters): the
  dd's 96 MiB, the tarball's contents. Each row's target is XFS on md0, detected as md RAID 5
  over the four virtio disks.
- The summary table has one row per point, each cell a median with its [min-max]; the HTML
  report draws each command's wall time against every swept parameter, a point per sweep point
  and two runs behind each (saved as test-artifacts/raid_sweep.html).
- The teardown left no array behind, and the agent still serves.
- A point whose mkfs refuses its agcount is skipped and the run goes on to the next point: its
  teardown runs every line, so the failed `umount` of the never-mounted filesystem does not
  keep `mdadm --stop` from freeing the disks for the next point's `mdadm --create`.

The guest's figures are emulated (TCG) and mean nothing; only counts, labels and layouts are
checked.
"""

import itertools
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
WHY_NOT = vmlab.missing() or ("" if all(os.access(p, os.X_OK) for p in (
    "/usr/sbin/mdadm", "/usr/sbin/mkfs.xfs", "/usr/sbin/xfs_info"))
    else "needs mdadm and xfsprogs (scripts/install-deps.sh test)")

# Sparse images: 4 x 512 MiB is a 1.5 GiB RAID 5, big enough for mkfs.xfs to use md's stripe
# geometry (it ignores it on a "small data volume").
DISK_MIB = 512
DISKS = ("vda", "vdb", "vdc", "vdd")
CHUNKS_KIB, AGCOUNTS, LOGBUFS = (64, 256), (4, 16), (2, 8)
REPEAT = 2
DD_MIB = 96
# The tarball: 16 directories of 50 files of 8 KiB (random data), made by the guest at boot.
TAR_FILES, TAR_FILE_BYTES = 16 * 50, 8192

GUEST_BEFORE = r"""for i in $(seq 1 100); do [ -b /dev/vdd ] && break; sleep 0.2; done
mkdir -p /host/tmp/r1 /host/tmp/src
j=0
while [ $j -lt 16 ]; do
  mkdir -p /host/tmp/src/d$j
  i=0
  while [ $i -lt 50 ]; do head -c 8192 /dev/urandom > /host/tmp/src/d$j/f$i; i=$((i+1)); done
  j=$((j+1))
done
tar cf /host/tmp/src.tar -C /host/tmp src && rm -rf /host/tmp/src
# The agent's PATH as systemd gives it: the hooks' mdadm and mkfs.xfs are in /usr/sbin.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
"""

# The target is a directory that the setup hooks mount XFS on; between points it is only the
# guest's tmpfs. Its device is the array the hooks create.
CONFIG = """targets:
  r1:
    dir: /tmp/r1
    device: /dev/md0
commands: {enabled: true, user: root}
"""

DEV = '"${STORMARK_TARGET_DEVICE:?}"'
SETUP = [
    f"mdadm --create {DEV} --run --assume-clean --level=5 --raid-devices=4 --chunk={{chunk}} "
    + " ".join(f"/dev/{d}" for d in DISKS),
    f"mkfs.xfs -f -q -d agcount={{agcount}} {DEV}",
    f'mount -o logbufs={{logbufs}} {DEV} "$STORMARK_TARGET_DIR"',
]
TEARDOWN = [
    'umount "$STORMARK_TARGET_DIR"',
    f"mdadm --stop {DEV}",
    "mdadm --zero-superblock " + " ".join(f"/dev/{d}" for d in DISKS),
]
LAYOUT = ('cat /proc/mdstat; mdadm --detail "$STORMARK_TARGET_DEVICE" | grep "Chunk Size"; '
          'xfs_info "$STORMARK_TARGET_DIR"; grep " $STORMARK_TARGET_DIR " /proc/mounts')


def yaml_list(lines, indent="  "):
    return "".join(f"{indent}- '{line}'\n" for line in lines)


def artifact_dir():
    path = os.path.join(os.path.dirname(os.path.abspath(h.bin_dir())), "test-artifacts")
    os.makedirs(path, exist_ok=True)
    return path


@unittest.skipIf(WHY_NOT, WHY_NOT)
class RaidSweepTest(h.StormarkTestCase):

    def setUp(self):
        self.work = self.make_dir("stormark-vm-raid-")
        disks = []
        for i, _ in enumerate(DISKS):
            path = os.path.join(self.work, f"d{i}.img")
            with open(path, "wb") as f:
                f.truncate(DISK_MIB * MIB)
            disks.append(vmlab.Disk(path, "virtio", serial=f"raid{i}"))
        script = vmlab.agent_script(h.bin_dir(), CONFIG, before=GUEST_BEFORE)
        self.guest = vmlab.Guest(self, "raid", script, memory_mib=512, disks=disks,
                                 extra_modules=("md_mod", "raid456", "xfs")).start()
        self.guest.wait_for(r"listening on", timeout=300)
        self.address = f"127.0.0.1:{self.guest.port(7420)}"
        self.db = os.path.join(self.work, "results.db")

    def plan(self, sweep, repeat, phases):
        return self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: raid5, address: "{self.address}", target: r1}}
repeat: {repeat}
sweep:
{sweep}setup:
{yaml_list(SETUP)}teardown:
{yaml_list(TEARDOWN)}phases:
{phases}""")

    def run_plan(self, plan, timeout):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--db", self.db,
                                    "--no-progress"], timeout=timeout)
        self.assert_no_crash(result)
        return result, self.load_json(json_path)

    def mdstat(self):
        """/proc/mdstat now, through a command phase on the (now tmpfs) target."""
        json_path = os.path.join(self.make_dir(), "mdstat.json")
        result = self.run_stormark(["run", "--agent", self.address, "--target", "r1",
                                    "--workload", "command", "--set", "exec=cat /proc/mdstat",
                                    "--json", json_path, "--no-db", "--no-progress"],
                                   timeout=120)
        self.assertEqual(result.returncode, 0, result.describe())
        return self.load_json(json_path)["phases"][0]["results"][0]["resolved"]["stdout_tail"]

    def test_chunk_agcount_logbufs_sweep_with_hooks_repeats_table_and_chart(self):
        sweep = (f"  chunk: [{', '.join(map(str, CHUNKS_KIB))}]\n"
                 f"  agcount: [{', '.join(map(str, AGCOUNTS))}]\n"
                 f"  logbufs: [{', '.join(map(str, LOGBUFS))}]\n")
        phases = (f"  - {{name: layout, workload: command, command: '{LAYOUT}'}}\n"
                  f"  - {{name: dd, workload: command, exec: 'dd if=/dev/zero of=bigfile bs=1M "
                  f"count={DD_MIB} conv=fdatasync'}}\n"
                  "  - {name: untar, workload: command, exec: 'tar xf /tmp/src.tar', sync: true}\n")
        result, report = self.run_plan(self.plan(sweep, REPEAT, phases), timeout=1500)
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout, file=sys.stderr)
        self.assertEqual(result.returncode, 0, result.describe() + self.guest.console_text()[-2000:])
        self.assertEqual(report["status"], "complete", report["reasons"])

        points = list(itertools.product(CHUNKS_KIB, AGCOUNTS, LOGBUFS))
        # The hooks: every line at every point, in order, with the point's values in it.
        self.assertEqual(len(report["hooks"]), len(points) * (len(SETUP) + len(TEARDOWN)))
        for hook in report["hooks"]:
            self.assertTrue(hook["ok"], hook)
            self.assertEqual(hook["hosts"], 1, hook)
        for n, (chunk, agcount, logbufs) in enumerate(points):
            described = f"chunk={chunk} agcount={agcount} logbufs={logbufs}"
            mine = report["hooks"][n * 6:(n + 1) * 6]
            self.assertEqual([hk["what"] for hk in mine], ["setup"] * 3 + ["teardown"] * 3)
            self.assertEqual({hk["sweep_point"] for hk in mine}, {described})
            self.assertIn(f"--chunk={chunk} /dev/vda", mine[0]["line"])
            self.assertIn(f"-d agcount={agcount} ", mine[1]["line"])
            self.assertIn(f"-o logbufs={logbufs} ", mine[2]["line"])

        # Every phase at every point, twice, in the plan's order.
        self.assertEqual(len(report["phases"]), len(points) * REPEAT * 3)
        seen = {}
        for phase in report["phases"]:
            point = phase["sweep_point"]
            key = (int(point["chunk"]), int(point["agcount"]), int(point["logbufs"]))
            seen.setdefault((key, phase["name"]), []).append(phase["repetition"])
            self.assertEqual(len(phase["results"]), 1, phase)
            row = phase["results"][0]
            self.assertEqual(row["status"], "succeeded", row)
            self.check_row(phase["name"], key, row)
        self.assertEqual(seen, {(p, name): list(range(REPEAT)) for p in points
                                for name in ("layout", "dd", "untar")})

        self.check_summary(result.stdout, points)
        # `results show` prints the same table from the database.
        show = self.run_stormark(["results", "show", "latest", "--db", self.db])
        self.assertEqual(show.returncode, 0, show.describe())
        self.assertEqual(self.summary_rows(show.stdout), self.summary_rows(result.stdout))
        self.check_chart(points)

        # The last teardown stopped the array; the agent still serves.
        self.assertNotIn("md0", self.mdstat())

    def check_row(self, name, point, row):
        chunk, agcount, logbufs = point
        env = row["environment"]["target"]
        self.assertEqual((env["filesystem"], env["device"]), ("xfs", "md0"), env)
        self.assertEqual(env["transport_detail"],
                         "md raid5 over " + ", ".join(f"{d} (virtio)" for d in DISKS), env)
        stats = row["device_stats"]
        self.assertEqual(stats["disk"], "md0", stats)
        written = int(stats["disk.written_bytes"])
        if name == "layout":
            out = row["resolved"]["stdout_tail"]
            # /proc/mdstat and mdadm: the array is RAID 5 over the four disks, at this chunk.
            self.assertRegex(out, r"md0 : active raid5 (vd[a-d]\[\d\] ?){4}\n", out)
            self.assertIn(f"level 5, {chunk}k chunk, algorithm 2 [4/4] [UUUU]", out)
            self.assertRegex(out, rf"Chunk Size : {chunk}K\n")
            # xfs_info: the agcount asked for, and the stripe geometry md gave mkfs.xfs
            # (4 KiB blocks; 3 data disks in a 4-disk RAID 5).
            self.assertRegex(out, rf"meta-data=/dev/md0 +isize=\d+ +agcount={agcount}, ")
            sunit = chunk // 4
            self.assertRegex(out, rf"sunit={sunit} +swidth={3 * sunit} blks")
            # /proc/mounts: XFS on md0 at the target, with the point's logbufs.
            self.assertRegex(out, rf"/dev/md0 /tmp/r1 xfs \S*\blogbufs={logbufs}\b")
            self.assertLess(written, MIB, stats)  # It only read.
        elif name == "dd":
            self.assertGreaterEqual(written, DD_MIB * MIB, stats)
            self.assertLessEqual(written, DD_MIB * MIB * 1.05, stats)
        else:
            contents = TAR_FILES * TAR_FILE_BYTES
            self.assertGreaterEqual(written, contents, stats)
            self.assertLessEqual(written, contents * 1.5, stats)
        if name != "layout":
            self.assertEqual(row["resolved"]["exit_status"], "exited with status 0", row)

    def summary_rows(self, stdout):
        self.assertIn(f"Summary: median of {REPEAT} runs, [min-max] beside it", stdout)
        summary = stdout.split(f"Summary: median of {REPEAT} runs")[1].split("\n\n")[1]
        return [line for line in summary.splitlines() if line.startswith("  raid5 ")]

    def check_summary(self, stdout, points):
        """The post's table: a row per point, each command's median wall time and range."""
        rows = self.summary_rows(stdout)
        header = stdout.split(f"Summary: median of {REPEAT} runs")[1].split("\n\n")[1]
        self.assertRegex(header.splitlines()[0], r"^\s+host\s+via\s+target\s+chunk\s+agcount\s+"
                                                 r"logbufs\s+layout \(wall\)\s+dd \(wall\)\s+"
                                                 r"untar \(wall\)$")
        self.assertEqual(len(rows), len(points), rows)
        cell = r"(\d+\.\d+) s \[(\d+\.\d+)-(\d+\.\d+)\] ?\*?"
        for row, (chunk, agcount, logbufs) in zip(rows, points):
            # "!": the rows' settings differ (the points' mount options), as they should.
            m = re.match(rf"^  raid5(?: !)?\s+local\s+r1\s+{chunk}\s+{agcount}\s+{logbufs}\s+{cell}\s+"
                         rf"{cell}\s+{cell}$", row)
            self.assertIsNotNone(m, row)
            for i in range(0, 9, 3):
                median, low, high = (float(v) for v in m.groups()[i:i + 3])
                self.assertLessEqual(low, median)
                self.assertLessEqual(median, high)

    def check_chart(self, points):
        """The HTML report's sweep charts: each command's wall time against each parameter."""
        html = os.path.join(artifact_dir(), "raid_sweep.html")
        done = self.run_stormark(["report", "latest", "--db", self.db, "-o", html])
        self.assertEqual(done.returncode, 0, done.describe())
        page = h.read_text(html)
        for phase in ("dd", "untar"):
            for axis, values in (("chunk", CHUNKS_KIB), ("agcount", AGCOUNTS),
                                 ("logbufs", LOGBUFS)):
                title = f"{phase}: wall seconds against {axis}"
                self.assertIn(title, page)
                # One line per host and the other axes' values, a point per value of this
                # axis, two runs behind each: every sweep point once.
                marks = re.findall(rf"<title>raid5( [a-z]+=\d+)+ {axis}=(\d+): [\d.]+ "
                                   rf"\[[\d.]+-[\d.]+\] wall seconds over {REPEAT} runs</title>",
                                   page.split(title, 1)[1].split("</svg>", 1)[0])
                self.assertEqual(sorted(int(v) for _, v in marks),
                                 sorted(v for v in values for _ in range(len(points) //
                                                                         len(values))), title)

    def test_a_point_that_mkfs_refuses_is_skipped_and_the_next_point_runs(self):
        # The post swept agcount up to 65536; on this array mkfs.xfs refuses 100000.
        sweep = "  chunk: [64]\n  agcount: [100000, 4]\n  logbufs: [8]\n"
        phases = f"  - {{name: layout, workload: command, command: '{LAYOUT}'}}\n"
        result, report = self.run_plan(self.plan(sweep, 1, phases), timeout=600)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("agsize (16 blocks) too small, need at least 4096 blocks", result.stdout)
        self.assertIn("the phases of this point are skipped: its setup failed", result.stdout)
        self.assertEqual([p["sweep_point"] for p in report["skipped_points"]],
                         ["chunk=64 agcount=100000 logbufs=8"])
        self.assertEqual(report["status"], "partial", report["reasons"])
        # The next point's array was created and its phase ran on it.
        self.assertEqual([p["sweep_point"]["agcount"] for p in report["phases"]], ["4"],
                         result.stdout)
        self.check_row("layout", (64, 4, 8), report["phases"][0]["results"][0])


if __name__ == "__main__":
    h.main()
