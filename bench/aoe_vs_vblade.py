#!/usr/bin/env python3
"""Throughput of stormark's user-space AoE initiator against vblade, beside a reference
initiator written in Python, in the same run on the same target.

The script makes a network namespace joined by a veth pair, starts vblade (Debian's AoE
target) in it on a file in --dir, and runs sequential 1 MiB reads and writes at MTU 1500 and
9000, with 1 and N (--depth) AoE tags in flight:

  stormark   randio rw=read|write bs=1M iodepth=D on an `aoe:` target of one agent started
             here (iodepth bounds the AoE frames in flight, capped by vblade's 16 buffers)
  probe      the same transfer from a plain Python initiator (raw socket, D tags in flight,
             one recv per frame): the reference a first prototype measured

and prints MiB/s of both, their ratio, and stormark's counters: retransmissions, late replies
(a reply to an attempt already sent again: the retransmission was spurious, the target was
slow rather than the frame lost), frames this host's socket dropped, and the smoothed RTT. The ceiling is vblade
itself (one thread, one pread or pwrite per frame): a figure that stops growing with depth is
vblade's limit, not the initiator's. vblade's file sits in the page cache (it is written
first), so reads measure the protocol and vblade, not a disk.

Needs root, ip (iproute2) and vblade. Everything made here is removed at the end.

    python3 bench/aoe_vs_vblade.py [--dir /var/tmp] [--runtime 5] [--depth 16]
"""
import argparse
import json
import os
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))
MIB = 1 << 20
SHELF, SLOT = 9, 1
ETH_P_AOE = 0x88A2


def run(*argv, check=True):
    return subprocess.run(list(argv), check=check, capture_output=True, text=True)


