"""The seed's scenario "PostMark, local disk against AoE" (postmark-local-vs-aoe.txt), run for
real in the lab (vmlab.py): two guests booted in parallel, one with two local virtio disks and
one with two kernel-AoE disks (/dev/etherd/e1.0 and e1.1, each served by vblade from a backing
file on the host side of a tap in a network namespace this test makes). Each guest makes JFS
(as in the post) on its first disk and ext4 on its second, mounts them and serves them as the
`dir:` targets `jfs` and `ext4`. One plan, through the controller, runs the post's PostMark
script (its three cases, scaled for TCG: see CASES) on both hosts and both filesystems, and
prints the post's comparison, local beside AoE, per case.

- Every row succeeded; the AoE rows' transport is AoE (on real sysfs, through a filesystem),
  the local rows' is local (virtio).
- PostMark's counts depend only on its seed and parameters: for each case they are the same on
  both hosts and both filesystems, they are what Debian's own postmark counts for the same
  script on the host, and the comparison table prints them.
- The guests' rows say their CPU is emulated (TCG), so their rates mean nothing.
- The disks' own counters saw the writes: every JFS phase's on etherd!e1.0 and vda (JFS writes
  its log as it goes), and ext4's over its three phases on etherd!e1.1 and vdb (its journal
  commits every 5 s); vblade's files hold the filesystems.
- `stormark results show` prints the same comparison again from the results database, and
  `--baseline local` the AoE-against-local ratios; both agents still serve afterwards.
- No row says its ext4 has no journal: mkfs.ext4 made one on every disk.

The speeds are TCG's, not the storage's: the point is that the whole scenario runs and produces
the post's table (docs/lab-postmark-aoe.md shows one next to the post's own figures).
"""

import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

MIB = 1 << 20
WHY_NOT = vmlab.missing() or (
    "" if net.have("vblade", "ip") else "needs vblade and iproute2 (scripts/install-deps.sh test)"
) or ("" if net.have("mkfs.jfs", "mkfs.ext4") else
      "needs mkfs.jfs and mkfs.ext4 (apt-get install jfsutils e2fsprogs)") or (
    "" if net.have("postmark") else
    "needs Debian's postmark for its counts (apt-get install postmark)")

# The post's three cases: (files, transactions, sizes) = (2000, 50000, 1000-9000),
# (2000, 50000, 1000-90000), (4000, 200000, 1000-300000). Scaled for TCG: the counts by 1/10
# and the sizes by 1/10, so the ratios between the cases stay the post's (files 1:1:2,
# transactions 1:1:4, largest file 1:10:33) and each case moves 1/100 of the post's data (case
# 3 writes 197 MB where the post's wrote 19.7 GB). With far fewer files PostMark runs out of
# them (its count of files is a random walk of creates and deletes); these, at seed 42, do not.
CASES = ((200, 5000, (100, 900)), (200, 5000, (100, 9000)), (400, 20000, (100, 30000)))


def script(location=None):
    lines = [f"set location {location}"] if location else []
    last = (None, None)
    for number, transactions, (low, high) in CASES:
        if (number, transactions) != last:
            lines += [f"set transactions {transactions}", f"set number {number}"]
            last = (number, transactions)
        lines += [f"set size {low} {high}", "run"]
    return "\n".join(lines + ["quit"]) + "\n"


# Makes JFS on $JFS and ext4 on $EXT4 (set before this runs) and mounts them at /tmp/jfs and
# /tmp/ext4 of the agent's view. ext4 initialises its inode tables and journal now, not in the
# background during the phases, so that the disk's counters show the workload's writes only.
MAKE_FILESYSTEMS = """mkdir -p /host/tmp/jfs /host/tmp/ext4
chroot /host {mkfs_jfs} -q "$JFS" &&
  mount -t jfs "$JFS" /host/tmp/jfs || echo STORMARK-FS-FAILED jfs
{ext4}grep -E ' /host/tmp/(jfs|ext4) ' /proc/mounts
echo "jbd2: $(ls /proc/fs/jbd2)"
""".format(mkfs_jfs=shutil.which("mkfs.jfs") or "mkfs.jfs",
           ext4=vmlab.ext4_script('"$EXT4"', "/tmp/ext4"))  # The guest's PATH is busybox's.

