"""Network namespaces, veth pairs and the servers that stormark's network targets talk to
(nbdkit, tgtd, vblade), for the integration tests of those targets.

Everything here is made with names the caller gives (unique to its process: include
os.getpid()) and registered with the test's addCleanup, so it is removed also when the test
fails: servers and agents are stopped by the PID this process started, veth pairs deleted,
namespaces deleted (which takes their nftables tables and loopback with them). Every wait is
bounded. Needs root and the tools each helper names; tests skip with `have(...)` first."""

import ctypes
import fcntl
import json
import ipaddress
import os
import re
import shutil
import signal
import subprocess
import time

import stormark_harness as h

_ANY_LISTENING = re.compile(r"stormark-agent: listening on ([0-9.]+:\d+) ")


def library_masker(soname):
    """A preexec for start_agent: the agent gets a private mount namespace of its own in which
    the file of library `soname` (in /usr/lib/x86_64-linux-gnu) is /dev/null, as on a host
    without it; the host's file is untouched. Returns (preexec, the file masked), or
    (None, the path) when there is no such file."""
    library = os.path.realpath(os.path.join("/usr/lib/x86_64-linux-gnu", soname))
    if not os.path.exists(library):
        return None, library
    libc = ctypes.CDLL(None, use_errno=True)

    def mask():
        if libc.unshare(0x00020000) != 0:  # CLONE_NEWNS
            os._exit(90)
        if libc.mount(b"none", b"/", None, 0x4000 | 0x40000, None) != 0:  # MS_REC | MS_PRIVATE
            os._exit(91)
        if libc.mount(b"/dev/null", library.encode(), None, 0x1000, None) != 0:  # MS_BIND
            os._exit(92)
    return mask, library


def have(*tools):
    """True when every tool is on PATH."""
    return all(shutil.which(tool) is not None for tool in tools)


def run(*argv, check=True):
    """Runs a setup command; with `check`, a failure fails with the command and its stderr."""
    done = subprocess.run(list(argv), capture_output=True, text=True, stdin=subprocess.DEVNULL,
                          timeout=60)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def in_netns(netns, argv):
    """`argv` run inside network namespace `netns` (None: this process's own). `ip netns exec`
    execs the program itself, so a Popen's PID is the program's."""
    return ["ip", "netns", "exec", netns] + list(argv) if netns else list(argv)


def add_netns(test, name, loopback=True):
    """Creates network namespace `name` (deleted at cleanup) with its loopback up: servers
    listening on 127.0.0.1 inside it, and agents reaching them, need it."""
    run("ip", "netns", "add", name)
    test.addCleanup(run, "ip", "netns", "del", name, check=False)
    if loopback:
        run("ip", "-n", name, "link", "set", "lo", "up")
    return name


class Veth:
    """A veth pair: `host_if` in `host_netns` (None: the root namespace) and `peer_if` moved
    to `peer_netns`. Deleted at cleanup (deleting one end deletes both)."""

    def __init__(self, test, host_if, peer_if, peer_netns, host_netns=None):
        self.host_if = host_if
        self.peer_if = peer_if
        self.host_netns = host_netns
        self.peer_netns = peer_netns
        run(*self._ip(host_netns), "link", "add", host_if, "type", "veth", "peer", "name",
            peer_if, "netns", peer_netns)
        test.addCleanup(run, *self._ip(host_netns), "link", "del", host_if, check=False)

    @staticmethod
    def _ip(netns):
        return ["ip", "-n", netns] if netns else ["ip"]

    def set_mtu(self, mtu):
        run(*self._ip(self.host_netns), "link", "set", self.host_if, "mtu", str(mtu))
        run(*self._ip(self.peer_netns), "link", "set", self.peer_if, "mtu", str(mtu))

    def up(self, host_cidr=None, peer_cidr=None):
        """Brings both ends up, with the IPv4 addresses given ("198.18.0.1/30")."""
        for netns, dev, cidr in ((self.host_netns, self.host_if, host_cidr),
                                 (self.peer_netns, self.peer_if, peer_cidr)):
            if cidr:
                run(*self._ip(netns), "addr", "add", cidr, "dev", dev)
            run(*self._ip(netns), "link", "set", dev, "up")


def free_subnet():
    """A /28 of 198.18.0.0/15 that no interface here has an address in: tried from one picked
    by this process's PID, so tests running at once take different ones."""
    benchmarking = ipaddress.ip_network("198.18.0.0/15")
    count = benchmarking.num_addresses // 16
    for i in range(count):
        subnet = ipaddress.ip_network(
            (int(benchmarking.network_address) + (os.getpid() + i) % count * 16, 28))
        if not run("ip", "-4", "-o", "addr", "show", "to", str(subnet)).stdout.strip():
            return subnet
    raise AssertionError("no free /28 in 198.18.0.0/15")


