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
import subprocess
import sys
import tempfile

SECTOR = 512


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
