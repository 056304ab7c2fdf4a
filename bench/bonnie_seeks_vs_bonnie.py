#!/usr/bin/env python3
"""Compares stormark's bonnie seeks with Debian's bonnie++ 2.00 on a memory-limited machine:
both tools run in a memory cgroup of LIMIT (stormark's `memory_limit`, bonnie++ in a v1 memory
cgroup this script makes beside its own), on a data file of twice the limit, as bonnie++'s
2 x RAM rule asks, in the same directory, alternately, REPEAT times each.

    python3 bench/bonnie_seeks_vs_bonnie.py [--dir /var/tmp] [--limit 256M] [--repeat 5]
                                            [--seeks 8192]

The invocations (the block tests run first in both, as bonnie++ cannot run seeks alone):
    bonnie++ -d DIR -s 2xLIMIT:8k:SEEKS:5 -r LIMIT -n 0 -f -u root -q      (in the cgroup)
    stormark run --workload bonnie --dir DIR --set size=2xLIMIT --set memory_limit=LIMIT
        --set files=0 --set fast=true --set seeks=SEEKS --json J

It prints the median seeks/s of both tools, their ratio and each tool's spread (largest /
smallest run), then bonnie++'s figure against the range stormark's note gives for each of its
runs: bonnie++ 2.00 counts the deletion of its data file in its seeks figure whenever its last
seeker is still running when the first finishes, and stormark measures that deletion and says
what bonnie++ would have read. Needs root and a writable v1 memory cgroup.
"""
import argparse
import json
import os
import re
import shutil
import statistics
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
SEEKS_FIELD = 19  # 0-based, in a bonnie++ 2.00 CSV data line (1.98 format)
MIB = 1 << 20


def bonnie(workdir, limit, seeks, cgroup):
    size_mib = 2 * limit // MIB
    argv = [BONNIE, "-d", workdir, "-s", f"{size_mib}:8k:{seeks}:5", "-r", str(limit // MIB),
            "-n", "0", "-f", "-u", "root", "-q"]

    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          preexec_fn=cgroup.enter)
    if done.returncode != 0:
        sys.exit(f"bonnie++ failed ({done.returncode}): {done.stderr.strip()}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("1.98,")]
    field = lines[0].split(",")[SEEKS_FIELD]
    return None if field == "+++++" else float(field)


def stormark(workdir, limit, seeks, out):
    json_path = os.path.join(out, "bonnie.json")
    done = subprocess.run([os.path.join(BIN, "stormark"), "run", "--workload", "bonnie",
                           "--dir", workdir, "--set", f"size={2 * limit // MIB}M",
                           "--set", f"memory_limit={limit // MIB}M", "--set", "files=0",
                           "--set", "fast=true", "--set", f"seeks={seeks}", "--json", json_path,
                           "--no-progress", "--no-db"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"stormark failed ({done.returncode}): {done.stdout.strip()} "
                 f"{done.stderr.strip()}")
    with open(json_path) as f:
        row = json.load(f)["phases"][0]["results"][0]
    os.unlink(json_path)
    seek = next(m for m in row["measurements"] if m["name"] == "seeks")
    note = next((w for w in row["warnings"] if w.startswith("seeks: bonnie++")), None)
    span = None
    if note:
        m = re.search(r"between (\d+) and (\d+) seeks/s", note)
        span = (float(m.group(1)), float(m.group(2)))
    return (None if seek["too_fast"] else seek["ops_per_second"]), span, \
        int(row["resolved"].get("data_file_delete_nanos", 0)) / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--limit", default="256M")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seeks", type=int, default=8192)
    args = parser.parse_args()
    if BONNIE is None:
        sys.exit("bonnie++ is not installed (scripts/install-deps.sh installs it)")
    if os.geteuid() != 0:
        sys.exit("needs root (a memory cgroup for bonnie++)")
    limit = benchlib.parse_size(args.limit)
    cgroup = memlimited.MemoryCgroup(limit, "bonnie-seeks")
    workdir = tempfile.mkdtemp(prefix="stormark-bench-seeks-", dir=args.dir)
    out = tempfile.mkdtemp(prefix="stormark-bench-seeks-out-")
    try:
        theirs, ours, spans, deletes = [], [], [], []
        for _ in range(args.repeat):
            os.sync()
            theirs.append(bonnie(workdir, limit, args.seeks, cgroup))
            os.sync()
            o, span, delete = stormark(workdir, limit, args.seeks, out)
            ours.append(o)
            spans.append(span)
            deletes.append(delete)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        cgroup.close()

    print(f"bonnie seeks vs bonnie++ 2.00, memory limit {limit // MIB} MiB, file "
          f"{2 * limit // MIB} MiB, {args.seeks} seeks x 5 seekers, {args.repeat} runs each, "
          f"alternating")
    for name, runs in (("bonnie++", theirs), ("stormark", ours)):
        shown = ", ".join("+++++" if r is None else f"{r:.0f}" for r in runs)
        timed = [r for r in runs if r is not None]
        summary = (f"median {statistics.median(timed):.0f}, spread "
                   f"{max(timed) / min(timed):.2f}x" if timed else "all under 0.5 s")
        print(f"  {name:9} {shown}  ({summary})")
    timed_t = [r for r in theirs if r is not None]
    timed_o = [r for r in ours if r is not None]
    if timed_t and timed_o:
        print(f"  stormark / bonnie++ (medians): "
              f"{statistics.median(timed_o) / statistics.median(timed_t):.2f}")
    print(f"  data file deletion after stormark's seeks: "
          f"{', '.join(f'{d:.2f} s' for d in deletes)}")
    inside = sum(1 for t, s in zip(theirs, spans)
                 if t is not None and s is not None and s[0] * 0.85 <= t <= s[1] * 1.15)
    noted = sum(1 for s in spans if s is not None)
    print(f"  stormark's note gave a range in {noted} of {args.repeat} runs; bonnie++'s figure "
          f"fell within 15% of that run's range in {inside}")


if __name__ == "__main__":
    main()
