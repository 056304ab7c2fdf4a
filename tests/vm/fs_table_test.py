"""The seed's "filesystem comparison table" (filesystem-comparison-table.txt), run for real: bonnie
over ext4, xfs and jfs, once at the kernel's read-ahead and once at the post's 16K read ahead
(`blockdev --setra 16384`: 16384 sectors, read_ahead_kb 8192), through the agent's tuning knob.

A qemu guest (vmlab.py) of 256 MiB, the seeds' own trick (`mem=256M`) to keep bonnie++'s "file
of twice the RAM" rule cheap, has three virtio disks; at boot it makes ext4 on the first, XFS on
the second and JFS on the third (the host's mkfs binaries, over the 9p root; the guest kernel's
drivers), mounts them and serves them as the `dir:` targets ext4, xfs and jfs, each with the
`device:` it sits on, so the agent may tune that disk. The agent starts in a cgroup of its own, as
under systemd, for the memory limit.

The plan lists the guest's one agent three times, as the hosts `ext4`, `xfs` and `jfs`, each with
its own target, in `mode: sequential` (one filesystem after another, never two at once on the
guest's one CPU). So each phase's bonnie++ table has a row per filesystem, named after it as the
post's "Machine" column is, and the run's summary table a row per filesystem and read-ahead value.
One `sweep:` axis, read_ahead_kb: [128, 8192], gives the post's two tables. (One host with three
targets would give three phases, one per filesystem, and a summary with a column per phase, each
row filled in one column only: not the post's table.)

Scaled for TCG: `memory_limit: 32M` (the smallest the agent takes) holds each phase's page cache
to 32 MiB, as a 32 MiB machine's would be, and bonnie's size is left to its default, twice that: a
64 MiB file the cache cannot hold, so the reads reach the disks. bonnie's default from the guest's
own RAM (204 MiB as the agent sees it: a 407 MiB file) was measured at 19-35 s a row under TCG, 168
s for the whole test; with the limit a row takes about 6 s and the test under a minute. The file
tests make 1024 empty files (`files: 1`; the post made 16 x 1024).

- Every row ran on the filesystem and disk it claims: the row's environment says ext4 on vda, xfs on
  vdb, jfs on vdc (local, virtio); the disks' images carry those filesystems' superblocks.
- Each row's bonnie sized its file at twice the memory limit (64 MiB), ran all twelve tests, and
  carries no "possibly cache-dominated" note; each says its CPU is emulated.
- read_ahead_kb really changed: each row's tuning is the point's value, the kernel's 128 before it;
  the phase table says `tuning: read_ahead_kb 8192 (was 128); restored afterwards`; and afterwards
  the three disks' sysfs read_ahead_kb is 128 again.
- The reads reached the disks: each row's device counters (its own disk) count what the limit
  forces: of the two whole-file reading passes (rewrite, block input), and of the two writing
  ones, at least the part of the file the cache cannot hold.
- The larger read-ahead reached the disks: at 8192 each disk's mean read request is larger than
  at 128 (the block reads' larger requests; the seeks' random reads stay as asked).
- Each phase prints bonnie++'s table with the rows ext4, xfs, jfs (64M, and 1 for the file tests),
  says the rows differ in their filesystem and nothing else, and that the page cache was held to
  32 MiB (cgroup v2); the summary table is the post's comparison, a row per filesystem and
  read-ahead value; `results show` prints the same tables from the results database; `--csv`
  writes the post's rows, bonnie++'s CSV line per filesystem and read-ahead value.

The guest's figures are emulated (TCG) and mean nothing; only counts, labels, layouts and notes
are checked.
"""

import os
import re
import shutil
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
MKFS = {fs: shutil.which(f"mkfs.{fs}") for fs in ("ext4", "xfs", "jfs")}
WHY_NOT = vmlab.missing() or ("" if all(MKFS.values()) else
                              "needs mkfs.ext4, mkfs.xfs and mkfs.jfs "
                              "(apt-get install e2fsprogs xfsprogs jfsutils)")

