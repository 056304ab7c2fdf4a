"""A small machine for side-by-side runs: a loop device with a fresh journaled ext4 for every
run, and a v1 memory cgroup that holds the reference tool to the same memory limit as
stormark's `memory_limit`. What bench/bonnie_vs_bonnie.py and bench/postmark_vs_postmark.py
share.

Why a fresh filesystem each run: ext4 skips inodes deleted in the last minutes when it
allocates a new one on a filesystem without a journal, and on any filesystem each run inherits
the fragmentation and the deletions of the runs before it, so back-to-back runs of either tool
get slower and the order of the tools decides the ratio. mkfs before every run gives both tools
the same empty filesystem. The loop device uses direct I/O on its backing file, so the only page
cache is the one above the loop device, which the memory limit bounds; its own counters
(/sys/class/block/loopN/stat) say what reached it.

Why a disk of a stated bandwidth (LoopFilesystem's `bandwidth`): the development VM's virtual
disk is cached by its host and moves 1-2 GB/s, so at a 256 MiB limit bonnie's 512 MiB data file
is written and read in under bonnie++'s 0.5 s and both tools print +++++, and a neighbour on the
host moves single runs by 2x. With a bandwidth, the filesystem's loop device sits on a second
loop device whose reads and writes the kernel's block throttle (a v1 blkio rule at the root
cgroup, so the loop device's own workers and the writeback threads are held to it as well as the
tools) caps at that many bytes a second: a disk that moves what a real one moves, the same for
both tools, whatever the host's cache does.
"""
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

SECTOR = 512
MIB = 1 << 20


