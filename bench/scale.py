#!/usr/bin/env python3
"""How the controller copes with many agents: starts N stormark-agent processes on loopback
ports of this machine (default 200), each with a null target, runs a timed, rate-limited (light) randio phase twice
on all of them (each time at one instant), and reports, for each of the two:

  - start skew across agents (the second phase starts with the lead the controller learned
    from late starts in the first): each agent's own lateness against the common start instant
    (start_late, p50/p99/max), and the spread of the actual starts on the controller's clock
    (each start corrected by that agent's measured clock offset);
  - the controller's CPU time and max RSS (wait4 on its process), its peak thread count
    (sampled), its wall time, and the time
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


def rss_kib(pid, field="VmRSS"):
    """A memory figure of /proc/PID/status in KiB: VmRSS (all resident pages), RssAnon (the
    process's own memory) or RssFile (pages of its binary and shared libraries, which the page
    cache holds and shares with every process that maps them)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def threads(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, int(round(p / 100 * (len(ordered) - 1)))))
    return ordered[k]


def three(values):
    """p50 / p99 / max of `values`, to two decimals."""
    if not values:
        return "-"
    return (f"{percentile(values, 50):.2f} / {percentile(values, 99):.2f} / "
            f"{max(values):.2f}")


class PhaseFigures:
    """Start figures of one phase of the JSON report."""

    def __init__(self, phase):
        done = [r for r in phase["results"] if r["status"] == "succeeded"]
        self.ok = len(done)
        self.late = [r["start_late_nanos"] / 1e6 for r in done] or [float("nan")]
        corrected = [r["start_unix_nanos"] - r["clock_offset_nanos"] for r in done]
        self.spread = (max(corrected) - min(corrected)) / 1e6 if corrected else float("nan")
        self.uncertainty = phase["start_skew_uncertainty_nanos"] / 1e6
        # Each host's clock for the phase: how far its offset can be off, the round trip of
        # the sync it came from, and how far it moved between the syncs around the phase.
        self.host_uncertainty = [r.get("clock_uncertainty_nanos", 0) / 1e6 for r in done]
        self.host_rtt = [r.get("clock_rtt_nanos", 0) / 1e6 for r in done]
        self.host_moved = [abs(r.get("clock_moved_nanos", 0)) / 1e6 for r in done]
        self.lead = phase.get("start_lead_nanos", 0) / 1e6
        self.last_end = max((r["end_unix_nanos"] - r["clock_offset_nanos"] for r in done),
                            default=0)


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
            self.procs.append(subprocess.Popen([agent, "--listen", "127.0.0.1:0", "--insecure",
                                                "--config", config],
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
        idle_anon = statistics.median(rss_kib(p.pid, "RssAnon") for p in agents.procs)
        idle_file = statistics.median(rss_kib(p.pid, "RssFile") for p in agents.procs)

        json_path = os.path.join(base, "out.json")
        argv = [binary("stormark"), "run", "--workload", "randio", "--target", "sink",
                "--set", "rw=randread", "--set", f"rate_iops={args.rate_iops}", "--set", f"runtime={args.runtime}s",
                "--set", "time_based=true", "--set", "repeat=2", "--json", json_path, "--no-db",
                "--no-progress"]
        for address in agents.addresses:
            argv += ["--agent", address]
        out_path = os.path.join(base, "controller.out")
        with open(out_path, "wb") as out:
            wall0 = time.monotonic()
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
            peak_threads = 0
            while True:  # Its thread count, sampled every 20 ms, until it exits.
                pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
                if pid != 0:
                    break
                peak_threads = max(peak_threads, threads(proc.pid))
                time.sleep(0.02)
            wall = time.monotonic() - wall0
        code = os.waitstatus_to_exitcode(status)
        with open(out_path, errors="replace") as f:
            output = f.read()
        if args.keep:  # The controller's output and JSON report, which the run's directory loses.
            os.makedirs(args.keep, exist_ok=True)
            for name in ("out.json", "controller.out"):
                if os.path.exists(os.path.join(base, name)):
                    shutil.copy(os.path.join(base, name), args.keep)
        if code != 0:
            print(output)
            sys.exit(f"scale.py: the controller exited {code}")
        with open(json_path) as f:
            report = json.load(f)
        phases = [PhaseFigures(p) for p in report["phases"]]
        ok = min(p.ok for p in phases)
        last_result = max(p.last_end for p in phases)
        plan_to_last = (last_result - report["started_unix_nanos"]) / 1e9
        busy_rss = statistics.median(rss_kib(p.pid) for p in agents.procs)
    finally:
        if agents is not None:
            agents.stop()
        shutil.rmtree(base, ignore_errors=True)

    load = os.getloadavg()[0]
    print(f"agents: {args.agents} on loopback, {ok} succeeded in every phase; randio randread at {args.rate_iops} IOPS on a "
          f"null target, {args.runtime} s time-based, 2 phases; {os.cpu_count()} CPUs shared by "
          f"all (load average {load:.1f} at the end)")
    print(f"agents started in {started_in:.1f} s (not part of the run)")
    rows = [("", "phase 1", "phase 2")]
    rows.append(("start late, agent clock (p50 / p99 / max), ms",
                 *[f"{percentile(p.late, 50):.2f} / {percentile(p.late, 99):.2f} / "
                   f"{max(p.late):.2f}" for p in phases]))
    rows.append(("start spread across agents, controller clock, ms",
                 *[f"{p.spread:.2f} (+- {p.uncertainty:.2f})" for p in phases]))
    rows.append(("a host's clock uncertainty (p50 / p99 / max), ms",
                 *[three(p.host_uncertainty) for p in phases]))
    rows.append(("  its sync's round trip (p50 / p99 / max), ms",
                 *[three(p.host_rtt) for p in phases]))
    rows.append(("  its offset's move over the phase (p50 / p99 / max), ms",
                 *[three(p.host_moved) for p in phases]))
    rows.append(("start lead, ms", *[f"{p.lead:.0f}" for p in phases]))
    cpu = usage.ru_utime + usage.ru_stime
    rows.append(("controller CPU time (user + system)",
                 f"{cpu:.2f} s ({cpu / len(phases) / args.agents * 1e6:.0f} us per phase per host, "
                 "connect and report included)", ""))
    rows.append(("controller max RSS", f"{usage.ru_maxrss / 1024:.1f} MiB", ""))
    rows.append(("controller threads (peak, sampled every 20 ms)", f"{peak_threads}", ""))
    rows.append(("controller wall time", f"{wall:.2f} s", ""))
    rows.append(("run start to last result",
                 f"{plan_to_last:.2f} s (phases: 2 x {args.runtime} s)", ""))
    rows.append(("idle agent RSS (median)",
                 f"{idle_rss / 1024:.1f} MiB: {idle_anon / 1024:.1f} MiB its own (anonymous), "
                 f"{idle_file / 1024:.1f} MiB binary and library pages (shared)", ""))
    rows.append(("agent RSS after the run (median)", f"{busy_rss / 1024:.1f} MiB", ""))
    print()
    for i, row in enumerate(rows):
        print("| " + " | ".join(row) + " |")
        if i == 0:
            print("| --- | --- | --- |")
    if os.cpu_count() and args.agents > 50 * os.cpu_count():
        print(f"\nnote: {args.agents} agents on {os.cpu_count()} CPUs: each start instant is "
              "contended by the scheduler; the skew shows that machine, not a fleet's.")
    return 0 if ok == args.agents else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=200)
    parser.add_argument("--runtime", type=int, default=3, help="phase seconds (default 3)")
    parser.add_argument("--rate-iops", type=int, default=200,
                        help="each agent's I/O rate (default 200); 1,000 agents at 200 IOPS keep 2 "
                             "CPUs busy, so their start contends with the phase already running")
    parser.add_argument("--keep", metavar="DIR",
                        help="copy the controller's output and JSON report into DIR")
    sys.exit(run(parser.parse_args()))


if __name__ == "__main__":
    main()
