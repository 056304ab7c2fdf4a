#!/usr/bin/env python3
"""Compares stormark's postmark workload with Debian's PostMark 1.53 on a memory-limited machine:
both tools are held to LIMIT of memory (stormark by `memory_limit`, PostMark in a v1 memory cgroup
of the same limit), each run on a freshly made journaled ext4 on a loop device of DISK, with the
same PostMark script, alternately (PostMark first in even rounds, stormark first in odd ones),
REPEAT runs each.

    python3 bench/postmark_vs_postmark.py [--dir /var/tmp] [--disk 1G] [--limit 256M]
                                          [--bandwidth 200M] [--repeat 5] [--case NAME]...
                                          [--json FILE]

The disk's reads and writes are capped at BANDWIDTH (bench/memlimited.py), as a real disk's are;
`--bandwidth 0` uses the machine's disk as it is. For both tools the limit holds the caches and
the tool's own memory comes on top.

The invocations, on the mounted filesystem MNT:
    cd MNT && postmark SCRIPT                                               (in the cgroup)
    stormark run --postmark-config SCRIPT --dir MNT --set memory_limit=LIMIT --json J

Cases (--case, repeatable; default all):
  case1         the seed's case 1 (2,000 files of 1-9 kB, 50,000 transactions; a tenth of
                that is where PostMark once ran 12-13% faster): its files fit in any page cache
  beyond-cache  2,000 files of 100-300 kB (about 400 MB, 1.6 x a 256 MiB limit), 5,000
                transactions: the reads of files written long before reach the disk

Every count of the two reports must be equal (stormark draws PostMark's random numbers in
PostMark's order); the script stops if one is not. The times compared are PostMark's process wall
time (PostMark prints whole seconds, floored, which is up to a second off) against stormark's
"seconds total", and each tool's CPU time (PostMark's from getrusage of the child, stormark's from
the agent's measurement). It prints each tool's median, spread (largest / smallest run) and the
ratio of the medians, and what the loop device read and wrote in each run. Needs root.

--json FILE writes the table as numbers, for tests/integration/memory_limited_agreement_test.py.
"""
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import memlimited  # noqa: E402

BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))
POSTMARK = shutil.which("postmark")
MIB = 1 << 20

CASES = {
    "case1": "set number 2000\nset size 1000 9000\nset transactions 50000\n",
    "beyond-cache": "set number 2000\nset size 100000 300000\nset transactions 5000\n",
}
COUNTS = {"created": r"(\d+) created \(", "read": r"(\d+) read \(",
          "appended": r"(\d+) appended \(", "deleted": r"(\d+) deleted \(",
          "created_alone": r"Creation alone: (\d+) files",
          "deleted_alone": r"Deletion alone: (\d+) files"}


def counts(report, source):
    found = {}
    for name, pattern in COUNTS.items():
        match = re.search(pattern, report)
        if not match:
            raise RuntimeError(f"{source}: no /{pattern}/ in its report:\n{report}")
        found[name] = int(match.group(1))
    return found


def postmark(mnt, script, cgroup):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run([POSTMARK, script], cwd=mnt, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, errors="replace",
                          preexec_fn=cgroup.enter)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"postmark failed ({done.returncode}): {done.stderr.strip()}")
    return {"seconds": wall,
            "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
            "counts": counts(done.stdout, "postmark")}


def stormark(mnt, script, limit, out):
    json_path = os.path.join(out, "postmark.json")
    done = subprocess.run([os.path.join(BIN, "stormark"), "run", "--postmark-config", script,
                           "--dir", mnt, "--set", f"memory_limit={limit // MIB}M",
                           "--json", json_path, "--no-progress", "--no-db"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"stormark failed ({done.returncode}): {done.stdout.strip()} "
                           f"{done.stderr.strip()}")
    with open(json_path) as f:
        host = json.load(f)["phases"][0]["results"][0]
    os.unlink(json_path)
    total = next(m for m in host["measurements"] if m["name"] == "total")
    return {"seconds": total["elapsed_seconds"],
            "cpu": total["elapsed_seconds"] * total["cpu_percent"] / 100,
            "counts": counts(done.stdout, "stormark")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="/var/tmp", help="where the loop device's file goes")
    parser.add_argument("--disk", default="1G")
    parser.add_argument("--limit", default="256M")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--case", action="append", choices=sorted(CASES))
    parser.add_argument("--bandwidth", default="200M",
                        help="cap the disk's reads and writes at this many bytes a second "
                             "(e.g. 200M; 0: as fast as the machine's disk)")
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds to pause before every measured run")
    parser.add_argument("--json", help="write the table as JSON here")
    args = parser.parse_args()
    if POSTMARK is None:
        sys.exit("postmark is not installed (scripts/install-deps.sh installs it)")
    if os.geteuid() != 0:
        sys.exit("needs root (losetup, mkfs, mount and a memory cgroup for PostMark)")
    limit = benchlib.parse_size(args.limit)
    cases = args.case or list(CASES)

    bandwidth = benchlib.parse_size(args.bandwidth)
    memlimited.raise_on_sigterm()
    cgroup = memlimited.MemoryCgroup(limit, "postmark")
    disk = None
    out = tempfile.mkdtemp(prefix="stormark-bench-postmark-out-")
    results = {}
    try:
        disk = memlimited.LoopFilesystem(args.dir, benchlib.parse_size(args.disk), bandwidth)
        print(f"postmark vs PostMark 1.53, memory limit {limit // MIB} MiB, fresh ext4 each run "
              f"on {disk.describe()} of {benchlib.parse_size(args.disk) // MIB} MiB, "
              f"{args.repeat} runs each, alternating (spread = largest / smallest run)")
        print(f"{'case':<14}{'time':<9}{'postmark':>10}{'spread':>8}{'stormark':>10}"
              f"{'spread':>8}{'stormark/postmark':>19}   device read MiB, postmark / stormark")
        for case in cases:
            script = os.path.join(out, f"{case}.pm")
            with open(script, "w") as f:
                f.write(CASES[case] + "set seed 7\nrun\nquit\n")
            theirs, ours = memlimited.alternate(
                disk, args.repeat, args.settle, lambda mnt: postmark(mnt, script, cgroup),
                lambda mnt: stormark(mnt, script, limit, out))
            for t, o in zip(theirs, ours):
                if t["counts"] != o["counts"]:
                    raise RuntimeError(f"{case}: the counts differ: postmark {t['counts']}, "
                                       f"stormark {o['counts']}")
            table = memlimited.compare(theirs, ours, ("seconds", "cpu"))
            reads = (f"{statistics.median(r['device_read_mib'] for r in theirs):.0f} / "
                     f"{statistics.median(r['device_read_mib'] for r in ours):.0f}")
            for name, row in table.items():
                print(f"{case:<14}{name + ' s':<9}{row['reference_median']:>10.2f}"
                      f"{row['reference_spread']:>7.2f}x{row['stormark_median']:>10.2f}"
                      f"{row['stormark_spread']:>7.2f}x{row['ratio']:>19.2f}"
                      f"   {reads if name == 'seconds' else ''}", flush=True)
            results[case] = {"tests": table, "postmark_runs": theirs, "stormark_runs": ours}
    except RuntimeError as e:
        sys.exit(str(e))
    finally:
        if disk:
            disk.close()
        cgroup.close()
        shutil.rmtree(out, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"limit": limit, "repeat": args.repeat, "bandwidth": bandwidth,
                       "cases": results}, f, indent=1)


if __name__ == "__main__":
    main()