class Probe:
    """A minimal AoE initiator in Python: Query Config, then READ/WRITE SECTORS EXT frames with
    `depth` tags in flight; a frame unanswered for 50 ms is sent again."""

    def __init__(self, interface):
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_AOE))
        self.sock.bind((interface, ETH_P_AOE))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.mac = self.sock.getsockname()[4]
        mtu = int(open(f"/sys/class/net/{interface}/mtu").read())
        self.tag = 1
        reply = self.transact(b"\xff" * 6, 1, b"\0" * 8)
        buffers, _, target_sectors = struct.unpack_from(">HHB", reply, 24)
        self.target = reply[6:12]
        self.sectors = min((mtu - 22) // 512, target_sectors)
        self.buffers = buffers

    def header(self, dst, command, tag):
        return dst + self.mac + struct.pack(">HBBHBBI", ETH_P_AOE, 0x10, 0, SHELF, SLOT, command,
                                            tag)

    def transact(self, dst, command, arg):
        tag = self.tag
        self.tag += 1
        for _ in range(50):
            self.sock.send(self.header(dst, command, tag) + arg)
            deadline = time.monotonic() + 0.1
            while time.monotonic() < deadline:
                if not select.select([self.sock], [], [], 0.1)[0]:
                    continue
                reply = self.sock.recv(9100)
                if struct.unpack_from(">I", reply, 20)[0] == tag and reply[14] & 0x08:
                    return reply
        sys.exit("the probe got no answer from vblade")

    def ata(self, tag, write, lba, count, data=b""):
        arg = struct.pack("<BBBB", 0x41 if write else 0x40, 0, count, 0x34 if write else 0x24)
        arg += lba.to_bytes(6, "little") + b"\0\0"
        return self.header(self.target, 0, tag) + arg + data

    def transfer(self, write, depth, seconds, span):
        """Moves sequential 1 MiB requests over [0, span) for `seconds`; returns MiB/s."""
        payload = os.urandom(self.sectors * 512)
        depth = min(depth, self.buffers)
        outstanding = {}  # tag -> (lba, count, sent)
        next_lba, done_bytes = 0, 0
        start = time.monotonic()
        end = start + seconds
        while True:
            now = time.monotonic()
            while len(outstanding) < depth and now < end:
                count = min(self.sectors, 2048 - (next_lba % 2048))
                tag = self.tag
                self.tag += 1
                self.sock.send(self.ata(tag, write, next_lba, count,
                                        payload[:count * 512] if write else b""))
                outstanding[tag] = (next_lba, count, now)
                next_lba = (next_lba + count) % (span // 512)
            if not outstanding:
                break
            if not select.select([self.sock], [], [], 0.05)[0]:
                for tag, (lba, count, _) in list(outstanding.items()):  # resend everything
                    del outstanding[tag]
                    new = self.tag
                    self.tag += 1
                    self.sock.send(self.ata(new, write, lba, count,
                                            payload[:count * 512] if write else b""))
                    outstanding[new] = (lba, count, time.monotonic())
                continue
            reply = self.sock.recv(9100)
            tag = struct.unpack_from(">I", reply, 20)[0]
            if tag in outstanding:
                done_bytes += outstanding.pop(tag)[1] * 512
        return done_bytes / MIB / (time.monotonic() - start)


def start_agent(workdir, interface):
    config = os.path.join(workdir, "agent.yaml")
    with open(config, "w") as f:
        f.write(f"targets:\n  shelf: {{aoe: 'aoe://{interface}/{SHELF}.{SLOT}', "
                "disposable: true}\n")
    log_path = os.path.join(workdir, "agent.log")
    log = open(log_path, "wb")
    proc = subprocess.Popen([os.path.join(BIN, "stormark-agent"), "--listen", "127.0.0.1:0",
                             "--insecure", "--config", config], stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)
    deadline = time.time() + 20
    while time.time() < deadline:
        m = re.search(r"listening on (127\.0\.0\.1:\d+)", open(log_path).read())
        if m:
            return proc, m.group(1)
        time.sleep(0.1)
    proc.kill()
    sys.exit(f"stormark-agent did not start:\n{open(log_path).read()}")


def stormark(address, workdir, rw, depth, seconds, span):
    report = os.path.join(workdir, "report.json")
    argv = [os.path.join(BIN, "stormark"), "run", "--agent", address, "--target", "shelf",
            "--workload", "randio", "--no-progress", "--json", report]
    for s in (f"rw={rw}", "bs=1M", f"iodepth={depth}", f"size={span // MIB}M",
              f"runtime={seconds}s", "time_based=true", "ramp_time=1s"):
        argv += ["--set", s]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"stormark failed:\n{done.stdout}\n{done.stderr}")
    with open(report) as f:
        row = json.load(f)["phases"][0]["results"][0]
    os.unlink(report)
    return row["bytes_per_second"] / MIB, row.get("device_stats", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--runtime", type=int, default=5, help="seconds per run")
    parser.add_argument("--depth", type=int, default=16, help="the N of 'depth 1 and N'")
    parser.add_argument("--span", type=int, default=256, help="MiB of vblade's file used")
    args = parser.parse_args()
    if os.geteuid() != 0 or not shutil.which("vblade") or not shutil.which("ip"):
        sys.exit("needs root, ip (iproute2) and vblade (apt-get install vblade)")
    span = args.span * MIB
    pid = os.getpid() % 100000
    netns, host_if, peer_if = f"smbench{pid}", f"smbh{pid}", f"smbp{pid}"
    workdir = tempfile.mkdtemp(prefix="stormark-aoe-bench-", dir=args.dir)
    backing = os.path.join(workdir, "vblade.img")
    vblade = agent = None
    rows = []
    try:
        with open(backing, "wb") as f:
            chunk = os.urandom(MIB)
            for _ in range(args.span):
                f.write(chunk)
        run("ip", "netns", "add", netns)
        run("ip", "link", "add", host_if, "type", "veth", "peer", "name", peer_if)
        run("ip", "link", "set", peer_if, "netns", netns)
        for mtu in (1500, 9000):
            if vblade:
                vblade.terminate()
                vblade.wait(timeout=10)
            run("ip", "link", "set", host_if, "mtu", str(mtu), "up")
            run("ip", "-n", netns, "link", "set", peer_if, "mtu", str(mtu), "up")
            vblade = subprocess.Popen(["ip", "netns", "exec", netns, "vblade", str(SHELF),
                                       str(SLOT), peer_if, backing],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
            if agent is None:
                agent, address = start_agent(workdir, host_if)
            probe = Probe(host_if)
            for depth in (1, args.depth):
                for rw in ("read", "write"):
                    ours, stats = stormark(address, workdir, rw, depth, args.runtime, span)
                    theirs = probe.transfer(rw == "write", depth, args.runtime, span)
                    rows.append((mtu, probe.sectors, depth, rw, ours, theirs,
                                 stats.get("aoe.retransmits", "?"),
                                 stats.get("aoe.late_replies", "?"),
                                 stats.get("aoe.socket_drops", "?"),
                                 stats.get("aoe.srtt_us", "?")))
                    print(f"  MTU {mtu} depth {depth} {rw}: stormark {ours:.1f} MiB/s, "
                          f"probe {theirs:.1f} MiB/s", file=sys.stderr)
            probe.sock.close()
    finally:
        if agent:
            agent.terminate()
            agent.wait(timeout=15)
        if vblade:
            vblade.terminate()
            vblade.wait(timeout=10)
        run("ip", "link", "del", host_if, check=False)
        run("ip", "netns", "del", netns, check=False)
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"AoE sequential 1 MiB, vblade on a veth pair, {args.runtime} s per run "
          "(MiB/s; probe = Python initiator)")
    print(f"{'MTU':>5} {'sect/frame':>10} {'tags':>4} {'op':>5} {'stormark':>9} {'probe':>7} "
          f"{'ratio':>6} {'retransmits':>11} {'late':>5} {'sock drops':>10} {'srtt us':>8}")
    for mtu, spf, depth, rw, ours, theirs, retrans, late, drops, srtt in rows:
        print(f"{mtu:>5} {spf:>10} {depth:>4} {rw:>5} {ours:>9.1f} {theirs:>7.1f} "
              f"{ours / theirs:>6.2f} {retrans:>11} {late:>5} {drops:>10} {srtt:>8}")


if __name__ == "__main__":
    main()
