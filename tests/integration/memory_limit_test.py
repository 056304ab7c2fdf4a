"""Memory-limited phases end to end (root, losetup, a memory cgroup): `memory_limit:` runs a
phase in a memory cgroup of its own, so that its page cache is bounded as on a machine with
that much RAM, and the disk's own counters (/sys/class/block/NAME/stat) prove it.

- 3 s of random 64 KiB reads of a 192 MiB file on ext4 on a loop device: without a limit they
  come from the page cache (the disk reads almost nothing, and the row says so); with a 64 MiB
  limit at least half of them reach the disk;
- bonnie's 2 x RAM size follows the limit, and its result and the phase's header record it;
  its reads then reach the disk; without a limit, a bonnie whose `ram` claims a small machine
  reads its file from the page cache, and both the disk's counters and the row say so;
- a tmpfs target is refused (its files are memory no limit reclaims), and runs unlimited with a
  note when the plan allows it;
- after each phase the agent is back in its own cgroup, the phase's child is gone, and the
  agent still serves."""

import glob
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
CACHE_NOTE = "the reads came from the page cache"


def memory_cgroup_dir(pid):
    """The v1 memory cgroup directory of process `pid`, or None (v2 only, or none mounted)."""
    with open(f"/proc/{pid}/cgroup", encoding="utf-8") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return "/sys/fs/cgroup/memory" + ("" if path == "/" else path)
    return None


def oom_kills(pid):
    """The kernel's log lines of an OOM kill of process `pid` (dmesg)."""
    log = subprocess.run(["dmesg"], capture_output=True, text=True).stdout
    return [line for line in log.splitlines()
            if f"Memory cgroup out of memory: Killed process {pid} " in line]


def usable_memory_cgroup():
    here = memory_cgroup_dir(os.getpid())
    if here is None or not os.path.isdir(here):
        return False
    probe = os.path.join(here, f"stormark-probe-{os.getpid()}")
    try:
        os.mkdir(probe)
        os.rmdir(probe)
        return True
    except OSError:
        return False


@unittest.skipUnless(os.geteuid() == 0, "needs root (losetup, cgroups)")
@unittest.skipUnless(net.have("losetup") and net.have("mkfs.ext4"), "needs losetup and mkfs.ext4")
@unittest.skipUnless(os.geteuid() == 0 and usable_memory_cgroup(),
                     "needs a writable v1 memory cgroup (this test reads v1's files)")
