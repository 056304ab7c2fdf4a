#!/usr/bin/env python3
"""Compares the file tests of stormark's bonnie workload with Debian's bonnie++ 2.00, same
directory, same parameters, in the same run.

Each case runs bonnie++ and stormark alternately, REPEAT times each, and prints for every file
test (sequential and random create, stat and delete) the median files/s of both tools, their
ratio, and each tool's spread (largest / smallest run). This is what the agent's file-safety
seam costs: both tools make the same system calls per file (an open and a close per create, a
stat per stat, an unlink per delete), stormark's below the phase directory's descriptors
(openat2, fstatat, unlinkat) where bonnie++ uses names below its working directory, and
stormark looks each name up in the phase's table of the names it created.

    python3 bench/bonnie_files_vs_bonnie.py [--dir /var/tmp] [--files 64] [--repeat 5]

The invocations (no data-file tests; -n NUM:MAX:MIN:DIRS, NUM in units of 1024 files):
    bonnie++ -d DIR -s 0 -n FILES -u root -q
    stormark run --workload bonnie --dir DIR --set io=false --set files=FILES --csv C

A figure under bonnie++'s 0.5 s rule is "+++++" in both tools' CSV and shown as such; raise
--files until the test you care about takes longer. Both tools run with the page cache warm
(as bonnie++ does): these are metadata rates of the filesystem and the kernel's dentry cache,
so a shared host moves them by a factor of 1.5 between runs; read the ratio of the medians.
"""
import argparse
import os
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

BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))
BONNIE = benchlib.BONNIE

# 0-based fields of a bonnie++ 2.00 CSV data line (1.98 format) holding the file tests' rates.
FILE_FIELDS = {"seq_create": 26, "seq_stat": 28, "seq_del": 30,
               "ran_create": 32, "ran_stat": 34, "ran_del": 36}
TOO_FAST = "+++++"


def csv_rates(text, source):
    lines = [line for line in text.splitlines() if line.startswith("1.98,")]
    if len(lines) != 1:
        sys.exit(f"{source}: expected one bonnie++ CSV data line, got {len(lines)}:\n{text}")
    fields = lines[0].split(",")
    return {name: None if fields[i] == TOO_FAST else float(fields[i])
            for name, i in FILE_FIELDS.items()}


def bonnie(workdir, files):
    argv = [BONNIE, "-d", workdir, "-s", "0", "-n", files, "-q"]
    if os.geteuid() == 0:
        argv += ["-u", "root"]  # bonnie++ refuses root without it
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"bonnie++ failed ({done.returncode}): {done.stderr.strip()}")
    return csv_rates(done.stdout, "bonnie++")


def stormark(workdir, files, out):
    csv = os.path.join(out, "bonnie.csv")
    done = subprocess.run([os.path.join(BIN, "stormark"), "run", "--workload", "bonnie",
                           "--dir", workdir, "--set", "io=false", "--set", f"files={files}",
                           "--csv", csv, "--no-progress"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"stormark failed ({done.returncode}): {done.stderr.strip()}")
    with open(csv) as f:
        rates = csv_rates(f.read(), "stormark")
    os.unlink(csv)
    return rates


def summary(runs):
    """(median, spread) of the runs that were timed; None when any was too fast."""
    if any(r is None for r in runs):
        return None
    return statistics.median(runs), max(runs) / min(runs)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--files", action="append",
                        help="bonnie++ -n value, repeatable (default: 64:0:0:1 and 32:4096:4096:16)")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds to pause before every measured run")
    args = parser.parse_args()
    if BONNIE is None:
        sys.exit("bonnie++ is not installed (apt-get install bonnie++)")
    cases = args.files or ["64:0:0:1", "32:4096:4096:16"]

    workdir = tempfile.mkdtemp(prefix="stormark-bench-", dir=args.dir)
    out = tempfile.mkdtemp(prefix="stormark-bench-out-")
    try:
        print(f"bonnie file tests vs bonnie++ 2.00 on {args.dir}, "
              f"median of {args.repeat} alternating runs (spread = largest / smallest run)")
        print(f"{'files':<18}{'test':<12}{'bonnie++ /s':>13}{'spread':>8}"
              f"{'stormark /s':>13}{'spread':>8}{'stormark/bonnie++':>19}")
        for files in cases:
            theirs, ours = [], []
            for _ in range(args.repeat):
                time.sleep(args.settle)
                theirs.append(bonnie(workdir, files))
                time.sleep(args.settle)
                ours.append(stormark(workdir, files, out))
            for test in FILE_FIELDS:
                t = summary([run[test] for run in theirs])
                o = summary([run[test] for run in ours])
                cell = lambda s: f"{'+++++':>13}{'':>8}" if s is None else f"{s[0]:>13.0f}{s[1]:>7.2f}x"
                ratio = f"{o[0] / t[0]:>19.2f}" if t and o else f"{'-':>19}"
                print(f"{files:<18}{test:<12}{cell(t)}{cell(o)}{ratio}", flush=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
