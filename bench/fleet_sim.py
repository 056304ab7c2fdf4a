#!/usr/bin/env python3
"""The controller's own cost at fleet sizes no machine could run real agents for: for each size,
starts a stormark-fleet-sim process serving that many simulated agents (one loopback port
each, bench/fleet_sim/), runs the real controller against all of them (a timed, rate-limited
randio phase on the null target, twice, each time at one instant), and prints one markdown row
per size:

  - the controller's CPU time (user + system, wait4) per phase per host, its max RSS and (in
    brackets) its RSS as the last result arrived, sampled every 20 ms from /proc like its peak
    thread count, so that what the results hold shows apart from what the reports add; the size
    of its JSON report;
  - the start lead the controller chose (its JSON's start_lead_nanos: from the start decision,
    after the clock sync that follows the barrier, to the start instant), and the start instant
    less the moment the simulator answered the phase's last Prepare (the barrier ends just
    after that, on the controller's side of the loopback), which adds that sync; and the Run
    fan-out, from the first Run the simulator received to the last;
  - each agent's start lateness against the common instant (p50 / p99), the start spread on the
    controller's clock and its clock uncertainty (as bench/scale.py), for each phase;
  - the time from the run's start (the controller's clock, in its report) to the first Prepare
    the simulator received (connects, clock syncs, the agents table), to the last agent's
    result, and from that result to the controller's exit (its reports); its wall time.

Usage: STORMARK_BIN_DIR=build/bin python3 bench/fleet_sim.py [--agents 1000,5000,10000]
       [--runtime 3] [--repeat 2] [--clock-offset-ms-spread 0] [--processes N] [--db]
       [--series-interval-ms MS] [--keep] [--perf DIR]

--series-interval-ms makes each simulated result carry a sample of its series every MS ms
instead of every second, so that a short phase carries as much as a phase 1000/MS times longer
(what the controller holds of a long phase).

--db records the run in a results database in the scratch directory, as a user's run does
(each host's row written as its result arrives); without it the controller runs with --no-db.

One simulator process serves every agent, unless RLIMIT_NOFILE's hard limit cannot hold two
descriptors per agent (a listener and the controller's connection); then the agents are split
over as few processes as fit (--processes overrides), and the note under the table says so.

The simulator and the controller share this machine's cores: the simulator's own CPU time is
printed under the table, so that a size where it, not the controller, ran out of CPU shows.
Simulated agents do no I/O; what is measured is the controller (connect, clock sync, prepare
barrier, start fan-out, heartbeats, result handling and reports) and gRPC.
"""

import argparse
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  bench/scale.py: the same phase figures and percentiles.

percentile = scale.percentile
CLK_TCK = os.sysconf("SC_CLK_TCK")


def binary(name):
    path = os.path.join(os.environ.get("STORMARK_BIN_DIR", "build/bin"), name)
    if not os.access(path, os.X_OK):
        sys.exit(f"fleet_sim.py: {path} is missing; build it or set STORMARK_BIN_DIR")
    return path


# Descriptors a simulator process needs besides two per agent (a listener and the controller's
# connection to it): gRPC's own, the files it writes.
SIM_SPARE_FDS = 256


def raise_fd_limit():
    """Soft limit to the hard one (the controller raises its own too); returns the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def processes_for(agents, hard):
    """Simulator processes the fd limit asks for: one unless a single one would run out."""
    if hard == resource.RLIM_INFINITY:
        return 1
    per_process = max(1, (hard - SIM_SPARE_FDS) // 2)
    return -(-agents // per_process)


def proc_status(pid, key):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid):
    """User + system time of a live process, from /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK
    except (OSError, IndexError, ValueError):
        return float("nan")


class PhaseFigures(scale.PhaseFigures):
    """bench/scale.py's start figures of one phase, with its start instant and id."""

    def __init__(self, phase):
        super().__init__(phase)
        self.start_at = phase["start_at_unix_nanos"]
        self.phase_id = phase["phase_id"]