class MemoryLimitTest(h.StormarkTestCase):

    def setUp(self):
        self.loop = h.start_loop_agent(self, "memory-limit", size=1 << 30)
        self.agent = self.loop.agent
        self.disk = os.path.basename(self.loop.device)

    def run_plan(self, plan_text, expect=0):
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), plan_text)
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(
            ["run", "--agent", self.agent.address, "--target", "scratch", "--plan", plan,
             "--json", json_path, "--no-db", "--no-progress"], timeout=300)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        self.assert_agent_home()
        return result, (self.load_json(json_path) if os.path.exists(json_path) else None)

    def assert_agent_home(self):
        """The agent is out of every phase's cgroup, and none is left behind."""
        here = memory_cgroup_dir(self.agent.pid)
        self.assertNotIn("stormark-phase-", here)
        self.assertEqual(glob.glob(os.path.join(here, "stormark-phase-*")), [])

    def random_reads(self, limit_line):
        # No `cache: drop`: it would empty the cache under the tests running beside this one.
        result, out = self.run_plan(f"""{limit_line}
phases:
  - {{name: r, workload: randio, rw: randread, size: 192M, bs: 64k, time_based: true,
      runtime: 3s}}
""")
        row = out["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        stats = row["device_stats"]
        self.assertEqual(stats["disk"], self.disk, stats)
        read = sum(m["bytes"] for m in row["measurements"] if m["name"] == "read")
        return result, row, read, int(stats["disk.read_bytes"])

    def test_a_limit_sends_the_reads_to_the_disk(self):
        # Without a limit the 192 MiB file laid out in the set-up stays in the page cache, and
        # 3 s of random reads of it barely touch the disk.
        result, row, read, disk = self.random_reads("")
        print(f"unlimited: {read >> 20} MiB read, {disk >> 20} MiB from {self.disk}",
              file=sys.stderr)
        self.assertLess(disk, read / 10, row["device_stats"])
        self.assertTrue([w for w in row["warnings"] if CACHE_NOTE in w], row["warnings"])
        self.assertNotIn("memory_limit_bytes", row.get("environment", {}).get("host", {}))

        # With 64 MiB of page cache at most, about a third of the file is cached: most reads
        # must reach the disk.
        result, row, read, disk = self.random_reads("memory_limit: 64M")
        print(f"limited: {read >> 20} MiB read, {disk >> 20} MiB from {self.disk}",
              file=sys.stderr)
        self.assertGreaterEqual(disk, 0.5 * read, row["device_stats"])
        self.assertFalse([w for w in row["warnings"] if CACHE_NOTE in w], row["warnings"])
        env = row["environment"]["host"]
        self.assertEqual(env["memory_limit_bytes"], str(64 * MIB), env)
        self.assertTrue(env["memory_cgroup"].startswith("v1 /sys/fs/cgroup/memory"), env)
        self.assertIn("stormark-phase-", env["memory_cgroup"])
        self.assertIn("memory limit: 64 MiB (cgroup v1), the page cache held to it", result.stdout)

    def test_bonnies_two_times_ram_follows_the_limit(self):
        result, out = self.run_plan("""phases:
  - {name: b, workload: bonnie, memory_limit: 64M, files: 0, fast: true}
""")
        row = out["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        resolved = row["resolved"]
        self.assertEqual(resolved["ram_bytes"], str(64 * MIB), resolved)
        self.assertEqual(resolved["size_bytes"], str(128 * MIB), resolved)
        self.assertFalse([w for w in row["warnings"] if "under 2x RAM" in w], row["warnings"])
        # get_block and the seeks read the 128 MiB file through at most 64 MiB of cache: the
        # disk saw most of it, and no cache note.
        get_block = next(m for m in row["measurements"] if m["name"] == "get_block")
        disk = int(row["device_stats"]["disk.read_bytes"])
        print(f"bonnie, 64 MiB limit: get_block read {get_block['bytes'] >> 20} MiB, "
              f"{disk >> 20} MiB reached {self.disk}", file=sys.stderr)
        self.assertGreaterEqual(disk, get_block["bytes"] // 2, row["device_stats"])
        self.assertFalse([w for w in row["warnings"] if CACHE_NOTE in w], row["warnings"])

    def test_a_bonnie_read_from_the_cache_carries_the_note_whatever_ram_says(self):
        # ram 64M claims a small machine; the host's real RAM holds the 128 MiB file, so
        # get_block reads it from the page cache: the disk's counters say so, and the row too.
        result, out = self.run_plan("""phases:
  - {name: b, workload: bonnie, size: 128M, ram: 64M, files: 0, fast: true}
""")
        row = out["phases"][0]["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        disk = int(row["device_stats"]["disk.read_bytes"])
        self.assertLess(disk, 16 * MIB, row["device_stats"])
        notes = [w for w in row["warnings"] if CACHE_NOTE in w]
        self.assertEqual(len(notes), 1, row["warnings"])
        self.assertTrue([w for w in row["warnings"] if "under 2x RAM" in w], row["warnings"])

    def test_files_that_cannot_fit_the_limit_are_refused_and_the_agent_is_never_killed(self):
        # 2026-12-06: bonnie's file tests at 64 MiB with 64 x 1024 files filled the phase's
        # cgroup with inodes and directory entries the kernel could not reclaim, and the
        # kernel's OOM killer killed the agent, 3 times in 3. Now the phase is refused before it
        # starts, with the figures, and the agent still serves.
        result, out = self.run_plan("""phases:
  - {name: b, workload: bonnie, memory_limit: 64M, io: false, fast: true, files: 64}
""", expect=1)
        text = result.stdout + result.stderr
        self.assertIn("bonnie holds up to 65536 files at once, whose inodes and directory entries "
                      "take about 106 MiB of memory the kernel cannot reclaim while they are new",
                      text)
        self.assertIn("over three quarters of the memory limit of 64 MiB", text)
        self.assertIn("raise memory_limit to at least 142 MiB", text)
        # Under the line (24 x 1024 files, 40 MiB by the estimate) it runs, twice, and nothing
        # is killed: had the cgroup filled, a create or stat would have failed with ENOMEM (the
        # OOM killer is off in the phase's cgroup), not killed the agent.
        for _ in range(2):
            result, out = self.run_plan("""phases:
  - {name: b, workload: bonnie, memory_limit: 64M, io: false, fast: true, files: 24}
""")
            row = out["phases"][0]["results"][0]
            self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(oom_kills(self.agent.pid), [])
        self.assertIsNone(self.agent.proc.poll(), "the agent is gone")

    def test_a_tmpfs_target_is_refused_or_runs_unlimited_with_a_note(self):
        if not os.path.isdir("/dev/shm"):
            self.skipTest("no /dev/shm")
        shm = self.make_dir_on("/dev/shm")
        agent = self.start_agent("memory-limit-shm", extra_targets=(
            f"  shm: {{dir: {shm}}}\n"))
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), """phases:
  - {name: w, workload: stream, rw: write, size: 8M, memory_limit: 64M}
""")
        result = self.run_stormark(["run", "--agent", agent.address, "--target", "shm",
                                    "--plan", plan, "--no-db", "--no-progress"])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertIn("memory_limit 64 MiB: target 'shm' is on tmpfs", result.stdout + result.stderr)

        plan = self.write_file(os.path.join(work, "plan2.yaml"), """memory_limit: 64M
memory_limit_if_unavailable: run_unlimited
phases:
  - {name: w, workload: stream, rw: write, size: 8M}
""")
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--target", "shm",
                                    "--plan", plan, "--json", json_path, "--no-db",
                                    "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        row = self.load_json(json_path)["phases"][0]["results"][0]
        notes = [w for w in row["warnings"] if "memory_limit 64 MiB not applied" in w]
        self.assertEqual(len(notes), 1, row["warnings"])
        self.assertIn("is on tmpfs", notes[0])

    def make_dir_on(self, parent):
        import shutil
        import tempfile
        path = tempfile.mkdtemp(prefix="stormark-itest-shm-", dir=parent)
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return path


if __name__ == "__main__":
    h.main()
