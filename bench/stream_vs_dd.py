#!/usr/bin/env python3
"""Compares stormark's stream workload with GNU dd on the same directory, in the same run.

Each case runs dd and stormark alternately, REPEAT times each, and prints the median
throughput of both and their ratio. Absolute figures on a shared machine are noise; the
ratio of two tools measured side by side is the result.

    python3 bench/stream_vs_dd.py [--dir /var/tmp] [--size 1G] [--repeat 3]

Both tools start each measured run after the same pause (--settle, 3 s): on a virtual
machine with free page reporting (virtio-balloon), memory freed a few seconds ago has gone
back to the host, and the next page-cache write pays for faulting it in again. stormark
starts its agent before it measures, dd does not; without the pause, dd would always find
warm memory and stormark cold, which halves stormark's buffered write figure here.

dd copies from a file of random bytes in /dev/shm, not /dev/zero: stormark writes random
data, and some storage (thin provisioning, zero detection in a hypervisor) writes zeros
faster than anything else.

Next to each figure the script prints the kernel CPU time the tool's measured run took, in
seconds per GiB (dd's own system time; for stormark the agent's, over its timed region). A
buffered read after eviction is a memory copy: where that time differs between the tools, they
did not pay the same for memory, and the ratio says more about the machine than about the tool
(see docs/performance.md).

Cases (all 1 MiB blocks):
  write+fdatasync   dd conv=fdatasync         vs  stormark --rw write --fdatasync
  write direct      dd oflag=direct           vs  stormark --rw write --direct --no-fdatasync
  read (evicted)    dd after iflag=nocache    vs  stormark --rw read
  read direct       dd iflag=direct           vs  stormark --rw read --direct
"""
import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, HERE)
from benchlib import parse_size  # noqa: E402
BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))


def dd(args):
    """Runs dd; returns bytes/s from its own summary line and its system CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
    out = subprocess.run(["dd", *args], capture_output=True, text=True,
                         env={**os.environ, "LC_ALL": "C"}, check=True).stderr
    system = resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime - before
    m = re.search(r"(\d+) bytes .* copied, ([0-9.e+-]+) s", out)
    if not m:
        sys.exit(f"cannot parse dd output: {out!r}")
    return int(m.group(1)) / float(m.group(2)), system


def evict(path):
    """Drops a file from the page cache (posix_fadvise DONTNEED), as stormark does."""
    subprocess.run(["dd", f"if={path}", "iflag=nocache", "count=0"], capture_output=True,
                   check=True)


def stormark(workdir, flags):
    report = os.path.join(workdir, "report.json")
    subprocess.run([os.path.join(BIN, "stormark"), "run", "--dir", workdir, "--no-progress",
                    "--json", report, *flags], capture_output=True, text=True, check=True)
    with open(report) as f:
        result = json.load(f)["phases"][0]["results"][0]
    os.unlink(report)
    if result["status"] != "succeeded":
        sys.exit(f"stormark failed: {result['error']}")
    return result["bytes_per_second"], result["cpu_system_nanos"] / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", help="run only the case whose name starts with this")
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds to pause before every measured run")
    args = parser.parse_args()
    size = parse_size(args.size)
    count = size // (1 << 20)

    workdir = tempfile.mkdtemp(prefix="stormark-bench-", dir=args.dir)
    data = os.path.join(workdir, "dd.dat")
    shm = "/dev/shm" if os.path.isdir("/dev/shm") else workdir
    source = os.path.join(shm, f"stormark-bench-{os.getpid()}.rand")
    with open(source, "wb") as f:
        for _ in range(count):
            f.write(os.urandom(1 << 20))
    try:
        def dd_write_sync():
            return dd([f"if={source}", f"of={data}", "bs=1M", f"count={count}", "conv=fdatasync"])

        def dd_write_direct():
            return dd([f"if={source}", f"of={data}", "bs=1M", f"count={count}", "oflag=direct"])

        def dd_read():
            dd([f"if={source}", f"of={data}", "bs=1M", f"count={count}", "conv=fdatasync"])
            evict(data)
            return dd([f"if={data}", "of=/dev/null", "bs=1M"])

        def dd_read_direct():
            dd([f"if={source}", f"of={data}", "bs=1M", f"count={count}", "conv=fdatasync"])
            return dd([f"if={data}", "of=/dev/null", "bs=1M", "iflag=direct"])

        common = ["--size", args.size, "--bs", "1M"]
        cases = [
            ("write+fdatasync", dd_write_sync, common + ["--rw", "write", "--fdatasync"]),
            ("write direct", dd_write_direct,
             common + ["--rw", "write", "--direct", "--no-fdatasync"]),
            ("read (evicted)", dd_read, common + ["--rw", "read"]),
            ("read direct", dd_read_direct, common + ["--rw", "read", "--direct"]),
        ]
        print(f"stream vs dd: {args.size} in 1 MiB blocks on {args.dir}, "
              f"median of {args.repeat} alternating runs")
        print(f"{'case':<18}{'dd MiB/s':>12}{'stormark MiB/s':>16}{'stormark/dd':>13}"
              f"{'dd sys s/GiB':>14}{'stormark sys s/GiB':>20}")
        for name, dd_case, flags in cases:
            if args.only and not name.startswith(args.only):
                continue
            dd_runs, sm_runs = [], []
            for _ in range(args.repeat):
                time.sleep(args.settle)
                dd_runs.append(dd_case())
                if os.path.exists(data):
                    os.unlink(data)
                time.sleep(args.settle)
                sm_runs.append(stormark(workdir, flags))
            d, s = (statistics.median(rate for rate, _ in runs) for runs in (dd_runs, sm_runs))
            d_sys, s_sys = (statistics.median(t for _, t in runs) / (size / 2**30)
                            for runs in (dd_runs, sm_runs))
            print(f"{name:<18}{d / 2**20:>12.1f}{s / 2**20:>16.1f}{s / d:>13.2f}"
                  f"{d_sys:>14.2f}{s_sys:>20.2f}", flush=True)
    finally:
        os.unlink(source)
        if os.path.exists(data):
            os.unlink(data)
        os.rmdir(workdir)


if __name__ == "__main__":
    main()