def run(*argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


BLKIO_ROOT = "/sys/fs/cgroup/blkio"
THROTTLES = ("blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device")


def device_numbers(device):
    """'MAJ:MIN' of a block device node."""
    with open(f"/sys/class/block/{os.path.basename(device)}/dev") as f:
        return f.read().strip()


def throttle(device, bytes_per_second):
    """Caps every read and write that reaches `device` at bytes_per_second (0 lifts the cap),
    by a rule of the v1 blkio controller's root cgroup, which every process and kernel thread
    is under. The rule lives with the device, not with this process: lift it before detaching."""
    for name in THROTTLES:
        with open(os.path.join(BLKIO_ROOT, name), "w") as f:
            f.write(f"{device_numbers(device)} {bytes_per_second}")


def raise_on_sigterm():
    """A SIGTERM (a test's timeout, a kill by PID) unwinds through the callers' finally blocks as
    Ctrl-C does, so that a throttle rule and the loop devices never outlive the script."""
    def stop(signum, frame):
        raise SystemExit(f"stopped by signal {signum}")
    signal.signal(signal.SIGTERM, stop)


class LoopFilesystem:
    """A loop device over a sparse file in `workdir`, attached with direct I/O. fresh() makes a
    new ext4 on it and mounts it; close() unmounts, detaches and deletes everything.

    With `bandwidth` (bytes a second), the file is attached to a first loop device that the block
    throttle caps at that rate, and the filesystem's loop device reads and writes that one with
    direct I/O: a disk of that bandwidth. Its counters are the filesystem's device's."""

    def __init__(self, workdir, size, bandwidth=None, inodes=None):
        if bandwidth and not os.path.exists(os.path.join(BLKIO_ROOT, THROTTLES[0])):
            raise RuntimeError(f"a disk of a given bandwidth needs the v1 blkio controller "
                               f"({BLKIO_ROOT}), which this machine does not mount")
        self.work = tempfile.mkdtemp(prefix="stormark-bench-loop-", dir=workdir)
        self.backing = os.path.join(self.work, "disk.img")
        with open(self.backing, "wb") as f:
            f.truncate(size)
        self.mountpoint = os.path.join(self.work, "mnt")
        os.mkdir(self.mountpoint)
        self.device = None
        self.lower = None
        self.throttled = False
        self.mounted = False
        self.bandwidth = bandwidth
        self.inodes = inodes
        try:
            under = self.backing
            if bandwidth:
                self.lower = run("losetup", "--direct-io=on", "-f", "--show", self.backing).strip()
                self.throttled = True
                throttle(self.lower, bandwidth)
                under = self.lower
            self.device = run("losetup", "--direct-io=on", "-f", "--show", under).strip()
        except BaseException:
            self.close()
            raise
        self.name = os.path.basename(self.device)

    def fresh(self):
        """A new, empty, journaled ext4 mounted at self.mountpoint, with its inode tables and
        journal written now (no lazy initialisation writing behind the next run's back), and
        `inodes` inodes if that was given, else one per 8 KiB (twice ext4's default), for
        bonnie's file tests."""
        self.unmount()
        count = ["-N", str(self.inodes)] if self.inodes else ["-i", "8192"]
        run("mkfs.ext4", "-q", "-F", *count, "-E", "lazy_itable_init=0,lazy_journal_init=0",
            self.device)
        run("mount", "-t", "ext4", self.device, self.mountpoint)
        self.mounted = True
        return self.mountpoint

    def unmount(self):
        if self.mounted:
            run("umount", self.mountpoint)
            self.mounted = False

    def counters(self):
        """(bytes read, bytes written) that the device has completed since it was attached."""
        with open(f"/sys/class/block/{self.name}/stat") as f:
            fields = [int(x) for x in f.read().split()]
        return fields[2] * SECTOR, fields[6] * SECTOR

    def describe(self):
        """What the disk is, for a table's heading."""
        if not self.bandwidth:
            return "a loop device (direct I/O)"
        return (f"a loop device (direct I/O) capped at {self.bandwidth // MIB} MiB/s for reads "
                f"and for writes by the block throttle")

    def close(self):
        try:
            self.unmount()
        finally:
            if self.device:
                subprocess.run(["losetup", "-d", self.device], check=False)
            if self.throttled:
                throttle(self.lower, 0)  # Before the device is free for anyone else.
            if self.lower:
                subprocess.run(["losetup", "-d", self.lower], check=False)
            subprocess.run(["rm", "-rf", self.work], check=False)


def own_memory_cgroup():
    """The v1 memory cgroup directory this process is in, or an exit that says why not."""
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if "memory" in controllers.split(","):
                return "/sys/fs/cgroup/memory" + ("" if path == "/" else path)
    sys.exit("no v1 memory cgroup: these scripts hold the reference tool to the limit with the "
             "v1 memory controller (/sys/fs/cgroup/memory)")


class MemoryCgroup:
    """A v1 memory cgroup beside this process's own, limited to `limit` bytes. A child started
    with preexec_fn=cgroup.enter runs in it, page cache included.

    As stormark's `memory_limit` does, the limit holds the page cache and the kernel's caches,
    not the tool's own memory: a thread reads the cgroup's anonymous memory (memory.stat rss)
    every FOLLOW seconds and sets the kernel's limit to `limit` plus that, in whole MiB
    (agent/host/memory_cgroup.h, "What the limit holds"). Both tools then get the same cache,
    whatever each keeps for itself."""

    FOLLOW = 0.1

    def __init__(self, limit, tag):
        self.limit = limit
        self.path = os.path.join(own_memory_cgroup(), f"bench-{tag}-{os.getpid()}")
        os.mkdir(self.path)
        with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit))
        self.applied = limit
        self.stop = threading.Event()
        self.follower = threading.Thread(target=self.follow, daemon=True)
        self.follower.start()

    def set_limit(self, limit):
        """The follower's write: one the kernel refuses leaves the last limit."""
        if limit == self.applied:
            return
        try:
            with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
                f.write(str(limit))
            self.applied = limit
        except OSError:
            pass  # The kernel could not reclaim down to it yet: the last limit holds.

    def own_bytes(self):
        with open(os.path.join(self.path, "memory.stat")) as f:
            for line in f:
                key, value = line.split()
                if key == "rss":
                    return int(value)
        return 0

    def follow(self):
        while not self.stop.wait(self.FOLLOW):
            own = -(-self.own_bytes() // MIB) * MIB
            self.set_limit(self.limit + own)

    def enter(self):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def close(self):
        self.stop.set()
        self.follower.join()
        # The pages the last run left are charged here; force_empty hands them back so that
        # rmdir does not have to wait for reclaim.
        try:
            with open(os.path.join(self.path, "memory.force_empty"), "w") as f:
                f.write("0")
        except OSError:
            pass
        os.rmdir(self.path)


def drop_caches():
    """Writes dirty pages back and drops the clean ones, so every run starts cold."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3")


def spread(runs):
    """Largest / smallest of the runs."""
    return max(runs) / min(runs)


def measured(disk, run, settle):
    """One run of `run(mountpoint)` on a fresh filesystem of `disk`, cold: the figures it
    returns, with what the device read and wrote meanwhile (device_read_mib, _written_mib)."""
    mnt = disk.fresh()
    drop_caches()
    time.sleep(settle)
    read0, written0 = disk.counters()
    figures = run(mnt)
    read1, written1 = disk.counters()
    figures["device_read_mib"] = (read1 - read0) / MIB
    figures["device_written_mib"] = (written1 - written0) / MIB
    return figures


def alternate(disk, repeat, settle, theirs, ours):
    """`repeat` runs of each tool, measured(), the reference tool `theirs(mountpoint)` first in
    even rounds and stormark's `ours(mountpoint)` first in odd ones, so that neither always
    follows the other. Returns (the reference tool's figures, stormark's), run by run."""
    runs = {theirs: [], ours: []}
    for i in range(repeat):
        for tool in ((theirs, ours) if i % 2 == 0 else (ours, theirs)):
            runs[tool].append(measured(disk, tool, settle))
    return runs[theirs], runs[ours]


def compare(theirs, ours, names):
    """Per figure in `names`: the reference tool's runs and stormark's, each one's median and
    spread, and the ratio of the medians (stormark / reference); the ratio is None, and there
    are no medians, where a run of either tool has no figure (bonnie's +++++)."""
    table = {}
    for name in names:
        t = [r[name] for r in theirs]
        o = [r[name] for r in ours]
        row = {"reference": t, "stormark": o, "ratio": None}
        if None not in t and None not in o:
            row.update({"reference_median": statistics.median(t),
                        "reference_spread": spread(t),
                        "stormark_median": statistics.median(o),
                        "stormark_spread": spread(o)})
            row["ratio"] = row["stormark_median"] / row["reference_median"]
        table[name] = row
    return table