# The local guest: its two virtio disks, found by the serial number the test gave each.
LOCAL_DISKS = """for d in /sys/block/vd*; do
  case "$(cat $d/serial)" in pm-jfs) JFS=/dev/${d##*/};; pm-ext4) EXT4=/dev/${d##*/};; esac
done
echo "disks: jfs $JFS ext4 $EXT4"
"""

# The AoE guest: its second NIC carries AoE; both of vblade's exports are found.
AOE_DISKS = """ip link set eth1 up
for i in $(seq 1 100); do
  [ -e /dev/etherd/e1.0 ] && [ -e /dev/etherd/e1.1 ] && break
  [ -e /dev/etherd/discover ] && echo > /dev/etherd/discover
  sleep 0.2
done
[ -e /dev/etherd/e1.0 ] && [ -e /dev/etherd/e1.1 ] || echo STORMARK-AOE-MISSING
JFS=/dev/etherd/e1.0 EXT4=/dev/etherd/e1.1
"""

CONFIG = "targets:\n  jfs: {dir: /tmp/jfs}\n  ext4: {dir: /tmp/ext4}\n"

# PostMark's counts, as the postmark measurements name them (agent/workloads/postmark.h).
COUNTS = ("create_alone", "create_mixed", "read", "append", "delete_alone", "delete_mixed",
          "transactions")


def postmark_counts(output):
    """Debian postmark's counts per run of its verbose report, as COUNTS."""
    runs = []
    for report in output.split("Time:")[1:]:
        def n(pattern):
            return int(re.search(pattern, report).group(1))
        created, alone_c = n(r"(\d+) created"), n(r"Creation alone: (\d+) files")
        deleted, alone_d = n(r"(\d+) deleted"), n(r"Deletion alone: (\d+) files")
        runs.append({"create_alone": alone_c, "create_mixed": created - alone_c,
                     "read": n(r"(\d+) read"), "append": n(r"(\d+) appended"),
                     "delete_alone": alone_d, "delete_mixed": deleted - alone_d})
    return runs


def row_counts(row):
    m = {x["name"]: x for x in row["measurements"]}
    return {name: m[name]["ops"] for name in COUNTS if name in m}


def comparison_tables(stdout):
    """{phase name: the lines of its PostMark comparison table}, from a run's tables."""
    tables = {}
    current = None
    for line in stdout.splitlines():
        m = re.match(r"Phase \d+/\d+  (\S+):", line)
        if m:
            current = tables.setdefault(m.group(1), [])
        elif current is not None and line.startswith("  PostMark "):
            current.append(line)
        elif current and line.strip():
            current.append(line)
        elif current:
            current = None  # The blank line after the table.
    return tables


def cells(table, label):
    for line in table:
        if line.startswith("  " + label + "  "):
            return line[len(label) + 2:].split()
    raise AssertionError(f"no row {label!r} in:\n" + "\n".join(table))


@unittest.skipIf(WHY_NOT, WHY_NOT)
class PostmarkAoeTest(h.StormarkTestCase):

    def test_the_posts_postmark_cases_local_against_aoe(self):
        work = self.make_dir("stormark-vm-pmaoe-")
        # Debian's own postmark on the host, for the counts: they depend on the seed alone.
        pm_dir = self.make_dir("stormark-vm-pmaoe-postmark-")
        pm_cfg = self.write_file(os.path.join(work, "postmark-host.cfg"), script(pm_dir))
        done = subprocess.run(["postmark", pm_cfg], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120, cwd=pm_dir)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertNotIn("out of files", done.stdout)
        expected = postmark_counts(done.stdout)
        self.assertEqual(len(expected), len(CASES), done.stdout)

        ns = net.add_netns(self, f"stormark-pmaoe-{os.getpid() % 100000}")
        net.run("ip", "-n", ns, "tuntap", "add", "dev", "tappm", "mode", "tap")
        net.run("ip", "-n", ns, "link", "set", "tappm", "up")
        backing = [net.make_backing_file(os.path.join(work, f"aoe{slot}.img"), 64 * MIB)
                   for slot in (0, 1)]
        for slot, path in enumerate(backing):
            net.start_vblade(self, ns, "tappm", path, 1, slot)
        local_disks = []
        for fs in ("jfs", "ext4"):
            path = net.make_backing_file(os.path.join(work, f"local-{fs}.img"), 64 * MIB)
            local_disks.append(vmlab.Disk(path, "virtio", serial=f"pm-{fs}"))
        # Both guests' qemu run in the namespace, so the controller, there too, reaches both
        # agents on its loopback.
        local = vmlab.Guest(self, "pmlocal", vmlab.agent_script(
            h.bin_dir(), CONFIG, before=LOCAL_DISKS + MAKE_FILESYSTEMS), memory_mib=384,
            disks=local_disks, extra_modules=("jfs",), netns=ns).start()
        aoe = vmlab.Guest(self, "pmaoe", vmlab.agent_script(
            h.bin_dir(), CONFIG, before=AOE_DISKS + MAKE_FILESYSTEMS), memory_mib=384,
            extra_modules=("aoe", "jfs"), netns=ns, taps=["tappm"]).start()
        for guest in (local, aoe):
            guest.wait_for(r"listening on", timeout=300)
            print(guest.console_text().split("stormark-agent:")[0], file=sys.stderr)
            self.assertNotIn("STORMARK-AOE-MISSING", guest.console_text())
            self.assertNotIn("STORMARK-FS-FAILED", guest.console_text(),
                             guest.console_text()[-3000:])

        self.write_file(os.path.join(work, "post.cfg"), script())
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""# postmark-local-vs-aoe.txt
hosts:
  - {{name: local, address: "127.0.0.1:{local.port(7420)}"}}
  - {{name: aoe, address: "127.0.0.1:{aoe.port(7420)}"}}