def drop_frames(test, percent, ends, ethertype="0x88a2"):
    """Drops `percent`% of the frames of `ethertype` (AoE's by default) arriving on each of
    `ends`, a list of (netns or None, device): an nftables netdev ingress rule per end, in a
    table named for this process. Returns the table's name; `nft list table netdev NAME` (in
    the end's namespace) shows the rule's counter."""
    table = f"stormark_loss_{os.getpid()}"
    for netns, dev in ends:
        nft = in_netns(netns, ["nft"])
        run(*nft, "add", "table", "netdev", table)
        test.addCleanup(run, *nft, "delete", "table", "netdev", table, check=False)
        run(*nft, "add", "chain", "netdev", table, "ingress",
            f"{{ type filter hook ingress device {dev} priority 0 ; }}")
        run(*nft, "add", "rule", "netdev", table, "ingress", "ether", "type", ethertype,
            "numgen", "random", "mod", "100", "<", str(percent), "counter", "drop")
    return table


def _server_log(test, base, name):
    log = open(os.path.join(base, name), "wb")
    test.addCleanup(log.close)
    return log


def start_nbdkit(test, *args, unix_socket=None, netns=None):
    """Starts `nbdkit -f ... ARGS` (in `netns`, if given) on a free 127.0.0.1 port, or on
    `unix_socket`, and waits until it listens; returns (process, port). Stopped by PID at
    cleanup."""
    base = test.make_dir("stormark-itest-nbdkit-")
    pidfile = os.path.join(base, "nbdkit.pid")
    port = None
    if unix_socket:
        where = ["-U", unix_socket]
    else:
        port = h.free_loopback_port()  # A fresh namespace has every port free.
        where = ["-i", "127.0.0.1", "-p", str(port)]
    log = _server_log(test, base, "nbdkit.log")
    proc = subprocess.Popen(
        in_netns(netns, ["nbdkit", "-f", "--exit-with-parent", "-P", pidfile] + where +
                 list(args)), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    test.addCleanup(h._stop_process, proc)
    deadline = time.monotonic() + 20
    while not os.path.exists(pidfile):
        if proc.poll() is not None or time.monotonic() > deadline:
            test.fail(f"nbdkit did not start: {h.read_text(log.name)}")
        time.sleep(0.05)
    return proc, port


_TGTD_RUN = "/var/run/tgtd"


def _free_tgtd_control(first):
    """The first tgtd control port from `first` whose lock file no running tgtd holds (tgtd
    keeps a lockf lock on /var/run/tgtd/socket.N.lock while it runs)."""
    for n in range(first, 32768):
        try:
            fd = os.open(os.path.join(_TGTD_RUN, f"socket.{n}.lock"), os.O_WRONLY)
        except FileNotFoundError:
            return n
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1)
            return n  # Closing the file below releases the probe's lock.
        except OSError:
            continue
        finally:
            os.close(fd)
    raise AssertionError("no free tgtd control port")


class Tgtd:
    """One tgtd (in `netns`, if given) with its own control port, holding one target with one
    file-backed LUN (LUN 1: tgt keeps LUN 0 for its controller), its portal on 127.0.0.1.
    `bsoflags` "direct" makes tgtd open the backing file with O_DIRECT."""

    def __init__(self, test, backing, chap=None, netns=None, bsoflags=None):
        self.test = test
        # tgtd takes control ports up to 32767; from the test process's own two, the first no
        # running tgtd holds. The control socket is a file in /var/run/tgtd, the same from
        # every namespace, and removed at cleanup.
        started = getattr(test, "_tgtds", 0)
        test._tgtds = started + 1
        os.makedirs(_TGTD_RUN, exist_ok=True)
        self.control = str(_free_tgtd_control(1000 + os.getpid() % 15000 * 2 + started))
        self.serving = False
        self.port = h.free_loopback_port()
        self.iqn = f"iqn.2024-01.org.stormark.test:lun{os.getpid()}"
        base = test.make_dir("stormark-itest-tgtd-")
        log = _server_log(test, base, "tgtd.log")
        self.log_path = log.name
        self.proc = subprocess.Popen(
            in_netns(netns, ["tgtd", "-f", "-C", self.control, "--iscsi",
                             f"portal=127.0.0.1:{self.port}"]),
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        test.addCleanup(self.shut_down)
        deadline = time.monotonic() + 20
        while self.adm("--mode", "sys", "--op", "show", check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                test.fail(f"tgtd did not start: {h.read_text(self.log_path)}")
            time.sleep(0.1)
        self.serving = True  # Its socket files are this tgtd's, to remove when it ends.
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "new", "--tid", "1",
                 "--targetname", self.iqn)
        self.adm("--lld", "iscsi", "--mode", "logicalunit", "--op", "new", "--tid", "1",
                 "--lun", "1", "--backing-store", backing,
                 *(["--bsoflags", bsoflags] if bsoflags else []))
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "bind", "--tid", "1",
                 "--initiator-address", "127.0.0.1")
        if chap:
            user, password = chap
            self.adm("--lld", "iscsi", "--mode", "account", "--op", "new", "--user", user,
                     "--password", password)
            self.adm("--lld", "iscsi", "--mode", "account", "--op", "bind", "--tid", "1",
                     "--user", user)
        self.uri = f"iscsi://127.0.0.1:{self.port}/{self.iqn}/1"

    def adm(self, *args, check=True):
        done = subprocess.run(["tgtadm", "-C", self.control] + list(args), capture_output=True,
                              text=True, timeout=30)
        if check:
            self.test.assertEqual(done.returncode, 0, f"tgtadm {args}: {done.stderr}")
        return done

    def shut_down(self):
        """The clean way first (offline, delete the target, delete the system); SIGKILL by PID
        only when that did not end it."""
        if self.proc.poll() is None:
            self.adm("--mode", "sys", "--op", "update", "--name", "State", "--value", "offline",
                     check=False)
            self.adm("--lld", "iscsi", "--mode", "target", "--op", "delete", "--force",
                     "--tid", "1", check=False)
            self.adm("--mode", "sys", "--op", "delete", check=False)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        h._stop_process(self.proc)
        if self.serving:
            for name in (f"socket.{self.control}", f"socket.{self.control}.lock"):
                try:
                    os.remove(os.path.join(_TGTD_RUN, name))
                except FileNotFoundError:
                    pass