class Simulator:
    """One stormark-fleet-sim process, stopped by PID. start() and ready() are separate so that
    several start at once."""

    def __init__(self, agents, base, spread_ms, index, series_interval_ms=0, lie=None, liar=0):
        self.agents = agents
        self.ports_path = os.path.join(base, f"ports-{index}")
        self.stats_path = os.path.join(base, f"sim-stats-{index}.json")
        self.err_path = os.path.join(base, f"sim-{index}.err")
        self.err = open(self.err_path, "wb")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(
            [binary("stormark-fleet-sim"), "--agents", str(agents), "--ports-file",
             self.ports_path, "--stats-file", self.stats_path, "--clock-offset-ms-spread",
             str(spread_ms)]
            + (["--series-interval-ms", str(series_interval_ms)] if series_interval_ms else [])
            + (["--lie", lie, "--liar", str(liar)] if lie else []),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.err)

    def ready(self):
        self.ready_line = self._wait_ready(deadline=self.t0 + 600)
        self.started_in = time.monotonic() - self.t0
        with open(self.ports_path) as f:
            self.ports = [int(line) for line in f if line.strip()]
        if len(self.ports) != self.agents:
            raise RuntimeError(f"simulator wrote {len(self.ports)} ports, not {self.agents}")

    def _wait_ready(self, deadline):
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        buffered = b""
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.5):
                if self.proc.poll() is not None:
                    break
                continue
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buffered += chunk
            for line in buffered.split(b"\n"):
                if line.startswith(b"ready"):
                    return line.decode()
        raise RuntimeError(f"simulator did not get ready (exit {self.proc.poll()}): "
                           f"{self.stderr_text()[-2000:]}")

    def stderr_text(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.err_path, errors="replace") as f:
            return f.read()

    def stop(self):
        """SIGTERM, then the stats it wrote (None when it did not)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self.err.close()
        try:
            with open(self.stats_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None


class Simulators:
    """`agents` simulated agents in `count` processes (more than one only when one process
    would run out of descriptors), their ports in one list."""

    def __init__(self, agents, count, base, spread_ms, series_interval_ms=0):
        self.sims = []
        try:
            for i in range(count):
                share = agents // count + (1 if i < agents % count else 0)
                self.sims.append(Simulator(share, base, spread_ms, i, series_interval_ms))
            for sim in self.sims:
                sim.ready()
        except BaseException:
            self.stop()
            raise
        self.ports = [port for sim in self.sims for port in sim.ports]
        self.started_in = max(sim.started_in for sim in self.sims)

    def pids(self):
        return [sim.proc.pid for sim in self.sims]

    def stderr_text(self):
        return "".join(sim.stderr_text() for sim in self.sims)

    def stop(self):
        """Stops every process; their phase logs merged by phase id (None when none wrote)."""
        merged = {}
        for sim in self.sims:
            for p in sim.stop() or []:
                m = merged.get(p["phase_id"])
                if m is None:
                    merged[p["phase_id"]] = dict(p)
                    continue
                for key in ("timer_late_max_nanos", "result_late_max_nanos"):
                    m[key] = max(m[key], p[key])
                for count, first, last in (("prepares", "first_prepare_unix_nanos",
                                            "last_prepare_unix_nanos"),
                                           ("runs", "first_run_unix_nanos",
                                            "last_run_unix_nanos")):
                    if p[count] == 0:
                        continue
                    if m[count] == 0:
                        m[first], m[last] = p[first], p[last]
                    m[first], m[last] = min(m[first], p[first]), max(m[last], p[last])
                    m[count] += p[count]
                m["runs_after_start"] += p["runs_after_start"]
        return list(merged.values()) or None


def run_controller(argv, out_path, perf_path):
    """Runs the controller to its end; its exit code, rusage, peak threads and wall time."""
    perf = None
    with open(out_path, "wb") as out:
        wall0 = time.monotonic()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        if perf_path:
            perf = subprocess.Popen(["perf", "record", "-g", "-F", "200", "-o", perf_path, "-p",
                                     str(proc.pid)],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        peak_threads = 0
        rss_samples = []  # (unix ns, KiB): to tell what the results hold from what the reports do
        while True:  # Its thread count, sampled every 20 ms, until it exits.
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid != 0:
                exited = time.time_ns()
                break
            peak_threads = max(peak_threads, proc_status(proc.pid, "Threads"))
            rss_samples.append((time.time_ns(), proc_status(proc.pid, "VmRSS")))
            time.sleep(0.02)
        wall = time.monotonic() - wall0
    if perf is not None:
        perf.send_signal(signal.SIGINT)
        perf.wait(timeout=120)
    return os.waitstatus_to_exitcode(status), usage, peak_threads, wall, exited, rss_samples


def ms(nanos):
    return nanos / 1e6


def measure(agents, args, base):
    hard = raise_fd_limit()
    processes = args.processes or processes_for(agents, hard)
    note = ""
    if processes > 1:
        note = (f"{processes} simulator processes (RLIMIT_NOFILE's hard limit {hard} holds "
                f"{(hard - SIM_SPARE_FDS) // 2} agents' descriptors per process)")
    json_path = os.path.join(base, "out.json")
    out_path = os.path.join(base, "controller.out")
    sim = None
    stats = None
    try:
        sim = Simulators(agents, processes, base, args.clock_offset_ms_spread,
                         args.series_interval_ms)
        sim_cpu0 = sum(cpu_seconds(pid) for pid in sim.pids())
        sim_rss_idle = sum(proc_status(pid, "VmRSS") for pid in sim.pids())
        argv = [binary("stormark"), "run", "--workload", "randio", "--target", "sink",
                "--set", "rw=randread", "--set", "rate_iops=200", "--set",
                f"runtime={args.runtime}s", "--set", "time_based=true", "--set", f"repeat={args.repeat}",
                "--json", json_path, "--no-progress"]
        argv += ["--db", os.path.join(base, "results.db")] if args.db else ["--no-db"]
        for port in sim.ports:
            argv += ["--agent", f"127.0.0.1:{port}"]
        perf_path = os.path.join(args.perf, f"perf-{agents}.data") if args.perf else None
        code, usage, peak_threads, wall, exited, rss_samples = run_controller(argv, out_path,
                                                                              perf_path)
        sim_cpu = sum(cpu_seconds(pid) for pid in sim.pids()) - sim_cpu0
        sim_rss = sum(proc_status(pid, "VmHWM") for pid in sim.pids())
        sim_threads = sum(proc_status(pid, "Threads") for pid in sim.pids())
    finally:
        if sim is not None:
            stats = sim.stop()
    with open(out_path, errors="replace") as f:
        output = f.read()
    report = None
    json_mib = os.path.getsize(json_path) / 2**20 if os.path.exists(json_path) else 0
    if os.path.exists(json_path):
        with open(json_path) as f:
            report = json.load(f)
    if report is None or not report.get("phases"):
        print(f"\n{agents} agents: the controller exited {code} without phases; its last lines:")
        print("\n".join(output.splitlines()[-40:]))
        print("simulator's stderr:", sim.stderr_text()[-2000:] if sim else "")
        return None
    phases = [PhaseFigures(p) for p in report["phases"]]
    by_id = {p["phase_id"]: p for p in (stats or [])}
    leads, fan_outs, runs_late = [], [], []
    for p in phases:
        s = by_id.get(p.phase_id)
        if s and s["prepares"] and s["runs"]:
            leads.append(ms(p.start_at - s["last_prepare_unix_nanos"]))
            fan_outs.append(ms(s["last_run_unix_nanos"] - s["first_run_unix_nanos"]))
            runs_late.append(s["runs_after_start"])
        else:
            leads.append(float("nan"))
            fan_outs.append(float("nan"))
            runs_late.append(-1)
    last_result = max(p.last_end for p in phases)
    # The controller's RSS as the last result arrived (the results held, before any report).
    rss_at_last = max([kib for t, kib in rss_samples if t <= last_result] or [0])
    first = by_id.get(phases[0].phase_id)
    to_first_prepare = ((first["first_prepare_unix_nanos"] - report["started_unix_nanos"]) / 1e9
                        if first and first["prepares"] else float("nan"))
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "agents": agents,
        "exit": code,
        "ok": min(p.ok for p in phases),
        "phases": phases,
        "cpu": cpu,
        "cpu_per_phase_host_us": cpu / (len(phases) * agents) * 1e6,
        "rss_mib": usage.ru_maxrss / 1024,
        "rss_at_last_result_mib": rss_at_last / 1024,
        "json_mib": json_mib,
        "threads": peak_threads,
        "leads": leads,
        "fan_outs": fan_outs,
        "runs_late": runs_late,
        "timer_late_max": [ms(by_id[p.phase_id]["timer_late_max_nanos"]) if p.phase_id in by_id
                           else float("nan") for p in phases],
        "result_late_max": [ms(by_id[p.phase_id]["result_late_max_nanos"]) if p.phase_id in by_id
                            else float("nan") for p in phases],
        "to_last": (last_result - report["started_unix_nanos"]) / 1e9,
        "to_first_prepare": to_first_prepare,
        "last_to_exit": (exited - last_result) / 1e9,
        "wall": wall,
        "sim_cpu": sim_cpu,
        "sim_rss_idle_mib": sim_rss_idle / 1024,
        "sim_rss_mib": sim_rss / 1024,
        "sim_threads": sim_threads,
        "sim_started_in": sim.started_in,
        "note": note,
        "load": os.getloadavg(),
    }


def pair(values, fmt):
    return " / ".join(fmt.format(v) for v in values)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", default="1000,5000,10000",
                        help="fleet sizes, comma-separated (default 1000,5000,10000)")
    parser.add_argument("--runtime", type=int, default=3, help="phase seconds (default 3)")
    parser.add_argument("--repeat", type=int, default=2,
                        help="phases: the same phase this many times (default 2)")
    parser.add_argument("--clock-offset-ms-spread", type=float, default=0,
                        help="simulated clocks off by up to +- half this (default 0)")
    parser.add_argument("--processes", type=int, default=0,
                        help="simulator processes (default: 1, or as many as RLIMIT_NOFILE "
                             "needs)")
    parser.add_argument("--series-interval-ms", type=int, default=0,
                        help="each sample of a result's series covers this many ms (default: a "
                             "second): a short phase carries the series of a longer one")
    parser.add_argument("--db", action="store_true",
                        help="record the run in a results database (in the scratch directory) "
                             "instead of --no-db")
    parser.add_argument("--keep", action="store_true",
                        help="keep each size's scratch directory (its results database, JSON "
                             "report and controller output) and print its path")
    parser.add_argument("--perf", metavar="DIR",
                        help="record the controller with perf record -g into DIR/perf-N.data "
                             "(perf slows it: not for the figures)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.agents.split(",") if s]
    if args.perf:
        os.makedirs(args.perf, exist_ok=True)

    rows = []
    for agents in sizes:
        base = tempfile.mkdtemp(prefix=f"stormark-fleet-sim-{agents}-", dir="/var/tmp")
        row = None
        try:
            row = measure(agents, args, base)
        except RuntimeError as e:
            print(f"\n{agents} agents: {e}")
        finally:
            # A size that did not fully succeed keeps its outputs: the controller's lines say
            # which hosts failed and why.
            if (not args.keep and row is not None and row["ok"] == agents
                    and row["exit"] == 0):
                shutil.rmtree(base, ignore_errors=True)
            else:
                print(f"\n{agents} agents: outputs kept in {base}")
        if row is not None:
            rows.append(row)
        time.sleep(2)  # Let the last run's sockets close before the next binds its ports.

    version = subprocess.run([binary("stormark"), "--version"], capture_output=True,
                             text=True).stdout.split("\n")
    print(f"\ncontroller: {binary('stormark')}, {' '.join(v for v in version[:2] if v)}")
    print(f"randio randread at 200 IOPS per agent on a simulated null target, {args.runtime} s "
          f"time-based, {args.repeat} phases"
          f"{f', a series sample every {args.series_interval_ms} ms' if args.series_interval_ms else ''}; one stormark-fleet-sim process; {os.cpu_count()} CPUs shared "
          f"by the simulator and the controller{' (perf recording)' if args.perf else ''}")
    print()
    head = ["agents", "ok", "ctl CPU / phase / host", "ctl CPU", "ctl max RSS (until the last result)", "ctl threads",
            "start lead, ms (ph 1 / 2)", "barrier end to start, ms", "Run fan-out, ms", "start late p50 / p99, ms (ph 1)",
            "(ph 2)", "start spread +- clock uncertainty, ms (ph 1)", "(ph 2)",
            "a host's clock +-, p50 / p99 / max, ms (ph 1)", "(ph 2)",
            "run start to 1st Prepare", "run start to last result", "last result to exit",
            "ctl wall", "load avg (1 min)"]
    print("| " + " | ".join(head) + " |")
    print("|" + " --- |" * len(head))
    for r in rows:
        p1, p2 = (r["phases"] + r["phases"])[:2]
        cells = [str(r["agents"]), f"{r['ok']}",
                 f"{r['cpu_per_phase_host_us']:.0f} us", f"{r['cpu']:.2f} s",
                 f"{r['rss_mib']:.0f} MiB ({r['rss_at_last_result_mib']:.0f})", str(r["threads"]),
                 pair([p.lead for p in r["phases"]], "{:.0f}"), pair(r["leads"], "{:.0f}"),
                 pair(r["fan_outs"], "{:.0f}"),
                 f"{percentile(p1.late, 50):.2f} / {percentile(p1.late, 99):.2f}",
                 f"{percentile(p2.late, 50):.2f} / {percentile(p2.late, 99):.2f}",
                 f"{p1.spread:.2f} +- {p1.uncertainty:.2f}",
                 f"{p2.spread:.2f} +- {p2.uncertainty:.2f}",
                 scale.three(p1.host_uncertainty), scale.three(p2.host_uncertainty),
                 f"{r['to_first_prepare']:.2f} s", f"{r['to_last']:.2f} s",
                 f"{r['last_to_exit']:.2f} s", f"{r['wall']:.2f} s", f"{r['load'][0]:.2f}"]
        print("| " + " | ".join(cells) + " |")
    print()
    for r in rows:
        print(f"{r['agents']} agents: controller exit {r['exit']}, JSON report "
              f"{r['json_mib']:.1f} MiB; Runs that reached the "
              f"simulator after the start instant: {pair(r['runs_late'], '{}')}; simulator: "
              f"ready in {r['sim_started_in']:.1f} s, {r['sim_cpu']:.2f} s CPU during the run, "
              f"RSS {r['sim_rss_idle_mib']:.0f} MiB idle / {r['sim_rss_mib']:.0f} MiB peak, "
              f"{r['sim_threads']} threads; its timer woke the streams at most "
              f"{pair(r['timer_late_max'], '{:.2f}')} ms late and built their results at most "
              f"{pair(r['result_late_max'], '{:.0f}')} ms after their end"
              + (f"; {r['note']}" if r["note"] else ""))
        for k, p in enumerate(r["phases"]):
            print(f"  phase {k + 1}: a host's clock sync round trip p50 / p99 / max "
                  f"{scale.three(p.host_rtt)} ms, its offset's move over the phase "
                  f"{scale.three(p.host_moved)} ms")
    print("\nctl CPU / phase / host is the controller's whole CPU time (connects, clock syncs, "
          "heartbeats, reports included) over phases x hosts. 'barrier end to start' is measured "
          "from the simulator's answer to the last Prepare, so it includes one loopback delivery. "
          "When no Run came after its start instant, start late is the simulator's own timer.")
    return 0 if rows and all(r["ok"] == r["agents"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