phases:
  - {{name: jfs, workload: postmark, config: post.cfg, target: jfs}}
  - {{name: ext4, workload: postmark, config: post.cfg, target: ext4}}
""")
        json_path = os.path.join(work, "out.json")
        db = os.path.join(work, "results.db")
        argv = net.in_netns(ns, [h.binary("stormark"), "run", "--plan", plan, "--json",
                                 json_path, "--db", db, "--label", "postmark local vs aoe",
                                 "--no-progress"])
        run = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                             errors="replace", timeout=900)
        print(run.stdout, file=sys.stderr)
        result = h.Result(argv, run.returncode, run.stdout, run.stderr)
        self.assert_no_crash(result)
        self.assertEqual(run.returncode, 0, result.describe() + local.console_text()[-1500:] +
                         aoe.console_text()[-1500:])

        report = self.load_json(json_path)
        names = [f"{fs}-{case}" for fs in ("jfs", "ext4") for case in (1, 2, 3)]
        self.assertEqual([p["name"] for p in report["phases"]], names)
        disks = {("local", "jfs"): "vda", ("local", "ext4"): "vdb",
                 ("aoe", "jfs"): "etherd!e1.0", ("aoe", "ext4"): "etherd!e1.1"}
        tables = comparison_tables(run.stdout)
        written = {key: 0 for key in disks}
        journal_notes = []
        for phase in report["phases"]:
            fs, case = phase["name"].split("-")
            case = int(case)
            rows = {r["host"]: r for r in phase["results"]}
            self.assertEqual(sorted(rows), ["aoe", "local"], phase["name"])
            for host, row in rows.items():
                what = f"{phase['name']} on {host}"
                self.assertEqual(row["status"], "succeeded", (what, row.get("error")))
                env = row["environment"]["target"]
                if host == "aoe":
                    self.assertEqual(env.get("transport"), "AoE", (what, env))
                    self.assertIn(disks[(host, fs)].split("!")[1],
                                  env.get("transport_detail", ""), (what, env))
                else:
                    self.assertEqual((env.get("transport"), env.get("transport_detail")),
                                     ("local", "virtio"), (what, env))
                self.assertEqual(env.get("filesystem"), fs, (what, env))
                self.assertTrue([w for w in row["warnings"] if "emulated" in w],
                                (what, row["warnings"]))
                self.assertFalse([w for w in row["warnings"] if "out of files" in w],
                                 (what, row["warnings"]))
                counts = row_counts(row)
                self.assertEqual(counts["transactions"], CASES[case - 1][1], what)
                self.assertEqual({k: v for k, v in counts.items() if k != "transactions"},
                                 expected[case - 1], f"{what}: not Debian postmark's counts")
                stats = row["device_stats"]
                self.assertEqual(stats.get("disk"), disks[(host, fs)], (what, stats))
                written[(host, fs)] += int(stats["disk.written_bytes"])
                # JFS writes its log as the transactions go: every phase reaches the disk.
                if fs == "jfs":
                    self.assertGreater(int(stats["disk.written_bytes"]), 0,
                                       f"{what}: no write reached {stats.get('disk')}: {stats}")
                journal_notes += [(what, w) for w in row["warnings"] if "without a journal" in w]
            # The comparison table, local beside AoE, prints PostMark's counts.
            table = tables.get(phase["name"], [])
            self.assertTrue(table, f"no PostMark table for {phase['name']}:\n{run.stdout}")
            self.assertEqual(table[0].split()[1:], ["local", "aoe"], table[0])
            c = expected[case - 1]
            for label, value in (("files created", c["create_alone"] + c["create_mixed"]),
                                 ("files read", c["read"]), ("files appended", c["append"]),
                                 ("files deleted", c["delete_alone"] + c["delete_mixed"])):
                self.assertEqual(cells(table, label), [str(value)] * 2, (phase["name"], label))

        # ext4 commits its journal every 5 s, and its first two cases take about a second
        # each: what reached its disks is counted over the three cases (the third takes longer
        # than 5 s under TCG).
        for (host, fs), total in written.items():
            self.assertGreater(total, 0, f"no write of the {fs} phases reached {host}'s "
                                         f"{disks[(host, fs)]}")

        # What the guests wrote through the kernel's AoE reached vblade's files: the
        # filesystems' superblocks (JFS's magic "JFS1" at 32 KiB, ext4's 0xEF53 at 1080).
        with open(backing[0], "rb") as f:
            f.seek(32768)
            self.assertEqual(f.read(4), b"JFS1", "no JFS on vblade's e1.0")
        with open(backing[1], "rb") as f:
            f.seek(1080)
            self.assertEqual(f.read(2), b"\x53\xef", "no ext4 on vblade's e1.1")

        # The results database prints the same comparison again.
        shown = self.run_stormark(["results", "show", "latest", "--db", db], timeout=60)
        self.assertEqual(shown.returncode, 0, shown.describe())
        self.assertEqual(comparison_tables(shown.stdout), tables, shown.stdout)
        # And, against the local host, the ratios the post worked out by hand: a row per host
        # with its transport in the via column.
        based = self.run_stormark(["results", "show", "latest", "--db", db, "--baseline",
                                   "local"], timeout=60)
        self.assertEqual(based.returncode, 0, based.describe())
        print(based.stdout[based.stdout.find("Compared with local"):], file=sys.stderr)
        self.assertIn("Compared with local", based.stdout)
        for fs in ("jfs", "ext4"):
            for host, via in (("local", "local"), ("aoe", "AoE")):
                self.assertEqual(len(re.findall(rf"(?m)^  {host} +{via} +{fs} +1 ", based.stdout)),
                                 3, (host, fs, based.stdout))

        # Both agents still serve, with both targets.
        agents = subprocess.run(net.in_netns(ns, [h.binary("stormark"), "agents", "--agent",
                                                  f"127.0.0.1:{local.port(7420)}", "--agent",
                                                  f"127.0.0.1:{aoe.port(7420)}"]),
                                stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                timeout=60)
        self.assertEqual(agents.returncode, 0, agents.stdout + agents.stderr)
        out = agents.stdout
        self.assertEqual(len(re.findall(r"(?m)^  busy with +-$", out)), 2, out)
        for fs, slot in (("jfs", "e1.0"), ("ext4", "e1.1")):
            self.assertRegex(out, rf"(?m)^  {fs} +dir +/tmp/{fs} +{fs} .* local \(virtio\)$")
            self.assertRegex(out, rf"(?m)^  {fs} +dir +/tmp/{fs} +{fs} .* "
                                  rf"AoE \(etherd {re.escape(slot)} via eth1\)$")

        # mkfs.ext4 made a journal on every ext4 disk (jbd2 lists each: "vdb-8", and for the AoE
        # disk "etherd!e1.1-8"), so no row may say its ext4 has none.
        # (The agent looks for "e1.1-" in /proc/fs/jbd2, where the kernel writes the '/' of
        # the device's name as '!'.)
        self.assertEqual(journal_notes, [], "ext4 with a journal reported as without one; "
                                            "/proc/fs/jbd2 in the guests: " + " / ".join(
                                                re.findall(r"jbd2: .*", local.console_text() +
                                                           aoe.console_text())))


if __name__ == "__main__":
    h.main()
