"""Shared pieces of stormark's multi-process integration tests.

The tests run the real binaries: `stormark-agent` processes listening on loopback ports (plain
text, so with --insecure, unless their config has tls) or on unix sockets in the test's own
directories, and `stormark` controllers talking to them. StormarkTestCase starts every process
and temporary directory through addCleanup, so each is torn down even when a test fails: processes are
stopped by the PID this harness started (SIGTERM, then SIGKILL), and directories are removed.

The binaries come from $STORMARK_BIN_DIR (CTest sets it). Every wait is bounded.
"""

import ctypes
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

# The exit status of a suite none of whose tests could run; CTest shows it as "Skipped"
# (SKIP_RETURN_CODE in tests/integration/CMakeLists.txt), never as "Passed".
SKIP_RETURN_CODE = 77

# A skip for a circumstance of the host that no CI can promise (the kernel's timing, the size of
# its RAM) starts its reason with this (skip_for_host). Any other skip says the test lacks
# something: under STORMARK_CI_CAPABILITIES, where CI has declared it has everything the tests
# need, such a skip fails the suite instead.
HOST_SKIP_PREFIX = "this host: "

# Temporary directories go here, not /tmp: /tmp may be tmpfs, which measures memory.
TEMP_ROOT = "/var/tmp"

# Text that means a process crashed or leaked an exception instead of reporting an error.
CRASH_TEXT = ("Traceback", "terminate called", "Aborted", "Segmentation fault", "core dumped",
              "internal error", "AddressSanitizer", "runtime error:")

_LISTENING = re.compile(r"stormark-agent: listening on (127\.0\.0\.1:(\d+)|unix:\S+) ")
_PR_SET_PDEATHSIG = 1
_LIBC = ctypes.CDLL(None, use_errno=True)  # Loaded here: the child after fork only calls it.


def bin_dir():
    path = os.environ.get("STORMARK_BIN_DIR")
    if not path:
        raise RuntimeError("set STORMARK_BIN_DIR to the directory holding stormark and "
                           "stormark-agent (e.g. build/bin)")
    # Absolute: a guest of the lab reaches the build through the host's root, from /.
    return os.path.abspath(path)


def binary(name):
    path = os.path.join(bin_dir(), name)
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"{path} is missing or not executable; build it first")
    return path


