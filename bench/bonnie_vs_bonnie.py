#!/usr/bin/env python3
"""Compares every test of stormark's bonnie workload with Debian's bonnie++ 2.00 on a
memory-limited machine: both tools are held to LIMIT of memory (stormark by `memory_limit`,
bonnie++ in a v1 memory cgroup of the same limit; for both, the limit holds the caches and the
tool's own memory comes on top), on a data file of twice the limit as bonnie++'s 2 x RAM rule asks,
each run on a freshly made journaled ext4 on a loop device of DISK whose reads and writes are
capped at BANDWIDTH, alternately (bonnie++ first in even rounds, stormark first in odd ones),
REPEAT runs each.

    python3 bench/bonnie_vs_bonnie.py [--dir /var/tmp] [--disk 1G] [--limit 256M]
                                      [--bandwidth 200M] [--repeat 5] [--files 96]
                                      [--char-size 4M] [--seeks 100000] [--json FILE]

The defaults are the machine of issue 21: 256 MiB of memory and a 1 GiB disk. The disk is capped at
200 MB/s (bench/memlimited.py: a second loop device under the block throttle) because the
development VM's virtual disk, cached by its host, moves 1-2 GB/s: the 512 MiB data file would be
written and read in under bonnie++'s 0.5 s, and both tools would print +++++. 96 x 1024 files
is what a 256 MiB limit holds: their new inodes and directory entries, about 1,700 bytes a file that
the kernel cannot reclaim, take 159 MiB, and the agent refuses a phase whose files would take over
three quarters of its limit (docs/page-cache.md). At 256 x 1024 the kernel killed bonnie++ in its
cgroup, and the agent, before it refused such a phase (2026-12-06). `--bandwidth 0` uses the
machine's disk as it is.

The invocations, on the mounted filesystem MNT (files in units of 1024, empty, one directory):
    bonnie++ -d MNT -s 2xLIMIT:8k:SEEKS:5 -r LIMIT -f CHARS -n FILES -u root -q       (in the cgroup)
    stormark run --workload bonnie --dir MNT --set size=2xLIMIT --set memory_limit=LIMIT
        --set char_size=CHARS --set files=FILES --set seeks=SEEKS --csv C

It prints, per test, each tool's median in bonnie++'s units (K/sec, seeks/s, files/s), each
tool's spread (largest / smallest run), and the ratio of the medians; then what the loop device
read and wrote in each run (its own counters) against the bytes the data-file tests asked for,
which says whether the reads reached the disk. A test under bonnie++'s 0.5 s rule is +++++ in
both tools and is not compared. Needs root (losetup, mkfs, mount, a memory cgroup, and the v1
blkio controller for a capped disk).

--json FILE writes the same table as numbers, for tests/integration/memory_limited_agreement_test.py.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import memlimited  # noqa: E402

BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))
BONNIE = benchlib.BONNIE
MIB = 1 << 20
CHUNK = 8192

# 0-based fields of a bonnie++ 2.00 CSV data line (1.98 format): each test's figure.
FIELDS = {"putc": 9, "put_block": 11, "rewrite": 13, "getc": 15, "get_block": 17, "seeks": 19,
          "seq_create": 26, "seq_stat": 28, "seq_del": 30,
          "ran_create": 32, "ran_stat": 34, "ran_del": 36}
UNITS = {"putc": "K/sec", "put_block": "K/sec", "rewrite": "K/sec", "getc": "K/sec",
         "get_block": "K/sec", "seeks": "seeks/s"}
TOO_FAST = "+++++"


def csv_figures(text, source):
    lines = [line for line in text.splitlines() if line.startswith("1.98,")]
    if len(lines) != 1:
        raise RuntimeError(f"{source}: expected one bonnie++ CSV data line, got {len(lines)}:\n"
                           f"{text}")
    fields = lines[0].split(",")
    return {name: None if fields[i] in (TOO_FAST, "") else float(fields[i])
            for name, i in FIELDS.items()}


def bonnie(mnt, args, cgroup):
    argv = [BONNIE, "-d", mnt, "-s", f"{2 * args.limit // MIB}:{CHUNK}:{args.seeks}:5",
            "-r", str(args.limit // MIB), f"-f{args.char_size // MIB}", "-n", str(args.files),
            "-u", "root", "-q"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          preexec_fn=cgroup.enter)
    if done.returncode != 0:
        raise RuntimeError(f"bonnie++ failed ({done.returncode}): {done.stderr.strip()}")
    return csv_figures(done.stdout, "bonnie++")


def stormark(mnt, args, out):
    csv = os.path.join(out, "bonnie.csv")
    argv = [os.path.join(BIN, "stormark"), "run", "--workload", "bonnie", "--dir", mnt,
            "--set", f"size={2 * args.limit // MIB}M",
            "--set", f"memory_limit={args.limit // MIB}M", "--set", f"chunk={CHUNK}",
            "--set", f"char_size={args.char_size // MIB}M", "--set", f"files={args.files}",
            "--set", f"seeks={args.seeks}", "--set", "seekers=5",
            "--csv", csv, "--no-progress", "--no-db"]
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"stormark failed ({done.returncode}): {done.stdout.strip()} "
                           f"{done.stderr.strip()}")
    with open(csv) as f:
        figures = csv_figures(f.read(), "stormark")
    os.unlink(csv)
    return figures


def print_table(args, disk, table, theirs, ours):
    print(f"bonnie vs bonnie++ 2.00, memory limit {args.limit // MIB} MiB, data file "
          f"{2 * args.limit // MIB} MiB in {CHUNK // 1024} KiB chunks, per-char "
          f"{args.char_size // MIB} MiB, {args.files} x 1024 files; fresh ext4 each run on "
          f"{disk.describe()} of {args.disk // MIB} MiB, {args.repeat} runs each, "
          f"alternating (spread = largest / smallest run)")
    print(f"{'test':<12}{'unit':<9}{'bonnie++':>11}{'spread':>8}{'stormark':>11}{'spread':>8}"
          f"{'stormark/bonnie++':>19}")
    for test, row in table.items():
        unit = UNITS.get(test, "files/s")
        if row["ratio"] is None:
            print(f"{test:<12}{unit:<9}{'+++++':>11}{'':>8}{'+++++':>11}{'':>8}{'-':>19}"
                  f"   (a run under 0.5 s: bonnie++ {row['reference']}, stormark {row['stormark']})")
            continue
        print(f"{test:<12}{unit:<9}{row['reference_median']:>11.0f}{row['reference_spread']:>7.2f}x"
              f"{row['stormark_median']:>11.0f}{row['stormark_spread']:>7.2f}x"
              f"{row['ratio']:>19.2f}")
    # What the data-file tests read: rewrite reads the file, get_block reads it, getc reads the
    # per-char bytes, and the seeks read a chunk each (8000 of them by default).
    asked = (2 * 2 * args.limit + args.char_size) / MIB
    for name, runs in (("bonnie++", theirs), ("stormark", ours)):
        read = ", ".join(f"{r['device_read_mib']:.0f}" for r in runs)
        written = ", ".join(f"{r['device_written_mib']:.0f}" for r in runs)
        print(f"  {name}: device read {read} MiB, wrote {written} MiB "
              f"(the data-file tests read at least {asked:.0f} MiB)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="/var/tmp", help="where the loop device's file goes")
    parser.add_argument("--disk", default="1G")
    parser.add_argument("--limit", default="256M")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--files", type=int, default=96, help="bonnie++ -n, in units of 1024")
    parser.add_argument("--char-size", default="4M", help="bytes of the per-char tests")
    parser.add_argument("--seeks", type=int, default=100000, help="seeks, shared by 5 seekers")
    parser.add_argument("--bandwidth", default="200M",
                        help="cap the disk's reads and writes at this many bytes a second "
                             "(e.g. 200M; 0: as fast as the machine's disk)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds to pause before every measured run")
    parser.add_argument("--json", help="write the table as JSON here")
    args = parser.parse_args()
    if BONNIE is None:
        sys.exit("bonnie++ is not installed (scripts/install-deps.sh installs it)")
    if os.geteuid() != 0:
        sys.exit("needs root (losetup, mkfs, mount and a memory cgroup for bonnie++)")
    args.disk = benchlib.parse_size(args.disk)
    args.limit = benchlib.parse_size(args.limit)
    args.char_size = benchlib.parse_size(args.char_size)
    args.bandwidth = benchlib.parse_size(args.bandwidth)
    if 2 * args.limit + 64 * MIB > args.disk:
        sys.exit(f"--disk must hold the data file of 2 x --limit ({2 * args.limit // MIB} MiB) "
                 f"and the filesystem's own blocks")

    memlimited.raise_on_sigterm()
    cgroup = memlimited.MemoryCgroup(args.limit, "bonnie")
    disk = None
    out = tempfile.mkdtemp(prefix="stormark-bench-bonnie-out-")
    try:
        disk = memlimited.LoopFilesystem(args.dir, args.disk, args.bandwidth,
                                         inodes=args.files * 1024 + 16384)
        theirs, ours = memlimited.alternate(
            disk, args.repeat, args.settle, lambda mnt: bonnie(mnt, args, cgroup),
            lambda mnt: stormark(mnt, args, out))
    except RuntimeError as e:
        sys.exit(str(e))
    finally:
        if disk:
            disk.close()
        cgroup.close()
        shutil.rmtree(out, ignore_errors=True)

    table = memlimited.compare(theirs, ours, FIELDS)
    print_table(args, disk, table, theirs, ours)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"limit": args.limit, "disk": args.disk, "repeat": args.repeat,
                       "bandwidth": args.bandwidth,
                       "tests": table, "bonnie++_runs": theirs, "stormark_runs": ours}, f,
                      indent=1)


if __name__ == "__main__":
    main()