# (filesystem, the guest's disk), in the table's order: the post's rows, in its order.
FILESYSTEMS = (("ext4", "vda"), ("xfs", "vdb"), ("jfs", "vdc"))
DISK_MIB = 512  # mkfs.xfs 6.x refuses a filesystem under 300 MiB.
GUEST_MIB = 256
MEMORY_LIMIT_MIB = 32
BONNIE_MIB = 2 * MEMORY_LIMIT_MIB
# The per-character tests make a system call per byte, as bonnie++ 2.00's do, which under TCG
# costs microseconds: bonnie++'s 20 MiB would take minutes a run, 1 MiB takes seconds.
CHAR_MIB = 1
KERNEL_READ_AHEAD = "128"  # virtio-blk's default read_ahead_kb.
READ_AHEADS = (KERNEL_READ_AHEAD, "8192")  # The post's --setra 16384 (512-byte sectors).
BONNIE_TESTS = ("putc", "put_block", "rewrite", "getc", "get_block", "seeks", "seq_create",
                "seq_stat", "seq_del", "ran_create", "ran_stat", "ran_del")
# The filesystems' magic numbers: (offset, bytes).
SUPERBLOCKS = {"ext4": (1080, b"\x53\xef"), "xfs": (0, b"XFSB"), "jfs": (32768, b"JFS1")}

# Each disk is found by the serial the test gave it; the filesystems are made and mounted at
# /tmp/FS of the agent's view. ext4 initialises its inode tables and journal now, not in the
# background during the phases.
MAKE_FILESYSTEMS = "\n".join(
    ["for i in $(seq 1 100); do [ -b /dev/vdc ] && break; sleep 0.2; done"]
    + [f'[ "$(cat /sys/block/{disk}/serial)" = fs-{fs} ] || echo STORMARK-FS-FAILED {disk} serial'
       for fs, disk in FILESYSTEMS]
    + ["mkdir -p " + " ".join(f"/host/tmp/{fs}" for fs, _ in FILESYSTEMS),
       vmlab.ext4_script("/dev/vda", "/tmp/ext4").rstrip("\n"),
       f"chroot /host {MKFS['xfs']} -f -q /dev/vdb && mount -t xfs /dev/vdb /host/tmp/xfs "
       "|| echo STORMARK-FS-FAILED xfs",
       f"chroot /host {MKFS['jfs']} -q /dev/vdc && mount -t jfs /dev/vdc /host/tmp/jfs "
       "|| echo STORMARK-FS-FAILED jfs",
       "grep ' /host/tmp/' /proc/mounts",
       "echo read_ahead_kb: $(cat /sys/block/vd?/queue/read_ahead_kb)"]) + "\n"

CONFIG = "targets:\n" + "".join(f"  {fs}: {{dir: /tmp/{fs}, device: /dev/{disk}}}\n"
                                for fs, disk in FILESYSTEMS) + \
    "allow_tuning: true\ncommands: {enabled: true}\n"


