#!/usr/bin/env python3
"""Compares stormark's user-space iSCSI initiator with libiscsi's iscsi-perf (Debian's
libiscsi-bin; Debian's fio has no libiscsi engine) on the same tgtd LUN, in the same run.

tgtd (Debian's tgt) is started here with its own control port and a free loopback portal, one
target with a file-backed LUN in --dir, and is shut down after (offline, target deleted, system
deleted). iscsi-perf only reads, so the cases are reads: 4 KiB random at QD1 and QD32, and
1 MiB sequential at QD1. Each case runs both tools alternately, REPEAT times each, and prints
median IOPS and MiB/s and the ratio stormark/iscsi-perf (goal >= 1.0). iscsi-perf reports no
latency percentiles; stormark's p50/p99 are shown.

    python3 bench/iscsi_vs_iscsi_perf.py [--dir /var/tmp] [--size 1G] [--runtime 5] [--repeat 3]

The LUN is a file on --dir, read through tgtd's page cache: both tools read the same cached
data, so this compares the initiators (and tgtd), not a disk.
"""
import argparse
import os
import re
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
from randio_vs_fio import Agent, make_file, stormark, us  # noqa: E402

IQN = f"iqn.2024-01.org.stormark.bench:lun{os.getpid()}"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Tgtd:
    def __init__(self, backing):
        self.control = str(31000 + os.getpid() % 1700)  # tgtd takes up to 32767
        self.port = free_port()
        os.makedirs("/var/run/tgtd", exist_ok=True)
        self.proc = subprocess.Popen(["tgtd", "-f", "-C", self.control, "--iscsi",
                                      f"portal=127.0.0.1:{self.port}"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.time() + 20
        while self.adm("--mode", "sys", "--op", "show").returncode != 0:
            if self.proc.poll() is not None or time.time() > deadline:
                sys.exit("tgtd did not start")
            time.sleep(0.1)
        for args in (["--mode", "target", "--op", "new", "--tid", "1", "--targetname", IQN],
                     ["--mode", "logicalunit", "--op", "new", "--tid", "1", "--lun", "1",
                      "--backing-store", backing],
                     ["--mode", "target", "--op", "bind", "--tid", "1", "--initiator-address",
                      "127.0.0.1"]):
            if self.adm("--lld", "iscsi", *args).returncode != 0:
                sys.exit(f"tgtadm {' '.join(args)} failed")
        self.uri = f"iscsi://127.0.0.1:{self.port}/{IQN}/1"

    def adm(self, *args):
        return subprocess.run(["tgtadm", "-C", self.control] + list(args), capture_output=True,
                              text=True, timeout=30)

    def stop(self):
        self.adm("--mode", "sys", "--op", "update", "--name", "State", "--value", "offline")
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "delete", "--force", "--tid", "1")
        self.adm("--mode", "sys", "--op", "delete")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)


def iscsi_perf(uri, blocks, depth, random, seconds):
    """iscsi-perf's average IOPS and bandwidth over `seconds` (it has no ramp)."""
    argv = ["iscsi-perf", "-t", str(seconds), "-m", str(depth), "-b", str(blocks)]
    if random:
        argv.append("-r")
    done = subprocess.run(argv + [uri], capture_output=True, text=True, timeout=seconds + 60)
    m = re.findall(r"iops average (\d+)", done.stdout.replace("\r", "\n"))
    if done.returncode != 0 or not m:
        sys.exit(f"iscsi-perf failed:\n{done.stdout}\n{done.stderr}")
    iops = float(m[-1])
    return {"iops": iops, "bw": iops * blocks * 512}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runtime", type=int, default=5, help="seconds per run")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--settle", type=float, default=1.0)
    args = parser.parse_args()
    for tool in ("tgtd", "tgtadm", "iscsi-perf"):
        if not shutil.which(tool):
            sys.exit(f"{tool} is not installed (bash scripts/install-deps.sh test)")
    size = parse_size(args.size)
    workdir = tempfile.mkdtemp(prefix="stormark-iscsi-bench-", dir=args.dir)
    tgtd = agent = None
    try:
        backing = os.path.join(workdir, "lun.img")
        make_file(backing, size)
        tgtd = Tgtd(backing)
        agent = Agent(workdir, {"lun": f"{{iscsi: '{tgtd.uri}'}}"})
        # (name, stormark options, iscsi-perf blocks of 512 bytes, depth, random)
        cases = [("randread 4k QD1", {"rw": "randread", "bs": "4k", "iodepth": "1"}, 8, 1, True),
                 ("randread 4k QD32", {"rw": "randread", "bs": "4k", "iodepth": "32"}, 8, 32,
                  True),
                 ("read 1M QD1", {"rw": "read", "bs": "1M", "iodepth": "1"}, 2048, 1, False)]
        print(f"stormark iSCSI initiator vs iscsi-perf (libiscsi {libiscsi_version()}), on tgtd "
              f"with a {args.size} file LUN (loopback TCP); median of {args.repeat} alternating "
              f"runs, {args.runtime} s each")
        print(f"{'case':<18}{'perf IOPS':>10}{'stormark IOPS':>15}{'ratio':>7}{'perf MiB/s':>12}"
              f"{'sm MiB/s':>10}{'sm p50/p99 us':>17}")
        for name, opts, blocks, depth, random in cases:
            sm_opts = {**opts, "size": str(size), "runtime": f"{args.runtime}s",
                       "time_based": "true"}
            p_runs, s_runs = [], []
            for _ in range(args.repeat):
                time.sleep(args.settle)
                p_runs.append(iscsi_perf(tgtd.uri, blocks, depth, random, args.runtime))
                time.sleep(args.settle)
                s_runs.append(stormark(agent, workdir, "lun", sm_opts))
            med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
            p_iops, s_iops = med(p_runs, "iops"), med(s_runs, "iops")
            print(f"{name:<18}{p_iops:>10.0f}{s_iops:>15.0f}{s_iops / p_iops:>7.2f}"
                  f"{med(p_runs, 'bw') / 2**20:>12.1f}{med(s_runs, 'bw') / 2**20:>10.1f}"
                  f"{us(med(s_runs, 'p50')) + '/' + us(med(s_runs, 'p99')):>17}", flush=True)
    finally:
        if agent:
            agent.stop()
        if tgtd:
            tgtd.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def libiscsi_version():
    done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libiscsi7"], capture_output=True,
                          text=True)
    return done.stdout.strip() or "?"


if __name__ == "__main__":
    main()
