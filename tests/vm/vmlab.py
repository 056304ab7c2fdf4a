"""A small lab of real kernels: boots Debian's own kernel (linux-image-amd64) under qemu as guest
hosts that run the project's agent from the build tree.

A guest is the host's kernel package booted with a busybox initramfs that this module builds
(and caches by content under /var/tmp/stormark-vm-cache). Its /init loads the modules it needs,
mounts the host's root read-only over virtio-9p at /host, puts fresh proc, sys, dev and tmpfs
mounts under it, brings up the network and runs the test's own script, in which `chroot /host`
runs any host binary, the agent included. So a guest needs no root filesystem of its own, and
runs exactly the binaries the test just built.

Each guest gets:
  - virtual disks of the kinds admins have (`Disk(path, kind)`: virtio-blk, virtio-scsi, NVMe,
    SATA on AHCI, USB storage);
  - qemu's user-mode network, with the guest's agent port forwarded to a loopback port of
    the host, so the controller talks to it over 127.0.0.1 only, and optionally tap devices in
    a network namespace the test made (qemu then runs in it), for raw Ethernet, and further
    user-mode networks of their own, for storage traffic whose cable a test pulls
    (`set_link`) while the agent's own network stays up;
  - a QMP socket, through which `qmp` runs monitor commands;
  - a console log, which `wait_for` reads.

Guests start in parallel (each `start` returns at once), and `StormarkTestCase` cleanups stop
each qemu by its PID and remove what the guest made, whether the test passed or not. KVM is
used when STORMARK_VM_ACCEL=kvm; else TCG (software emulation), which boots in seconds: on
the development machines KVM was present but a boot did not progress. Absolute figures from an
emulated guest mean nothing; tests compare within a guest, or check behaviour.
"""

import gzip
import hashlib
import io
import json
import os
import re
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True

CACHE_DIR = "/var/tmp/stormark-vm-cache"
BUSYBOX = "/bin/busybox"
QEMU = shutil.which("qemu-system-x86_64")
READY = "STORMARK-GUEST-READY"

# What every guest loads, with their dependencies: virtio transport, disks, network, 9p for
# the host's root, and the filesystems the tests make.
BASE_MODULES = ("virtio_pci", "virtio_blk", "virtio_scsi", "sd_mod", "virtio_net",
                "9pnet_virtio", "9p", "crc32c_generic", "ext4", "nvme", "ahci", "usb-storage",
                "xhci-pci", "uas", "af_packet")


def kernel():
    """(vmlinuz, module directory) of the newest installed Debian kernel, or (None, None)."""
    boot = sorted(f for f in os.listdir("/boot") if f.startswith("vmlinuz-")) \
        if os.path.isdir("/boot") else []
    for name in reversed(boot):
        version = name[len("vmlinuz-"):]
        modules = os.path.join("/lib/modules", version)
        if os.path.isdir(modules):
            return os.path.join("/boot", name), modules
    return None, None


def missing():
    """Why no guest can be booted here ("" when one can): the reason names the package."""
    if QEMU is None:
        return "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
    if not os.access(BUSYBOX, os.X_OK):
        return "no static busybox (apt-get install busybox-static)"
    if kernel()[0] is None:
        return "no kernel in /boot (apt-get install linux-image-amd64)"
    if os.geteuid() != 0:
        return "needs root (the guest's 9p view of / and its disks)"
    return ""


def _module_paths(modules_dir, names):
    """The .ko files of `names` and of everything they need, each after what it needs."""
    deps = {}
    by_name = {}
    with open(os.path.join(modules_dir, "modules.dep")) as f:
        for line in f:
            path, _, rest = line.partition(":")
            deps[path] = rest.split()
            by_name[os.path.basename(path).split(".ko")[0].replace("-", "_")] = path
    ordered = []

    def add(path):
        if path in ordered:
            return
        for dep in reversed(deps.get(path, [])):
            add(dep)
        ordered.append(path)

    for name in names:
        path = by_name.get(name.replace("-", "_"))
        if path is not None:  # A module built into this kernel is not in modules.dep.
            add(path)
    return ordered