@unittest.skipIf(WHY_NOT, WHY_NOT)
class FsTableTest(h.StormarkTestCase):

    def setUp(self):
        self.work = self.make_dir("stormark-vm-fstable-")
        self.images = {}
        disks = []
        for fs, _ in FILESYSTEMS:
            path = os.path.join(self.work, f"{fs}.img")
            with open(path, "wb") as f:
                f.truncate(DISK_MIB * MIB)
            self.images[fs] = path
            disks.append(vmlab.Disk(path, "virtio", serial=f"fs-{fs}"))
        script = vmlab.agent_script(h.bin_dir(), CONFIG, before=MAKE_FILESYSTEMS,
                                    cgroup="agent.service")
        self.guest = vmlab.Guest(self, "fstable", script, memory_mib=GUEST_MIB, disks=disks,
                                 extra_modules=("xfs", "jfs")).start()
        self.guest.wait_for(r"listening on", timeout=300)
        console = self.guest.console_text()
        self.assertNotIn("STORMARK-FS-FAILED", console, console[-3000:])
        self.address = f"127.0.0.1:{self.guest.port(7420)}"
        self.db = os.path.join(self.work, "results.db")

    def test_bonnie_over_ext4_xfs_jfs_at_two_read_aheads(self):
        hosts = "".join(f'  - {{name: {fs}, address: "{self.address}", target: {fs}}}\n'
                        for fs, _ in FILESYSTEMS)
        plan = self.write_file(os.path.join(self.work, "plan.yaml"), f"""\
# filesystem-comparison-table.txt
hosts:
{hosts}mode: sequential
memory_limit: {MEMORY_LIMIT_MIB}M
sweep:
  read_ahead_kb: [{', '.join(READ_AHEADS)}]
phases:
  - {{name: bonnie, workload: bonnie, files: "1", char_size: {CHAR_MIB}M, seed: 42}}
""")
        json_path = os.path.join(self.work, "out.json")
        csv_path = os.path.join(self.work, "bonnie.csv")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--db", self.db,
                                    "--csv", csv_path, "--no-progress"], timeout=600)
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout, file=sys.stderr)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0,
                         result.describe() + self.guest.console_text()[-2000:])
        report = self.load_json(json_path)
        self.assertEqual(report["status"], "complete", report["reasons"])

        # One phase per read-ahead value, each on the three filesystems in order.
        self.assertEqual([p["sweep_point"]["read_ahead_kb"] for p in report["phases"]],
                         list(READ_AHEADS))
        request = {}  # (filesystem, read_ahead_kb): the disk's mean read, in bytes.
        for phase in report["phases"]:
            read_ahead = phase["sweep_point"]["read_ahead_kb"]
            self.assertEqual([r["host"] for r in phase["results"]],
                             [fs for fs, _ in FILESYSTEMS], phase["name"])
            for row, (fs, disk) in zip(phase["results"], FILESYSTEMS):
                self.check_row(row, fs, disk, read_ahead)
                stats = row["device_stats"]
                request[(fs, read_ahead)] = (int(stats["disk.read_bytes"]) /
                                             int(stats["disk.reads"]))
        # The larger read-ahead reached the disks: the sequential passes read in larger
        # requests (up to max_sectors_kb, 1280), so each disk's mean read grew. (The seeks'
        # 8 KiB reads, most of the requests, are random: the kernel reads those as asked.)
        for fs, _ in FILESYSTEMS:
            self.assertGreater(request[(fs, READ_AHEADS[1])], request[(fs, READ_AHEADS[0])],
                               (fs, request))

        tables = self.bonnie_tables(result.stdout)
        self.assertEqual(len(tables), len(READ_AHEADS), result.stdout)
        for read_ahead, text in zip(READ_AHEADS, tables):
            self.check_bonnie_table(text, read_ahead)
        # Within a phase the rows differ in their filesystem and nothing else.
        self.assertEqual(result.stdout.count("\n  ! differs: filesystem (ext4: ext4, xfs: xfs, "
                                             "jfs: jfs)\n"), len(READ_AHEADS), result.stdout)
        self.check_summary(result.stdout)

        # bonnie++ 2.00's CSV (50 fields): a line per filesystem and read-ahead value, named
        # after the filesystem, with the size, the seed and the file count.
        lines = h.read_text(csv_path).splitlines()
        self.assertEqual([line.split(",")[2] for line in lines],
                         [fs for _ in READ_AHEADS for fs, _ in FILESYSTEMS], lines)
        for line in lines:
            fields = line.split(",")
            self.assertEqual(len(fields), 50, line)
            self.assertEqual(fields[:6], ["1.98", "2.00a", fields[2], "1", "42", f"{BONNIE_MIB}M"],
                             line)
            self.assertEqual(fields[21], "1", line)

        # `results show` prints the same tables from the database.
        show = self.run_stormark(["results", "show", "latest", "--db", self.db])
        self.assertEqual(show.returncode, 0, show.describe())
        self.assertEqual(self.bonnie_tables(show.stdout), tables, show.stdout)
        self.assertEqual(self.summary(show.stdout), self.summary(result.stdout), show.stdout)

        # The agent put every disk's read-ahead back; the disks hold the filesystems claimed.
        self.assertEqual(self.read_aheads_now(), {disk: KERNEL_READ_AHEAD
                                                  for _, disk in FILESYSTEMS})
        for fs, (offset, magic) in SUPERBLOCKS.items():
            with open(self.images[fs], "rb") as f:
                f.seek(offset)
                self.assertEqual(f.read(len(magic)), magic, f"no {fs} on {fs}.img")

    def check_row(self, row, fs, disk, read_ahead):
        what = f"{fs} at read_ahead_kb {read_ahead}"
        self.assertEqual(row["status"], "succeeded", (what, row.get("error")))
        env = row["environment"]["target"]
        self.assertEqual((env.get("filesystem"), env.get("device")), (fs, disk), (what, env))
        self.assertEqual((env.get("transport"), env.get("transport_detail")),
                         ("local", "virtio"), (what, env))
        self.assertEqual(row["environment"]["host"].get("memory_limit_bytes"),
                         str(MEMORY_LIMIT_MIB * MIB), what)
        # The knob: the point's value in force, the kernel's before it.
        self.assertEqual(row["tuning"].get("read_ahead_kb"), read_ahead, (what, row["tuning"]))
        self.assertEqual(row["tuning"].get("read_ahead_kb.before"), KERNEL_READ_AHEAD,
                         (what, row["tuning"]))
        self.assertEqual(env.get("read_ahead_kb"), read_ahead, (what, env))
        # bonnie++'s 2 x RAM rule, with the limit as the RAM; every test ran.
        resolved = row["resolved"]
        self.assertEqual((int(resolved["ram_bytes"]), int(resolved["size_bytes"])),
                         (MEMORY_LIMIT_MIB * MIB, BONNIE_MIB * MIB), (what, resolved))
        self.assertEqual((resolved["files_k"], resolved["seed"]), ("1", "42"), (what, resolved))
        self.assertEqual(sorted(m["name"] for m in row["measurements"]
                                if m["name"] in BONNIE_TESTS), sorted(BONNIE_TESTS), what)
        self.assertTrue([w for w in row["warnings"] if "emulated" in w], (what, row["warnings"]))
        self.assertFalse([w for w in row["warnings"] if "cache-dominated" in w],
                         (what, row["warnings"]))
        stats = row["device_stats"]
        self.assertEqual(stats.get("disk"), disk, (what, stats))
        # The two reading passes over the whole file (rewrite, block input) find at most the
        # limit's 32 MiB of it cached, so each reads the rest from the disk; likewise the two
        # writing passes (block output, rewrite) leave at most the limit unwritten. (The
        # per-character tests use 1 MiB, which the cache may hold.)
        floor = 2 * (BONNIE_MIB - MEMORY_LIMIT_MIB) * MIB
        self.assertGreaterEqual(int(stats["disk.read_bytes"]), floor, (what, stats))
        self.assertGreaterEqual(int(stats["disk.written_bytes"]), floor, (what, stats))

    def bonnie_tables(self, stdout):
        """Each phase's text from its title to its bonnie++ table's end, in order."""
        return re.findall(r"(?ms)^Phase \d+/\d+  bonnie .*?^Latency[^\n]*\n(?=\s*\n)", stdout)

    def check_bonnie_table(self, text, read_ahead):
        title = text.splitlines()[0]
        self.assertEqual(title, f"Phase {READ_AHEADS.index(read_ahead) + 1}/{len(READ_AHEADS)}  "
                                f"bonnie [read_ahead_kb={read_ahead}]: bonnie 2x RAM, files "
                                f"1:0:0:0, memory limit {MEMORY_LIMIT_MIB} MiB", text)
        if read_ahead == KERNEL_READ_AHEAD:
            self.assertIn(f"  tuning: read_ahead_kb {read_ahead}; restored afterwards\n", text)
        else:
            self.assertIn(f"  tuning: read_ahead_kb {read_ahead} (was {KERNEL_READ_AHEAD}); "
                          "restored afterwards\n", text)
        self.assertIn("  sequential: one host at a time\n", text)
        self.assertIn(f"  memory limit: {MEMORY_LIMIT_MIB} MiB (cgroup v2), the page cache held "
                      "to it\n", text)
        for fs, disk in FILESYSTEMS:
            self.assertRegex(text, rf"\n  device on {fs}: disk {disk}, disk.read_bytes \d+, ")
        # bonnie++'s layout: a row and a Latency line per filesystem, in both blocks.
        io_rows = re.findall(rf"(?m)^(\w+) +{BONNIE_MIB}M( +\S+){{12}}\nLatency( +\d+[mu]?s){{6}}$",
                             text)
        self.assertEqual([r[0] for r in io_rows], [fs for fs, _ in FILESYSTEMS], text)
        file_rows = re.findall(r"(?m)^(\w+) +1( +\S+){12}\nLatency( +\d+[mu]?s){6}$", text)
        self.assertEqual([r[0] for r in file_rows], [fs for fs, _ in FILESYSTEMS], text)

    def summary(self, stdout):
        """The summary table and its notes."""
        self.assertIn("\nSummary\n\n", stdout)
        return stdout.split("\nSummary\n\n", 1)[1].split("\n\n")[:2]

    def check_summary(self, stdout):
        """The post's table: a row per filesystem and read-ahead value."""
        table, notes = self.summary(stdout)
        lines = table.splitlines()
        # bonnie's wall time: a rate over all its tests would blend unlike ones (its own tables,
        # above, give each test's figure).
        self.assertRegex(lines[0], r"^  host +via +target +read_ahead_kb +bonnie \(wall\)$")
        expected = [(fs, ra) for ra in READ_AHEADS for fs, _ in FILESYSTEMS]
        self.assertEqual(len(lines) - 1, len(expected), lines)
        for line, (fs, ra) in zip(lines[1:], expected):
            # "!": the row's filesystem differs from the first row's, as it should.
            mark = "" if fs == FILESYSTEMS[0][0] else " !"
            self.assertRegex(line, rf"^  {fs}{mark} +local +{fs} +{ra} +\d+\.\d{{3}} s \*$")
        # The filesystem is the one setting that differs between the rows; the cells carry
        # a note (the emulated CPU).
        notes = notes.splitlines()
        self.assertTrue(notes[0].startswith("  ! differs: filesystem (ext4: ext4/ext4 "
                                            "[read_ahead_kb=128], "), notes)
        self.assertEqual(notes[1], "  * a run in this cell carries a note (too fast to time, "
                                   "cache, ...): see its phase table", notes)

    def read_aheads_now(self):
        """Every disk's read_ahead_kb in the guest now, through a command phase."""
        json_path = os.path.join(self.make_dir(), "ra.json")
        result = self.run_stormark(
            ["run", "--agent", self.address, "--target", "ext4", "--workload", "command",
             "--set", "exec=grep -H . /sys/block/vda/queue/read_ahead_kb "
                      "/sys/block/vdb/queue/read_ahead_kb /sys/block/vdc/queue/read_ahead_kb",
             "--json", json_path, "--no-db", "--no-progress"], timeout=120)
        self.assertEqual(result.returncode, 0, result.describe())
        out = self.load_json(json_path)["phases"][0]["results"][0]["resolved"]["stdout_tail"]
        return dict(re.findall(r"/sys/block/(vd[a-c])/queue/read_ahead_kb:(\d+)", out))


if __name__ == "__main__":
    h.main()
