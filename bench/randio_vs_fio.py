#!/usr/bin/env python3
"""Compares stormark's randio workload with Debian's fio on the same jobs, in the same run.

Each case runs fio and stormark alternately, REPEAT times each, on the same file or device with
the same options, and prints the median IOPS and MiB/s of both, their ratio with its spread
(the lowest and highest ratio of the runs paired in order), both tools' p50 and p99 latency
(fio's total latency, lat_percentiles=1, which is what stormark measures: submission to
completion), and each tool's CPU time per I/O (fio's usr_cpu + sys_cpu over its runtime;
stormark's agent process over the timed region). Absolute figures on a shared machine are noise;
the ratio of two tools measured side by side is the result.

fio runs at its best in every case: with io_uring, registered buffers and files (fixedbufs,
registerfiles); for the 1 MiB cases, huge-page buffers (iomem=shmhuge, as stormark's buffers
are huge pages; root reserves the pages for the run and gives them back). Both tools keep fio's
default batching, one request per call and one completion per reap, which measured best for fio
on a virtio disk: batches of 32 each way cost fewer system calls but let the queue run dry
between bursts (82,000 against 89,000 reads/s at QD32, docs/performance.md).

    python3 bench/randio_vs_fio.py [--dir /var/tmp] [--size 1G] [--runtime 5] [--repeat 3]
    python3 bench/randio_vs_fio.py --only ceiling          # cases whose name starts so

Cases:
  tmpfs QD1        4 KiB randread, psync, QD1, buffered, on a file in /dev/shm
  file QD32        4 KiB randread, io_uring, QD32, O_DIRECT, on a file in --dir
  file QD32 aio    the same with libaio
  loop QD32        4 KiB randread, io_uring, QD32, O_DIRECT, on a loop device over a file in
                   --dir (attached here, detached after; needs root; skipped otherwise)
  loop QD32 aio    the same with libaio
  seq read 1M      1 MiB sequential read, psync, O_DIRECT, on the file in --dir
  seq write 1M     1 MiB sequential write, psync, O_DIRECT, on the file in --dir
  ceiling          4 KiB randread QD1 on stormark's null device vs fio's null engine: what each
                   tool costs per I/O, with no storage at all

The last column checks both tools against the kernel: the I/Os the device (or the disk under the
file) completed during each run, from /proc/diskstats, as a share of the I/Os the tool reported
(counting the ramp). Near 1.00 means the tool's figure is real device I/O.

Both tools use the same pre-written files (random data), used in place: stormark through
`block:` targets of one agent started here, fio with filename=. Every run is time based, after
a 1 s ramp that neither tool counts.
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
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, HERE)
from benchlib import parse_size  # noqa: E402
BIN = os.environ.get("STORMARK_BIN_DIR", os.path.join(HERE, "..", "build", "bin"))
NR_HUGEPAGES = "/proc/sys/vm/nr_hugepages"


def make_file(path, size):
    """A file of `size` random bytes (incompressible), written once and flushed."""
    chunk = os.urandom(1 << 20)
    with open(path, "wb") as f:
        for _ in range(size // len(chunk)):
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())


class Agent:
    """One stormark-agent on 127.0.0.1, with a block target per case."""

    def __init__(self, workdir, targets):
        config = os.path.join(workdir, "agent.yaml")
        with open(config, "w") as f:
            f.write("targets:\n")
            for name, body in targets.items():
                f.write(f"  {name}: {body}\n")
        self.log_path = os.path.join(workdir, "agent.log")
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [os.path.join(BIN, "stormark-agent"), "--listen", "127.0.0.1:0", "--insecure",
             "--config", config],
            stdout=self.log, stderr=self.log, stdin=subprocess.DEVNULL)
        deadline = time.time() + 20
        self.address = None
        while time.time() < deadline and self.address is None:
            time.sleep(0.1)
            m = re.search(r"listening on (127\.0\.0\.1:\d+)", open(self.log_path).read())
            if m:
                self.address = m.group(1)
        if self.address is None:
            self.stop()
            sys.exit(f"stormark-agent did not start:\n{open(self.log_path).read()}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=15)
        self.log.close()


def stormark(agent, workdir, target, options):
    report = os.path.join(workdir, "report.json")
    argv = [os.path.join(BIN, "stormark"), "run", "--agent", agent.address, "--target", target,
            "--workload", "randio", "--no-progress", "--json", report]
    for key, value in options.items():
        argv += ["--set", f"{key}={value}"]
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"stormark failed:\n{done.stdout}\n{done.stderr}")
    with open(report) as f:
        row = json.load(f)["phases"][0]["results"][0]
    os.unlink(report)
    op = next(m for m in row["measurements"] if m["name"] in ("read", "write"))
    cpu = row["cpu_user_nanos"] + row["cpu_system_nanos"]
    return {"iops": op["ops_per_second"], "bw": op["bytes_per_second"],
            "p50": op["latency"]["p50"], "p99": op["latency"]["p99"],
            "cpu": cpu / max(1, row["ops"])}


def fio(filename, options):
    argv = ["fio", "--name=bench", "--output-format=json", "--lat_percentiles=1",
            "--percentile_list=50:99"]
    if filename:
        argv.append(f"--filename={filename}")
    for key, value in options.items():
        argv.append(f"--{key}={value}")
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"fio failed:\n{done.stdout}\n{done.stderr}")
    job = json.loads(done.stdout[done.stdout.index("{"):])["jobs"][0]
    side = job["read"] if job["read"]["io_bytes"] > 0 else job["write"]
    pct = side["lat_ns"]["percentile"]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    cpu = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1e6  # ns
    return {"iops": side["iops"], "bw": side["bw_bytes"], "p50": pct["50.000000"],
            "p99": pct["99.000000"], "cpu": cpu / max(1, ios)}


def device_name(path):
    """The kernel's name of the block device `path` is, or lives on ("vda", "loop3")."""
    st = os.stat(path)
    dev = st.st_rdev if (st.st_mode & 0o170000) == 0o060000 else st.st_dev
    sys_path = f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}"
    return os.path.basename(os.path.realpath(sys_path)) if os.path.exists(sys_path) else None


