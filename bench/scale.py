#!/usr/bin/env python3
"""How the controller copes with many agents: starts N stormark-agent processes on loopback
ports of this machine (default 200), each with a null target, runs one timed randio phase on
all of them at one instant, and reports:

  - start skew across agents: each agent's own lateness against the common start instant
    (start_late, p50/p99/max), and the spread of the actual starts on the controller's clock
    (each start corrected by that agent's measured clock offset);
  - the controller's CPU time and max RSS (wait4 on its process), its wall time, and the time
    from the run's start (the controller's first line) to the last agent's result;
  - an idle agent's RSS (median over the agents, before the run).

Usage: STORMARK_BIN_DIR=build/bin python3 bench/scale.py [--agents 200] [--runtime 3]

The agents share this machine's cores with the controller: the skew measured here is the
scheduler's as much as stormark's, and a loaded machine shows more of it.
"""

import argparse
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

LISTENING = re.compile(rb"listening on (127\.0\.0\.1:\d+) ")


def binary(name):
    path = os.path.join(os.environ.get("STORMARK_BIN_DIR", "build/bin"), name)
    if not os.access(path, os.X_OK):
        sys.exit(f"scale.py: {path} is missing; build it or set STORMARK_BIN_DIR")
    return path


def raise_fd_limit(needed):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, int(round(p / 100 * (len(ordered) - 1)))))
    return ordered[k]


class Agents:
    """N agents started in parallel, each on its own directory, stopped by PID on exit."""

    def __init__(self, count, base):
        self.procs, self.addresses, self.logs = [], [], []
        agent = binary("stormark-agent")
        for i in range(count):
            d = os.path.join(base, f"a{i}")
            os.mkdir(d)
            config = os.path.join(d, "agent.yaml")
            with open(config, "w") as f:
                f.write(f"targets:\n  sink: {{null: true}}\n  scratch: {{dir: {d}}}\n")
            log = open(os.path.join(d, "log"), "wb+")
            self.logs.append(log)
            self.procs.append(subprocess.Popen([agent, "--listen", "127.0.0.1:0", "--config", config],
                                               stdin=subprocess.DEVNULL, stdout=log, stderr=log))
        deadline = time.monotonic() + 120
        for proc, log in zip(self.procs, self.logs):
            while True:
                log.seek(0)
                m = LISTENING.search(log.read())
                if m:
                    self.addresses.append(m.group(1).decode())
                    break
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise RuntimeError(f"agent did not start: {log.read().decode(errors='replace')}")
                time.sleep(0.02)

    def stop(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self.logs:
            log.close()


def run(args):
    raise_fd_limit(4 * args.agents + 256)
    base = tempfile.mkdtemp(prefix="stormark-scale-", dir="/var/tmp")
    agents = None
    try:
        t0 = time.monotonic()
        agents = Agents(args.agents, base)
        started_in = time.monotonic() - t0
        idle_rss = statistics.median(rss_kib(p.pid) for p in agents.procs)

        json_path = os.path.join(base, "out.json")
        argv = [binary("stormark"), "run", "--workload", "randio", "--target", "sink",
                "--set", "rw=randread", "--set", f"runtime={args.runtime}s",
                "--set", "time_based=true", "--json", json_path, "--no-db", "--no-progress"]
        for address in agents.addresses:
            argv += ["--agent", address]
        out_path = os.path.join(base, "controller.out")
        with open(out_path, "wb") as out:
            wall0 = time.monotonic()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.monotonic() - wall0
        code = os.waitstatus_to_exitcode(status)
        with open(out_path, errors="replace") as f:
            output = f.read()
        if code != 0:
            print(output)
            sys.exit(f"scale.py: the controller exited {code}")
        with open(json_path) as f:
            report = json.load(f)
        phase = report["phases"][0]
        results = phase["results"]
        ok = [r for r in results if r["status"] == "succeeded"]
        late = [r["start_late_nanos"] / 1e6 for r in ok]
        corrected = [r["start_unix_nanos"] - r["clock_offset_nanos"] for r in ok]
        start_at = phase["start_at_unix_nanos"]
        vs_instant = [(c - start_at) / 1e6 for c in corrected]
        last_result = max(r["end_unix_nanos"] - r["clock_offset_nanos"] for r in ok)
        plan_to_last = (last_result - report["started_unix_nanos"]) / 1e9
        busy_rss = statistics.median(rss_kib(p.pid) for p in agents.procs)
    finally:
        if agents is not None:
            agents.stop()
        shutil.rmtree(base, ignore_errors=True)

    spread = (max(corrected) - min(corrected)) / 1e6 if corrected else float("nan")
    print(f"agents: {args.agents} on loopback, {len(ok)} succeeded; randio randread on a null "
          f"target, {args.runtime} s time-based; {os.cpu_count()} CPUs shared by all")
    print(f"agents started in {started_in:.1f} s (not part of the run)")
    rows = [
        ("start late, agent clock (p50 / p99 / max)",
         f"{percentile(late, 50):.2f} / {percentile(late, 99):.2f} / {max(late):.2f} ms"),
        ("start vs common instant, controller clock (p50 / p99)",
         f"{percentile(vs_instant, 50):.2f} / {percentile(vs_instant, 99):.2f} ms"),
        ("start spread across agents (max - min)", f"{spread:.2f} ms"),
        ("controller's skew figure (and its clock uncertainty)",
         f"{(phase['start_skew_nanos'] or 0) / 1e6:.2f} ms "
         f"(+- {phase['start_skew_uncertainty_nanos'] / 1e6:.2f} ms)"),
        ("controller CPU time (user + system)", f"{usage.ru_utime + usage.ru_stime:.2f} s"),
        ("controller max RSS", f"{usage.ru_maxrss / 1024:.1f} MiB"),
        ("controller wall time", f"{wall:.2f} s"),
        ("run start to last result", f"{plan_to_last:.2f} s (the phase itself: {args.runtime} s)"),
        ("idle agent RSS (median)", f"{idle_rss / 1024:.1f} MiB"),
        ("agent RSS after the run (median)", f"{busy_rss / 1024:.1f} MiB"),
    ]
    width = max(len(r[0]) for r in rows)
    print()
    print(f"| {'measure'.ljust(width)} | value |")
    print(f"| {'-' * width} | --- |")
    for name, value in rows:
        print(f"| {name.ljust(width)} | {value} |")
    if os.cpu_count() and args.agents > 50 * os.cpu_count():
        print(f"\nnote: {args.agents} agents on {os.cpu_count()} CPUs: each start instant is "
              "contended by the scheduler; the skew shows that machine, not a fleet's.")
    return 0 if len(ok) == args.agents else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runtime", type=int, default=3, help="phase seconds (default 3)")
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