def start_vblade(test, netns, interface, backing, shelf, slot, options=()):
    """Starts vblade in `netns`, serving `backing` as AoE SHELF.SLOT on `interface` (which
    must be up), with `options` ("-d": O_DIRECT), and waits until it serves; returns its
    process, stopped by PID at cleanup."""
    log = _server_log(test, test.make_dir("stormark-itest-vblade-"), "vblade.log")
    proc = subprocess.Popen(in_netns(netns, ["vblade"] + list(options) +
                                     [str(shelf), str(slot), interface, backing]),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    test.addCleanup(h._stop_process, proc)
    deadline = time.monotonic() + 10
    while "sectors" not in h.read_text(log.name):
        test.assertIsNone(proc.poll(), h.read_text(log.name))
        test.assertLess(time.monotonic(), deadline, "vblade did not start")
        time.sleep(0.02)
    return proc


def make_backing_file(path, size):
    """A sparse file of `size` bytes for a server to serve."""
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def start_agent_in_netns(test, name, netns, listen, config_text, timeout=20, extra_args=()):
    """Starts stormark-agent inside `netns`, listening on `listen` ("ADDR:PORT") with the
    agent.yaml `config_text`; waits for its listening line. Returns its harness Agent, whose
    address is the one it printed. Stopped by PID at cleanup."""
    base = test.make_dir(f"stormark-itest-{name}-")
    config = test.write_file(os.path.join(base, "agent.yaml"), config_text)
    log_path = os.path.join(base, "agent.log")
    args = ["--listen", listen, "--config", config] + list(extra_args)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(in_netns(netns, [h.binary("stormark-agent")] + args),
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                preexec_fn=h._die_with_parent)
    test.addCleanup(h._stop_process, proc)
    agent = h.Agent(name, proc, None, None, log_path, config)
    agent.address = agent.wait_for_log(_ANY_LISTENING.pattern, timeout=timeout).group(1)
    return agent


def server_killed_mid_run(test, agent, target, server, json_path, runtime="60s", settle=3,
                          wait=30):
    """Starts a time-based randread of `runtime` on `target` of `agent`, SIGKILLs `server` (a
    process this test started) after `settle` s, and waits up to `wait` s for the controller.
    Checks that the run ended with exit code 1 and no crash, its row 'failed'; returns
    (seconds from the kill to the controller's exit, that row)."""
    ctl = test.start_stormark(["run", "--agent", agent.address, "--target", target,
                               "--workload", "randio", "--set", "rw=randread",
                               "--set", "iodepth=8", "--set", f"runtime={runtime}",
                               "--set", "time_based=true", "--json", json_path,
                               "--no-progress"])
    time.sleep(settle)
    test.assertTrue(ctl.running(), ctl.stderr())
    killed = time.monotonic()
    server.send_signal(signal.SIGKILL)
    result = ctl.wait(timeout=wait)
    took = time.monotonic() - killed
    test.assert_no_crash(result)
    test.assertEqual(result.returncode, 1, result.describe())
    with open(json_path) as f:
        row = json.load(f)["phases"][0]["results"][0]
    test.assertEqual(row["status"], "failed", row)
    return took, row
