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
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

SECTOR = 512
MIB = 1 << 20


def run(*argv):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()}")
    return done.stdout


class LoopFilesystem:
    """A loop device over a sparse file in `workdir`, attached with direct I/O. fresh() makes a
    new ext4 on it and mounts it; close() unmounts, detaches and deletes everything."""

    def __init__(self, workdir, size):
        self.work = tempfile.mkdtemp(prefix="stormark-bench-loop-", dir=workdir)
        self.backing = os.path.join(self.work, "disk.img")
        with open(self.backing, "wb") as f:
            f.truncate(size)
        self.mountpoint = os.path.join(self.work, "mnt")
        os.mkdir(self.mountpoint)
        self.device = None
        self.mounted = False
        self.device = run("losetup", "--direct-io=on", "-f", "--show", self.backing).strip()
        self.name = os.path.basename(self.device)

    def fresh(self):
        """A new, empty, journaled ext4 mounted at self.mountpoint, with its inode tables and
        journal written now (no lazy initialisation writing behind the next run's back), and an
        inode per 8 KiB (twice ext4's default), for bonnie's file tests of 256 x 1024 files."""
        self.unmount()
        run("mkfs.ext4", "-q", "-F", "-i", "8192", "-E",
            "lazy_itable_init=0,lazy_journal_init=0", self.device)
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

    def close(self):
        try:
            self.unmount()
        finally:
            if self.device:
                subprocess.run(["losetup", "-d", self.device], check=False)
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
    with preexec_fn=cgroup.enter runs in it, page cache included."""

    def __init__(self, limit, tag):
        self.path = os.path.join(own_memory_cgroup(), f"bench-{tag}-{os.getpid()}")
        os.mkdir(self.path)
        with open(os.path.join(self.path, "memory.limit_in_bytes"), "w") as f:
            f.write(str(limit))

    def enter(self):
        with open(os.path.join(self.path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))

    def close(self):
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
