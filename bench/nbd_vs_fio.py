#!/usr/bin/env python3
"""Compares stormark's user-space NBD client with fio's nbd engine (libnbd, as Debian builds
fio), on the same nbdkit export, in the same run.

nbdkit (started here on a free loopback port, stopped after) serves a memory export, so the
server's storage is never the limit: what is compared is the two clients' own cost per request
and how well they keep a queue full. Each case runs fio and stormark alternately, REPEAT times
each, and prints median IOPS and MiB/s, the ratio stormark/fio (goal >= 1.0), and both tools'
p50/p99 latency (submission to completion in both).

    python3 bench/nbd_vs_fio.py [--size 1G] [--runtime 5] [--repeat 3] [--threads 4]

Cases (both tools: one job, one connection, time based after a 1 s ramp):
  randread 4k QD1     4 KiB random reads, one at a time: the round-trip cost
  randread 4k QD32    32 in flight on one connection
  read 1M QD1         1 MiB sequential reads
The server runs --threads worker threads (nbdkit -t), the same for both tools.
"""
import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, HERE)
from benchlib import parse_size  # noqa: E402
from randio_vs_fio import Agent, fio, run_version, stormark, us  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_nbdkit(workdir, size, threads):
    """nbdkit's memory plugin on a free loopback port, filled with random data once."""
    port = free_port()
    pidfile = os.path.join(workdir, "nbdkit.pid")
    proc = subprocess.Popen(["nbdkit", "-f", "--exit-with-parent", "-P", pidfile, "-t",
                             str(threads), "-i", "127.0.0.1", "-p", str(port), "memory",
                             str(size)], stdin=subprocess.DEVNULL)
    deadline = time.time() + 20
    while not os.path.exists(pidfile):
        if proc.poll() is not None or time.time() > deadline:
            sys.exit("nbdkit did not start")
        time.sleep(0.05)
    uri = f"nbd://127.0.0.1:{port}/"
    # Random data, so that neither tool reads the memory plugin's sparse zero pages.
    subprocess.run(["fio", "--name=fill", "--ioengine=nbd", f"--uri={uri}", "--rw=write",
                    "--bs=1M", f"--size={size}", "--iodepth=8", "--output=/dev/null"], check=True)
    return proc, uri


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runtime", type=int, default=5, help="seconds per run, after the ramp")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4, help="nbdkit worker threads")
    parser.add_argument("--settle", type=float, default=1.0)
    args = parser.parse_args()
    for tool in ("fio", "nbdkit"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed (bash scripts/install-deps.sh test)")
    size = parse_size(args.size)
    workdir = tempfile.mkdtemp(prefix="stormark-nbd-bench-", dir="/var/tmp")
    server = agent = None
    try:
        server, uri = start_nbdkit(workdir, size, args.threads)
        agent = Agent(workdir, {"export": f"{{nbd: '{uri}'}}"})
        cases = [("randread 4k QD1", {"rw": "randread", "bs": "4k", "iodepth": "1"}),
                 ("randread 4k QD32", {"rw": "randread", "bs": "4k", "iodepth": "32"}),
                 ("read 1M QD1", {"rw": "read", "bs": "1M", "iodepth": "1"})]
        print(f"stormark NBD client vs {run_version('fio')} nbd engine, on nbdkit "
              f"{nbdkit_version()} memory {args.size} with {args.threads} threads (loopback TCP);"
              f" median of {args.repeat} alternating runs, {args.runtime} s each after a 1 s ramp")
        print(f"{'case':<18}{'fio IOPS':>10}{'stormark IOPS':>15}{'ratio':>7}{'fio MiB/s':>11}"
              f"{'sm MiB/s':>10}{'fio p50/p99 us':>18}{'sm p50/p99 us':>17}")
        for name, opts in cases:
            sm_opts = {**opts, "size": str(size), "runtime": f"{args.runtime}s",
                       "time_based": "true", "ramp_time": "1s"}
            fio_opts = {**opts, "ioengine": "nbd", "uri": uri, "size": str(size),
                        "runtime": str(args.runtime), "time_based": "1", "ramp_time": "1"}
            f_runs, s_runs = [], []
            for _ in range(args.repeat):
                time.sleep(args.settle)
                f_runs.append(fio(None, fio_opts))
                time.sleep(args.settle)
                s_runs.append(stormark(agent, workdir, "export", sm_opts))
            med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
            f_iops, s_iops = med(f_runs, "iops"), med(s_runs, "iops")
            print(f"{name:<18}{f_iops:>10.0f}{s_iops:>15.0f}{s_iops / f_iops:>7.2f}"
                  f"{med(f_runs, 'bw') / 2**20:>11.1f}{med(s_runs, 'bw') / 2**20:>10.1f}"
                  f"{us(med(f_runs, 'p50')) + '/' + us(med(f_runs, 'p99')):>18}"
                  f"{us(med(s_runs, 'p50')) + '/' + us(med(s_runs, 'p99')):>17}", flush=True)
    finally:
        if agent:
            agent.stop()
        if server:
            server.terminate()
            server.wait(timeout=15)
        shutil.rmtree(workdir, ignore_errors=True)


def nbdkit_version():
    done = subprocess.run(["nbdkit", "--version"], capture_output=True, text=True)
    return done.stdout.split()[-1] if done.stdout else "?"


if __name__ == "__main__":
    main()