def _die_with_parent():
    """Runs in the child before exec: if this test process dies (a CTest timeout kills it),
    the child gets SIGTERM instead of living on as an orphan holding a port."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def _stop_process(proc, grace_seconds=10):
    """Stops a process this harness started: SIGTERM, then SIGKILL. Bounded."""
    if proc.poll() is None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        except ProcessLookupError:
            pass
    # Reaped above, or earlier by the test.
    proc.poll()


def closed_loopback_port():
    """A loopback port nothing listens on (just released by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def insecure_unless_tls(config_text):
    """The flag a plain-text TCP agent needs: ["--insecure"], or [] when `config_text` (an
    agent.yaml) sets up mutual TLS."""
    return [] if re.search(r"^tls:", config_text, re.M) else ["--insecure"]


def read_text(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return ""


class Agent:
    """A stormark-agent process started by the harness, serving one target 'scratch'."""

    def __init__(self, name, proc, address, target_dir, log_path, config_path):
        self.name = name
        self.proc = proc
        self.address = address  # "127.0.0.1:PORT", the label the controller prints
        self.target_dir = target_dir
        self.log_path = log_path
        self.config_path = config_path

    @property
    def pid(self):
        return self.proc.pid

    def log(self):
        return read_text(self.log_path)

    def wait_for_log(self, pattern, timeout=30):
        """Waits until the agent's stderr matches `pattern`; returns the match."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            match = regex.search(self.log())
            if match:
                return match
            if self.proc.poll() is not None:
                raise AssertionError(f"agent {self.name} exited ({self.proc.returncode}) before "
                                     f"logging /{pattern}/; its log:\n{self.log()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"agent {self.name} did not log /{pattern}/ within "
                                     f"{timeout} s; its log:\n{self.log()}")
            time.sleep(0.02)

    def send_signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout=30):
        """Waits for the agent to exit; returns its exit code."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"agent {self.name} still running after {timeout} s; its log:\n"
                                 f"{self.log()}") from None

    def stop(self):
        _stop_process(self.proc)

    def phase_dirs(self):
        """The .stormark-* directories left in the target."""
        return [n for n in os.listdir(self.target_dir) if n.startswith(".stormark-")]


class Result:
    """How a finished controller run ended."""

    def __init__(self, args, returncode, stdout, stderr):
        self.args = args
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr

    def describe(self):
        return (f"command: {' '.join(self.args)}\nexit code: {self.returncode}\n"
                f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}---")


class Controller:
    """A `stormark` process running in the background, its output going to files."""

    def __init__(self, args, proc, stdout_path, stderr_path):
        self.args = args
        self.proc = proc
        self.stdout_path = stdout_path
        self.stderr_path = stderr_path

    def stdout(self):
        return read_text(self.stdout_path)

    def stderr(self):
        return read_text(self.stderr_path)

    def running(self):
        return self.proc.poll() is None

    def wait(self, timeout=120):
        """Waits for the controller to exit; returns its Result."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _stop_process(self.proc)
            raise AssertionError(f"stormark still running after {timeout} s:\n"
                                 f"{Result(self.args, None, self.stdout(), self.stderr()).describe()}"
                                 ) from None
        return Result(self.args, code, self.stdout(), self.stderr())

    def stop(self):
        _stop_process(self.proc)


def phase_tables(stdout):
    """The per-phase tables of the controller's stdout: a list of
    {"title": "Phase 1/2  seq-write: ...", "rows": [line, ...], "notes": [line, ...]}."""
    phases = []
    current = None
    in_table = False
    for line in stdout.splitlines():
        if line.startswith("Phase "):
            current = {"title": line, "rows": [], "notes": []}
            phases.append(current)
            in_table = False
            continue
        if current is None:
            continue
        if line.startswith("  host ") and "MiB/s" in line:
            in_table = True
            continue
        if not line.strip():
            in_table = False
            continue
        if in_table:
            current["rows"].append(line)
        elif line.startswith("  * ") or line.startswith("  x "):
            current["notes"].append(line)
        elif not line.startswith("  "):
            current = None  # "JSON report: ..." and such end the phase's text.
    return phases


def rows_for(table, host):
    """The table rows whose host column is `host`."""
    return [r for r in table["rows"] if r.strip() == host or r.strip().startswith(host + " ")]


# The labels the tables' via column shows (controller/report/environment.cc).
TRANSPORTS = ("local", "AoE", "iSCSI", "NBD", "FC", "USB", "NFS", "SMB", "NVMe-oF")


def parse_row(row, host):
    """Splits a table row into {"target", "mibps", "status"}. mibps is None for a row without
    figures ("-"). The status is the last column ("ok", "ERROR", "2 hosts", ...)."""
    rest = row.strip()[len(host):].split()
    # The mark of a row whose settings differ, and the via column, come before the target.
    if rest and rest[0] == "!":
        rest = rest[1:]
    if (len(rest) > 1 and (rest[0] in TRANSPORTS or rest[0] == "-") and rest[1] != "-"
            and not _is_number(rest[1])):
        rest = rest[1:]
    status = rest[-1]
    if len(rest) >= 2 and rest[-1] in ("host", "hosts"):
        status = " ".join(rest[-2:])
    target = rest[0] if rest[0] != "-" and not _is_number(rest[0]) else ""
    figures = rest[1:] if target else rest
    mibps = float(figures[0]) if figures and _is_number(figures[0]) else None
    return {"target": target, "mibps": mibps, "status": status}


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


class StormarkTestCase(unittest.TestCase):
    """Base for the integration tests: starts processes and directories, always tears down."""

    maxDiff = None

    def make_dir(self, prefix="stormark-itest-"):
        """A fresh directory under /var/tmp, removed after the test."""
        path = tempfile.mkdtemp(prefix=prefix, dir=TEMP_ROOT)
        self.addCleanup(shutil.rmtree, path, ignore_errors=True)
        return path

    def write_file(self, path, text):
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def start_agent(self, name="agent", timeout=20, extra_targets="", extra_config="",
                    unix=False, preexec=None, env=None):
        """Starts stormark-agent on 127.0.0.1:0 (or, with `unix`, on the socket BASE/agent.sock)
        with one target 'scratch' in a fresh directory (plus `extra_targets`, YAML lines
        indented under 'targets:', where "$BASE" stands for the agent's own temporary
        directory), and waits for its listening line. `extra_config` is appended to its
        agent.yaml. Plain-text TCP is for labs, and these tests are one: without tls in the
        config, a TCP agent gets --insecure. `preexec`, if given, runs in the child before the
        agent is executed (to move it into a cgroup, say). `env` adds variables to the agent's
        environment."""
        base = self.make_dir(f"stormark-itest-{name}-")
        target_dir = os.path.join(base, "target")
        os.mkdir(target_dir)
        config = self.write_file(os.path.join(base, "agent.yaml"),
                                 f"targets:\n  scratch:\n    dir: {target_dir}\n" +
                                 extra_targets.replace("$BASE", base) + extra_config)
        log_path = os.path.join(base, "agent.log")
        if unix:
            args = ["--listen", f"unix:{base}/agent.sock"]
        else:
            args = ["--listen", "127.0.0.1:0"] + insecure_unless_tls(read_text(config))
        agent = self.start_agent_process(args + ["--config", config],
                                         log_path, name=name, target_dir=target_dir,
                                         preexec=preexec, env=env)
        match = agent.wait_for_log(_LISTENING.pattern, timeout=timeout)
        agent.address = match.group(1)
        return agent

    def start_agent_process(self, args, log_path, name="agent", target_dir=None, preexec=None,
                            env=None):
        """Starts `stormark-agent ARGS` with its output going to `log_path`; stopped (by PID)
        at cleanup. Returns its Agent, whose address is not known yet."""
        def before_exec():
            _die_with_parent()
            if preexec is not None:
                preexec()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen([binary("stormark-agent")] + list(args),
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                    preexec_fn=before_exec,
                                    env=None if env is None else {**os.environ, **env})
        # Registered after the directory's cleanup, so it runs first: stop, then remove.
        self.addCleanup(_stop_process, proc)
        config = args[args.index("--config") + 1] if "--config" in args else None
        return Agent(name, proc, None, target_dir, log_path, config)

    def default_results_db(self):
        """The results database the controllers of this test write when given no --db."""
        self._controller_env(None)
        return os.path.join(self._data_home, "stormark", "results.db")

    def _controller_env(self, env):
        full = dict(os.environ)
        # Every controller records its runs in a results database; by default under
        # $XDG_DATA_HOME. A test's runs go to its own one, never to the user's.
        if not hasattr(self, "_data_home"):
            self._data_home = self.make_dir("stormark-itest-data-home-")
        full["XDG_DATA_HOME"] = self._data_home
        if env:
            full.update(env)
        return full

    def run_stormark(self, args, timeout=120, env=None):
        """Runs `stormark ARGS` to the end; returns its Result. Fails the test on a timeout."""
        argv = [binary("stormark")] + list(args)
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", timeout=timeout,
                                  env=self._controller_env(env), preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired as e:  # subprocess.run has killed it.
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
            self.fail(f"stormark did not finish within {timeout} s:\n"
                      f"{Result(argv, None, out or '', err or '').describe()}")
        return Result(argv, done.returncode, done.stdout, done.stderr)

    def start_stormark(self, args, env=None):
        """Starts `stormark ARGS` in the background; returns its Controller."""
        base = self.make_dir("stormark-itest-ctl-")
        argv = [binary("stormark")] + list(args)
        out_path = os.path.join(base, "stdout")
        err_path = os.path.join(base, "stderr")
        with open(out_path, "wb") as out, open(err_path, "wb") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=self._controller_env(env), preexec_fn=_die_with_parent)
        self.addCleanup(_stop_process, proc)
        return Controller(argv, proc, out_path, err_path)

    def run_agent_binary(self, args, timeout=20):
        """Runs `stormark-agent ARGS`, expected to exit by itself (a refused start)."""
        argv = [binary("stormark-agent")] + list(args)
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                  errors="replace", timeout=timeout, preexec_fn=_die_with_parent)
        except subprocess.TimeoutExpired:  # subprocess.run has killed it.
            self.fail(f"stormark-agent kept running for {timeout} s: {' '.join(argv)}")
        return Result(argv, done.returncode, done.stdout, done.stderr)

    def run_randio(self, agent, target, json_path, *sets, expect=0, timeout=120):
        """Runs one randio phase on `target` of `agent` with `--set` options `sets`, expecting
        exit code `expect`; returns (Result, the phase's one result row, the whole report)."""
        args = ["run", "--agent", agent.address, "--target", target, "--workload", "randio",
                "--json", json_path, "--no-progress"]
        for s in sets:
            args += ["--set", s]
        result = self.run_stormark(args, timeout=timeout)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        report = self.load_json(json_path)
        return result, report["phases"][0]["results"][0], report

    def load_json(self, path):
        self.assertTrue(os.path.exists(path), f"no JSON report at {path}")
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        self.assertEqual(report.get("schema"), "stormark.run/1")
        return report

    def result_for(self, phase, host):
        """The one result of `phase` whose host is `host`."""
        matches = [r for r in phase["results"] if r["host"] == host]
        self.assertEqual(len(matches), 1,
                         f"expected one result for {host}, got hosts "
                         f"{[r['host'] for r in phase['results']]}")
        return matches[0]

    def assert_no_crash(self, result):
        for text in CRASH_TEXT:
            self.assertNotIn(text, result.stdout + result.stderr, result.describe())
        # A negative code is a death by signal, never a reported error.
        self.assertIsNotNone(result.returncode)
        self.assertGreaterEqual(result.returncode, 0, result.describe())

    def assert_succeeded_result(self, phase, result, size_bytes):
        """A host's result moved exactly `size_bytes` and its figures agree with each other."""
        self.assertEqual(result["status"], "succeeded", result)
        self.assertEqual(result["error"], "")
        self.assertEqual(result["bytes"], size_bytes)
        workload = phase["workload"]
        self.assertEqual(workload["size_bytes"], size_bytes)
        # One op per block, plus the timed fdatasync of a synced write.
        ops = size_bytes // workload["block_size"] + (1 if workload["fdatasync"] else 0)
        self.assertEqual(result["ops"], ops)
        self.assertGreater(result["elapsed_seconds"], 0)
        self.assertAlmostEqual(result["bytes_per_second"],
                               result["bytes"] / result["elapsed_seconds"],
                               delta=result["bytes_per_second"] * 1e-6)
        latency = result["latency"]
        self.assertEqual(latency["count"], result["ops"])
        self.assertEqual(sum(latency["buckets"]["count"]), latency["count"])
        self.assertLessEqual(latency["p50"], latency["p99"])
        self.assertLessEqual(latency["p99"], latency["max"])
        series = result["series"]
        self.assertTrue(series, "a succeeded result has a time series")
        self.assertEqual(sum(s["bytes"] for s in series), result["bytes"])
        self.assertEqual(sum(s["ops"] for s in series), result["ops"])
        for s in series:
            self.assertEqual(s["host"], result["host"])
        offsets = [s["offset_nanos"] for s in series]
        self.assertEqual(offsets, sorted(offsets))


def free_loopback_port():
    """A loopback port free right now, for a server a test starts (it may race with another
    process taking it; the server then fails to start and the test says so)."""
    return closed_loopback_port()


_CRC32C_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC32C_TABLE.append(_c)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC32C_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def check_verify_stamps(path, size, unit=4096, crc_samples=64):
    """Reads a file that randio with verify=true wrote in full (its region [0, size)) and
    returns a list of problems (empty when fine): every unit must carry randio's header
    ("SMV1", its own offset, one run salt), and a sample of units must pass their CRC32C.
    This checks the bytes that reached the server's backing store, independently of the
    agent's own read-back."""
    import random
    problems = []
    salts = set()
    sampled = set(random.Random(size).sample(range(size // unit), min(crc_samples, size // unit)))
    with open(path, "rb") as f:
        for index in range(size // unit):
            block = f.read(unit)
            offset = index * unit
            if len(block) < unit:
                problems.append(f"file ends at {offset}")
                break
            if block[:4] != b"SMV1":
                problems.append(f"unit at {offset}: no verify header")
            elif int.from_bytes(block[8:16], "little") != offset:
                problems.append(f"unit at {offset}: header names offset "
                                f"{int.from_bytes(block[8:16], 'little')}")
            else:
                salts.add(block[16:20])
                if index in sampled and crc32c(block[8:]) != int.from_bytes(block[4:8], "little"):
                    problems.append(f"unit at {offset}: CRC32C mismatch")
            if len(problems) > 5:
                break
    if len(salts) > 1:
        problems.append(f"{len(salts)} different run salts: not all units are from this run")
    return problems


class LoopAgent:
    """An agent started by start_loop_agent, with the loop device under its target."""

    def __init__(self, agent, device, image, mount_point):
        self.agent = agent
        self.device = device          # /dev/loopN, made by this test.
        self.image = image            # The file behind it.
        self.mount_point = mount_point


def start_loop_agent(test, name, extra_config="", size=64 << 20, device=True):
    """Starts an agent whose target 'scratch' is ext4 on a fresh loop device of `size` bytes
    that `test` (a StormarkTestCase) makes, and returns its LoopAgent. The device's path is
    also written to BASE/device, beside the mount point BASE/mnt, for setup hooks. The
    target's `device:` names that device when `device` is True, the device `device` names
    when it is a string, and is left out when it is None.
    `extra_config` is appended to its agent.yaml. Cleanup stops the agent, unmounts (also
    whatever hooks mounted below it), detaches the device and removes the image. Needs root."""
    base = test.make_dir(f"stormark-itest-loop-{name}-")
    image = os.path.join(base, "disk.img")
    with open(image, "wb") as f:
        f.truncate(size)  # Sparse: only what the test writes takes space.

    def run(*argv):
        return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()

    loop_device = run("losetup", "-f", "--show", image)
    test.addCleanup(subprocess.run, ["losetup", "-d", loop_device], capture_output=True)
    mnt = os.path.join(base, "mnt")
    os.mkdir(mnt)
    # Inode tables and journal initialised now: no lazy init writes to the device later, under
    # a test that counts what reached it.
    run("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", loop_device)
    run("mount", loop_device, mnt)
    # Registered after the detach, so it runs before it.
    test.addCleanup(subprocess.run, ["umount", "-R", "-l", mnt], capture_output=True)
    test.write_file(os.path.join(base, "device"), loop_device)
    device_line = ("" if device is None else
                   f"    device: {loop_device if device is True else device}\n")
    config = test.write_file(os.path.join(base, "agent.yaml"),
                             f"targets:\n  scratch:\n    dir: {mnt}\n{device_line}" + extra_config)
    agent = test.start_agent_process(["--listen", "127.0.0.1:0", "--insecure", "--config", config],
                                     os.path.join(base, "agent.log"), name=name, target_dir=mnt)
    agent.address = agent.wait_for_log(_LISTENING.pattern).group(1)
    return LoopAgent(agent, loop_device, image, mnt)


def main():
    """Runs the calling file's tests, as unittest.main() does, and exits 1 if any failed, 0 if
    any passed, and SKIP_RETURN_CODE if every test was skipped (a skipped class or module
    counts as its tests). A partial skip passes; unittest prints each skip and its reason."""
    program = unittest.main(exit=False)
    result = program.result
    if not result.wasSuccessful():
        sys.exit(1)
    declared = os.environ.get("STORMARK_CI_CAPABILITIES", "")
    lacking = sorted({reason for _, reason in result.skipped
                      if not reason.startswith(HOST_SKIP_PREFIX)})
    if declared and lacking:
        print(f"skipped although CI declares {declared}: {'; '.join(lacking)}", file=sys.stderr)
        sys.exit(1)
    ran = result.testsRun - len(result.skipped)
    if ran <= 0:
        reasons = sorted({reason for _, reason in result.skipped})
        print(f"every test skipped: {'; '.join(reasons)}", file=sys.stderr)
        sys.exit(SKIP_RETURN_CODE)
    sys.exit(0)


def skip_for_host(test, reason):
    """Skips `test` for a circumstance of this host that CI cannot promise either (see
    HOST_SKIP_PREFIX); a missing tool or privilege is a plain skip, which CI refuses."""
    test.skipTest(HOST_SKIP_PREFIX + reason)