def _cpio_newc(entries):
    """A newc cpio archive of (name, mode, data) entries; data is bytes, or the link target
    for a symlink."""
    out = io.BytesIO()
    for ino, (name, mode, data) in enumerate(entries + [("TRAILER!!!", 0, b"")], start=1):
        name_bytes = name.encode() + b"\0"
        header = "070701" + "".join(f"{v:08x}" for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(name_bytes), 0))
        out.write(header.encode() + name_bytes)
        out.write(b"\0" * ((4 - (110 + len(name_bytes)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))
    return out.getvalue()


INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mkdir -p /proc /sys /dev /host /tmp
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do insmod /modules/$m 2>/dev/null; done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144,cache=loose hostroot /host || {
  echo "STORMARK-GUEST-FAILED: cannot mount the host's root over 9p"; poweroff -f; }
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mount -t devpts devpts /host/dev/pts 2>/dev/null
for d in /host/tmp /host/run /host/var/tmp /host/root; do mount -t tmpfs tmpfs "$d"; done
ip link set lo up
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2
[ -n "$GUEST_NAME" ] && hostname "$GUEST_NAME"
# The clock is read and set in one process: busybox `date -s` takes whole seconds, and the
# forks between reading and setting took up to a second more on a loaded host.
[ -n "$GUEST_CLOCK_OFFSET" ] && chroot /host /usr/bin/python3 -c "import time; time.clock_settime(time.CLOCK_REALTIME, time.time() + $GUEST_CLOCK_OFFSET)"
echo "STORMARK-GUEST-READY"
sh /guest.sh
echo "STORMARK-GUEST-SCRIPT-EXITED $?"
poweroff -f
"""


def initramfs(guest_script, extra_modules=()):
    """The path of a gzip'd initramfs with busybox, the modules and `guest_script` as
    /guest.sh, built once per content and kept in CACHE_DIR."""
    vmlinuz, modules_dir = kernel()
    modules = _module_paths(modules_dir, BASE_MODULES + tuple(extra_modules))
    key = hashlib.sha256("\0".join([vmlinuz, INIT, guest_script] + modules).encode()).hexdigest()
    os.makedirs(CACHE_DIR, exist_ok=True)
    path = os.path.join(CACHE_DIR, f"initramfs-{key[:16]}.cpio.gz")
    if os.path.exists(path):
        return path
    with open(BUSYBOX, "rb") as f:
        busybox = f.read()
    entries = [(d, stat.S_IFDIR | 0o755, b"") for d in ("bin", "modules", "proc", "sys", "dev",
                                                         "host", "tmp")]
    entries.append(("bin/busybox", stat.S_IFREG | 0o755, busybox))
    entries.append(("init", stat.S_IFREG | 0o755, INIT.encode()))
    entries.append(("guest.sh", stat.S_IFREG | 0o755, guest_script.encode()))
    order = []
    for rel in modules:
        with open(os.path.join(modules_dir, rel), "rb") as f:
            data = f.read()
        name = os.path.basename(rel)
        entries.append((f"modules/{name}", stat.S_IFREG | 0o644, data))
        order.append(name)
    entries.append(("modules.order", stat.S_IFREG | 0o644, ("\n".join(order) + "\n").encode()))
    fd, tmp = tempfile.mkstemp(dir=CACHE_DIR)
    with os.fdopen(fd, "wb") as f:
        f.write(gzip.compress(_cpio_newc(entries), compresslevel=1))
    os.replace(tmp, path)
    return path


class Disk:
    """A raw image file attached to a guest as `kind`: virtio, scsi (virtio-scsi), nvme, sata
    (AHCI) or usb (usb-storage)."""

    KINDS = ("virtio", "scsi", "nvme", "sata", "usb")

    def __init__(self, path, kind="virtio", serial=None):
        if kind not in self.KINDS:
            raise ValueError(f"disk kind {kind!r}: use one of {', '.join(self.KINDS)}")
        self.path, self.kind, self.serial = path, kind, serial


def _disk_args(disks):
    args = []
    controllers = set()
    for i, d in enumerate(disks):
        drive = f"d{i}"
        serial = d.serial or f"stormark{i}"
        args += ["-drive", f"file={d.path},if=none,id={drive},format=raw,cache=unsafe"]
        if d.kind == "virtio":
            args += ["-device", f"virtio-blk-pci,drive={drive},serial={serial}"]
        elif d.kind == "scsi":
            if "scsi" not in controllers:
                args += ["-device", "virtio-scsi-pci,id=scsi0"]
                controllers.add("scsi")
            args += ["-device", f"scsi-hd,bus=scsi0.0,drive={drive},serial={serial}"]
        elif d.kind == "nvme":
            args += ["-device", f"nvme,drive={drive},serial={serial}"]
        elif d.kind == "sata":
            if "ahci" not in controllers:
                args += ["-device", "ahci,id=ahci0"]
                controllers.add("ahci")
            args += ["-device", f"ide-hd,bus=ahci0.{i % 6},drive={drive},serial={serial}"]
        elif d.kind == "usb":
            if "usb" not in controllers:
                args += ["-device", "qemu-xhci,id=xhci0"]
                controllers.add("usb")
            args += ["-device", f"usb-storage,bus=xhci0.0,drive={drive},serial={serial}"]
    return args


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Guest:
    """One qemu guest. `script` is its /guest.sh (busybox sh, run as root after the base
    set-up); `forward` maps guest TCP ports to fresh loopback ports of the host
    (`guest.port(7420)`)."""

    def __init__(self, test, name, script, memory_mib=512, disks=(), forward=(7420,),
                 clock_offset_seconds=0, extra_modules=(), netns=None, taps=(), user_nets=()):
        self.test, self.name, self.script = test, name, script
        # qemu runs in `netns` (the loopback ports are then that namespace's), and each tap
        # device named in `taps`, made there by the test, is one more NIC of the guest (eth1,
        # eth2, ...), for raw Ethernet such as AoE. Each name in `user_nets` is one more NIC
        # after those, on a user-mode network of its own: the i-th (from 0) is 10.0.(3+i).0/24,
        # where 10.0.(3+i).2 is the host's loopback as 10.0.2.2 is on eth0; the guest's script
        # sets its address. `set_link(name, ...)` pulls its cable and puts it back.
        self.netns, self.taps, self.user_nets = netns, list(taps), list(user_nets)
        self.memory_mib, self.disks, self.clock_offset = memory_mib, list(disks), clock_offset_seconds
        self.extra_modules = extra_modules
        self.ports = {p: free_port() for p in forward}
        self.work = test.make_dir(f"stormark-vm-{name}-")
        self.console = os.path.join(self.work, "console.log")
        self.qmp_socket = os.path.join(self.work, "qmp.sock")
        self.proc = None

    def port(self, guest_port):
        return self.ports[guest_port]

    def start(self):
        """Starts qemu. A forwarded port is picked free and bound by qemu a moment later, so
        another process may take it in between (a full ctest run beside a benchmark holding
        thousands of loopback ports did): qemu then exits at once, "Could not set up host
        forwarding rule", and is started again on fresh ports, up to 5 times."""
        for _ in range(5):
            self._start_once()
            try:
                self.proc.wait(timeout=1.5)
            except subprocess.TimeoutExpired:
                return self  # Running: the ports are its.
            with open(os.path.join(self.work, "qemu.log"), errors="replace") as f:
                if "Could not set up host forwarding rule" not in f.read():
                    return self  # Another failure: wait_for reports it with the log.
            self.ports = {p: free_port() for p in self.ports}
        return self

    def _start_once(self):
        vmlinuz, _ = kernel()
        ramfs = initramfs(self.script, self.extra_modules)
        fwd = ",".join(f"hostfwd=tcp:127.0.0.1:{h}-:{g}" for g, h in self.ports.items())
        accel = os.environ.get("STORMARK_VM_ACCEL", "tcg")
        # no_timer_check: under TCG on a loaded host the emulated timer may not tick within the
        # kernel's IO-APIC timer check, which then panics ("IO-APIC + timer doesn't work!", seen
        # once under ctest -j2 with a build beside it); the emulated timer is fine.
        append = (f"console=ttyS0 panic=-1 quiet loglevel=3 no_timer_check "
                  f"GUEST_NAME={self.name}")
        if self.clock_offset:
            append += f" GUEST_CLOCK_OFFSET={self.clock_offset}"
        argv = [QEMU, "-machine", "q35", "-accel", accel, "-cpu", "max" if accel == "tcg" else "host",
                "-smp", "1", "-m", str(self.memory_mib), "-nodefaults", "-no-reboot",
                "-display", "none", "-monitor", "none",
                "-qmp", f"unix:{self.qmp_socket},server=on,wait=off",
                "-serial", f"file:{self.console}",
                "-kernel", vmlinuz, "-initrd", ramfs, "-append", append,
                "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                           "multidevs=remap",
                "-nic", f"user,model=virtio-net-pci{',' + fwd if fwd else ''}"]
        for i, tap in enumerate(self.taps):
            argv += ["-netdev", f"tap,id=tap{i},ifname={tap},script=no,downscript=no",
                     "-device", f"virtio-net-pci,netdev=tap{i}"]
        for i, net in enumerate(self.user_nets):
            argv += ["-netdev", f"user,id={net},net=10.0.{3 + i}.0/24",
                     "-device", f"virtio-net-pci,netdev={net}"]
        argv += _disk_args(self.disks)
        if self.netns:
            argv = ["ip", "netns", "exec", self.netns] + argv
        log = open(os.path.join(self.work, "qemu.log"), "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        self.test.addCleanup(self.stop)

    def stop(self):
        """Stops qemu by its PID (SIGTERM, then SIGKILL)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def qmp(self, command, **arguments):
        """Runs QMP `command` with `arguments` on this guest's qemu; returns its reply's
        "return". Fails the test on an error reply. Bounded (10 s per read)."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(self.qmp_socket)
            stream = s.makefile("rw")
            json.loads(stream.readline())  # The greeting.
            for request in ({"execute": "qmp_capabilities"},
                            {"execute": command, "arguments": arguments}):
                stream.write(json.dumps(request) + "\n")
                stream.flush()
                reply = {}
                while "return" not in reply and "error" not in reply:  # Events come between.
                    reply = json.loads(stream.readline())
                if "error" in reply:
                    self.test.fail(f"guest {self.name}: QMP {request}: {reply['error']}")
            return reply["return"]

    def set_link(self, net, up):
        """Puts the cable of user network `net` (a name in `user_nets`) in, or pulls it: the
        guest sees its NIC's carrier go, and no frame passes either way."""
        self.qmp("set_link", name=net, up=up)

    def console_text(self):
        try:
            with open(self.console, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def wait_for(self, pattern, timeout=120):
        """Waits until the console shows `pattern` (a regex); returns the match. Fails the
        test, with the console's tail, when qemu exits or the time runs out."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern)
        while True:
            text = self.console_text()
            m = regex.search(text)
            if m:
                return m
            if self.proc.poll() is not None:
                self.test.fail(f"guest {self.name} stopped (qemu {self.proc.returncode}) before "
                               f"{pattern!r}; console:\n{text[-3000:]}\nqemu: "
                               f"{open(os.path.join(self.work, 'qemu.log')).read()[-2000:]}")
            if time.monotonic() > deadline:
                self.test.fail(f"guest {self.name}: no {pattern!r} within {timeout} s; "
                               f"console:\n{text[-3000:]}")
            time.sleep(0.2)


def agent_script(bin_dir, config_yaml, before="", cgroup=None):
    """A /guest.sh that runs the build tree's agent in the guest on 0.0.0.0:7420 with
    `config_yaml` (written to /tmp/agent.yaml of the host view), after the shell lines
    `before`. With `cgroup`, cgroup v2 is mounted and the agent starts in that cgroup (a path
    under /sys/fs/cgroup), with the memory controller enabled above it."""
    lines = [before]
    if cgroup:
        lines += ["mount -t cgroup2 none /host/sys/fs/cgroup",
                  "echo +memory > /host/sys/fs/cgroup/cgroup.subtree_control",
                  f"mkdir -p /host/sys/fs/cgroup/{cgroup}",
                  f"echo $$ > /host/sys/fs/cgroup/{cgroup}/cgroup.procs"]
    lines += ["cat > /host/tmp/agent.yaml <<'STORMARK_EOF'", config_yaml.rstrip("\n"),
              "STORMARK_EOF",
              f"exec chroot /host {bin_dir}/stormark-agent --listen 0.0.0.0:7420 --insecure "
              f"--config /tmp/agent.yaml"]
    return "\n".join(lines) + "\n"


MKFS_EXT4 = shutil.which("mkfs.ext4") or "mkfs.ext4"  # The guest's PATH is busybox's.


def ext4_script(device, mountpoint):
    """Shell lines for a guest's `before`: a journaled ext4 on `device` (inode tables and
    journal written now), mounted at `mountpoint` of the agent's view (/tmp/...), or the line
    STORMARK-FS-FAILED on the console."""
    return (f"mkdir -p /host{mountpoint} && chroot /host {MKFS_EXT4} -q -F -E "
            f"lazy_itable_init=0,lazy_journal_init=0 {device} && "
            f"mount -t ext4 {device} /host{mountpoint} || echo STORMARK-FS-FAILED {device}\n")


def check_stream_on_filesystem(test, guest, target, device, transport, size_mib=16):
    """Runs a direct stream write, then read, of `size_mib` MiB on the guest's `dir:` target
    `target`, a filesystem made with ext4_script on network-attached `device`, and checks each
    row: succeeded, `transport` with ext4 on `device`, and the device's own counters saw the
    file's bytes (and at most 2% and 2 MiB of ext4's own besides). Returns the run's stdout."""
    work = test.make_dir()
    plan = test.write_file(os.path.join(work, "fs.yaml"), f"""hosts:
  - {{name: kernel, address: "127.0.0.1:{guest.port(7420)}", target: {target}}}
phases:
  - {{name: w, workload: stream, rw: write, size: {size_mib}M, bs: 1M, direct: true}}
  - {{name: r, workload: stream, rw: read, size: {size_mib}M, bs: 1M, direct: true}}
""")
    json_path = os.path.join(work, "fs.json")
    result = test.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-db",
                                "--no-progress"], timeout=600)
    test.assert_no_crash(result)
    test.assertEqual(result.returncode, 0, result.describe() + guest.console_text()[-2000:])
    size = size_mib << 20
    for phase, counter in zip(test.load_json(json_path)["phases"],
                              ("disk.written_bytes", "disk.read_bytes")):
        row = phase["results"][0]
        test.assertEqual(row["status"], "succeeded", row)
        env = row["environment"]["target"]
        test.assertEqual(env["transport"], transport, env)
        test.assertEqual((env.get("filesystem"), env.get("device")),
                         ("ext4", os.path.basename(device)), env)
        stats = row["device_stats"]
        test.assertEqual(stats["disk"], os.path.basename(device), stats)
        test.assertEqual(row["bytes"], size, row)
        moved = int(stats[counter])
        test.assertGreaterEqual(moved, size, (counter, stats))
        test.assertLessEqual(moved, size * 1.02 + (2 << 20), (counter, stats))
    return result.stdout