def device_ios(name):
    """Reads plus writes the device has completed so far (/proc/diskstats)."""
    with open("/proc/diskstats") as f:
        for line in f:
            fields = line.split()
            if fields[2] == name:
                return int(fields[3]) + int(fields[7])
    return None


def timed(run, device, seconds):
    """Runs `run()`, and adds what share of the I/Os it reports the device really completed:
    device completions during the run / (reported IOPS x the run's length with its ramp).
    Near 1 means the figure is real I/O; far below means a cache answered."""
    before = device_ios(device) if device else None
    figures = run()
    if before is not None:
        done = device_ios(device) - before
        figures["device"] = done / max(1.0, figures["iops"] * seconds)
    return figures


def us(nanos):
    return f"{nanos / 1000:.2f}" if nanos < 10000 else f"{nanos / 1000:.1f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", default="/var/tmp")
    parser.add_argument("--size", default="1G")
    parser.add_argument("--runtime", type=int, default=5, help="seconds per run, after the ramp")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", help="run only the cases whose name starts with this")
    parser.add_argument("--settle", type=float, default=1.0,
                        help="seconds to pause before every measured run")
    args = parser.parse_args()
    if not shutil.which("fio"):
        sys.exit("fio is not installed (apt-get install fio, or make deps)")
    size = parse_size(args.size)

    workdir = tempfile.mkdtemp(prefix="stormark-fio-", dir=args.dir)
    shm_dir = tempfile.mkdtemp(prefix="stormark-fio-", dir="/dev/shm")
    disk_file = os.path.join(workdir, "disk.img")
    shm_file = os.path.join(shm_dir, "shm.img")
    loop = None
    agent = None
    hugepages_before = None
    hugepages = False
    try:
        if os.geteuid() == 0 and os.path.exists(NR_HUGEPAGES):
            # fio's iomem=shmhuge takes reserved huge pages: 16 MiB more, given back after.
            hugepages_before = int(open(NR_HUGEPAGES).read())
            with open(NR_HUGEPAGES, "w") as f:
                f.write(str(hugepages_before + 8))
            hugepages = int(open(NR_HUGEPAGES).read()) >= hugepages_before + 8
        make_file(disk_file, size)
        make_file(shm_file, min(size, 512 << 20))
        if os.geteuid() == 0 and shutil.which("losetup"):
            loop_file = os.path.join(workdir, "loop.img")
            make_file(loop_file, size)
            loop = subprocess.run(["losetup", "-f", "--show", "--direct-io=on", loop_file],
                                  capture_output=True, text=True, check=True).stdout.strip()
        targets = {"shm": f"{{block: {shm_file}}}",
                   "file": f"{{block: {disk_file}, disposable: true}}",
                   "sink": "{null: true}"}
        if loop:
            targets["loop"] = f"{{block: {loop}}}"
        agent = Agent(workdir, targets)

        rt = {"runtime": f"{args.runtime}s", "time_based": "true", "ramp_time": "1s"}
        fio_rt = {"runtime": str(args.runtime), "time_based": "1", "ramp_time": "1"}

        def case(name, target, path, opts, fio_extra=None):
            """Common options in stormark's spelling, translated for fio."""
            fopts = dict(fio_rt)
            for key, value in opts.items():
                fopts[{"engine": "ioengine"}.get(key, key)] = {"true": "1"}.get(value, value)
            fopts.update(fio_extra or {})
            return name, target, path, {**opts, **rt}, fopts

        small = min(size, 512 << 20)
        # fio at its best: registered files and buffers (stormark's io_uring registers both).
        # Batching stays at fio's default in both tools (see the docstring); libaio's
        # userspace_reap works only with iodepth_batch_complete_min=0, so it is not given.
        uring_best = {"fixedbufs": "1", "registerfiles": "1"}
        huge = {"iomem": "shmhuge"} if hugepages else {}
        qd32 = {"rw": "randread", "bs": "4k", "iodepth": "32", "direct": "true",
                "size": str(size)}
        cases = [
            case("tmpfs QD1", "shm", shm_file,
                 {"rw": "randread", "bs": "4k", "iodepth": "1", "engine": "psync",
                  "size": str(small)}),
            case("file QD32", "file", disk_file, {**qd32, "engine": "io_uring"}, uring_best),
            case("file QD32 aio", "file", disk_file, {**qd32, "engine": "libaio"}),
        ]
        if loop:
            cases += [
                case("loop QD32", "loop", loop, {**qd32, "engine": "io_uring"}, uring_best),
                case("loop QD32 aio", "loop", loop, {**qd32, "engine": "libaio"}),
            ]
        cases += [
            case("seq read 1M", "file", disk_file,
                 {"rw": "read", "bs": "1M", "iodepth": "1", "engine": "psync", "direct": "true",
                  "size": str(size)}, huge),
            case("seq write 1M", "file", disk_file,
                 {"rw": "write", "bs": "1M", "iodepth": "1", "engine": "psync",
                  "direct": "true", "size": str(size)}, huge),
            case("ceiling", "sink", None,
                 {"rw": "randread", "bs": "4k", "iodepth": "1", "size": "1G"},
                 {"ioengine": "null"}),
        ]
        print(f"randio vs fio {run_version('fio')}: median of {args.repeat} alternating runs, "
              f"{args.runtime} s each after a 1 s ramp; {args.size} files in {args.dir}")
        if not hugepages:
            print("fio's 1 MiB cases run without huge pages (reserving them needs root)")
        header = (f"{'case':<14}{'fio IOPS':>11}{'stormark IOPS':>15}{'ratio':>7}"
                  f"{'spread':>12}{'fio MiB/s':>11}{'sm MiB/s':>10}"
                  f"{'fio p50/p99 us':>18}{'sm p50/p99 us':>17}{'CPU/IO fio/sm us':>18}"
                  f"{'device fio/sm':>15}")
        print(header)
        for name, target, path, sm_opts, fio_opts in cases:
            if args.only and not name.startswith(args.only):
                continue
            device = device_name(path) if path and not path.startswith(shm_dir) else None
            seconds = args.runtime + 1
            f_runs, s_runs = [], []
            for _ in range(args.repeat):
                time.sleep(args.settle)
                f_runs.append(timed(lambda: fio(path, fio_opts), device, seconds))
                time.sleep(args.settle)
                s_runs.append(timed(lambda: stormark(agent, workdir, target, sm_opts), device,
                                    seconds))
            med = lambda runs, key: statistics.median(r[key] for r in runs)  # noqa: E731
            f_iops, s_iops = med(f_runs, "iops"), med(s_runs, "iops")
            ratios = [s["iops"] / f["iops"] for f, s in zip(f_runs, s_runs)]
            spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
            cpu = f"{med(f_runs, 'cpu') / 1000:.2f}/{med(s_runs, 'cpu') / 1000:.2f}"
            print(f"{name:<14}{f_iops:>11.0f}{s_iops:>15.0f}{s_iops / f_iops:>7.2f}"
                  f"{spread:>12}"
                  f"{med(f_runs, 'bw') / 2**20:>11.1f}{med(s_runs, 'bw') / 2**20:>10.1f}"
                  f"{us(med(f_runs, 'p50')) + '/' + us(med(f_runs, 'p99')):>18}"
                  f"{us(med(s_runs, 'p50')) + '/' + us(med(s_runs, 'p99')):>17}"
                  f"{cpu:>18}{device_share(f_runs, s_runs):>15}", flush=True)
    finally:
        if hugepages_before is not None:
            with open(NR_HUGEPAGES, "w") as f:
                f.write(str(hugepages_before))
        if agent:
            agent.stop()
        if loop:
            subprocess.run(["losetup", "-d", loop], capture_output=True)
        shutil.rmtree(workdir, ignore_errors=True)
        shutil.rmtree(shm_dir, ignore_errors=True)


def device_share(f_runs, s_runs):
    if "device" not in f_runs[0]:
        return "-"
    med = lambda runs: statistics.median(r["device"] for r in runs)  # noqa: E731
    return f"{med(f_runs):.2f}/{med(s_runs):.2f}"


def run_version(tool):
    done = subprocess.run([tool, "--version"], capture_output=True, text=True)
    return done.stdout.strip()


if __name__ == "__main__":
    main()
