"""The Debian packages `make deb` builds, installed as an admin would: into a clean Debian 12
root made by debootstrap in a directory of this test, with apt (inside a chroot), so that
their dependencies come from the archive and nothing from this machine's /usr leaks in.

Checked there: every library of both programs resolves (ldd), the package made the stormark
user and group, installed the unit, the man pages and a root-owned config that allows nothing
(the agent refuses to start on it), and the installed programs run a phase: an agent on the
default socket /run/stormark/agent.sock with a target, driven by the installed controller,
and `stormark run` with its own local agent. Then deploy/ansible's playbook installs the .deb
again and templates the config, which the agent takes. lintian runs on both packages too.

Needs root, debootstrap and a Debian mirror ($STORMARK_DEBIAN_MIRROR, by default the
official one); skipped, saying which, when one is missing. The base system is downloaded once
and kept as a tarball in the build directory (package-cache/), with apt's downloads, so a
second run downloads only apt's index. Every chroot command runs in a mount namespace of its
own (unshare -m), so its /proc and cache mounts vanish with it, whatever happens to the test.
The playbook of deploy/ansible runs there too (connection local). About 2 minutes on 2 cores
with the base system and apt's downloads cached (unpacking the base is one of them), 3.5
without."""

import os
import shutil
import subprocess
import sys
import time
import unittest
import urllib.request

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
SUITE = "bookworm"
MIRROR = os.environ.get("STORMARK_DEBIAN_MIRROR", "http://deb.debian.org/debian")


def build_dir():
    return os.environ.get("STORMARK_BUILD_DIR") or os.path.dirname(os.path.abspath(h.bin_dir()))


def log(text):
    print(f"package_test: {text}", file=sys.stderr, flush=True)


def mirror_reachable():
    try:
        with urllib.request.urlopen(f"{MIRROR}/dists/{SUITE}/Release", timeout=15) as r:
            return r.status == 200
    except OSError:
        return False


def missing_prerequisite():
    """Why this test cannot run here, or None."""
    if os.geteuid() != 0:
        return "needs root (debootstrap, chroot)"
    for tool in ("debootstrap", "cpack", "dpkg-shlibdeps", "unshare", "chroot"):
        if not shutil.which(tool):
            return f"needs {tool} (scripts/install-deps.sh test)"
    if not mirror_reachable():
        return f"the Debian mirror {MIRROR} is unreachable"
    return None


def run(argv, timeout, **kwargs):
    done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace", timeout=timeout, **kwargs)
    return done


def build_packages():
    """Runs what `make deb` runs, in the build directory; returns the two .deb paths."""
    build = build_dir()
    done = run(["cmake", "--build", build, "--target", "stormark", "stormark-agent",
                "stormark-man"], timeout=1200)
    if done.returncode != 0:
        raise AssertionError(f"building the man pages failed:\n{done.stdout}{done.stderr}")
    out = os.path.join(build, "deb")
    done = run(["cpack", "-G", "DEB", "-B", out], timeout=600, cwd=build)
    if done.returncode != 0:
        raise AssertionError(f"cpack failed:\n{done.stdout}{done.stderr}")
    with open(os.path.join(os.path.dirname(__file__), "..", "..", "CMakeLists.txt")) as f:
        version = [l for l in f if l.startswith("project(stormark VERSION")][0].split()[2]
    return [os.path.join(out, f"{name}_{version}_amd64.deb") for name in ("stormark-agent",
                                                                           "stormark")]


class PackageTest(h.StormarkTestCase):

    @classmethod
    def setUpClass(cls):
        cls.skip_reason = missing_prerequisite()
        if cls.skip_reason:
            log(f"SKIPPED: {cls.skip_reason}")
            return
        started = time.monotonic()
        cls.debs = build_packages()
        log(f"packages built in {time.monotonic() - started:.0f} s: {cls.debs}")

    def setUp(self):
        if self.skip_reason:
            self.skipTest(self.skip_reason)

    @unittest.skipUnless(shutil.which("lintian"), "needs lintian (scripts/install-deps.sh test)")
    def test_lintian_reports_no_error_or_warning(self):
        done = run(["lintian", "--pedantic"] + self.debs, timeout=600)
        tags = [l for l in done.stdout.splitlines() if l[:2] in ("E:", "W:", "I:", "P:")]
        log(f"lintian --pedantic: {len(tags)} tags" + "".join(f"\n  {t}" for t in tags))
        self.assertEqual([t for t in tags if t[:2] in ("E:", "W:")], [], done.stdout)
        self.assertIn(done.returncode, (0,), done.stdout + done.stderr)

    def test_dependencies_are_dpkg_shlibdeps_output(self):
        for deb in self.debs:
            fields = run(["dpkg-deb", "-f", deb, "Depends"], timeout=60).stdout
            for library in ("libgrpc++1.51", "libprotobuf32", "libyaml-cpp0.7", "libssl3"):
                self.assertIn(library, fields, deb)
        agent = run(["dpkg-deb", "-f", self.debs[0], "Depends"], timeout=60).stdout
        self.assertIn("liburing2", agent)
        # Loaded when an nbd:// or iscsi:// target is opened, not linked: recommended.
        recommends = run(["dpkg-deb", "-f", self.debs[0], "Recommends"], timeout=60).stdout
        for library in ("libiscsi7", "libnbd0"):
            self.assertNotIn(library, agent)
            self.assertIn(library, recommends)

    # -- the clean root --------------------------------------------------------------------

    def base_tarball(self):
        """The debootstrap tarball of a minimal bookworm, made once per build directory."""
        cache = os.path.join(build_dir(), "package-cache")
        os.makedirs(cache, exist_ok=True)
        tarball = os.path.join(cache, f"{SUITE}-minbase.tgz")
        if os.path.exists(tarball):
            return tarball
        work = self.make_dir("stormark-itest-debootstrap-")
        partial = os.path.join(work, "base.tgz")
        started = time.monotonic()
        done = run(["debootstrap", "--variant=minbase", f"--make-tarball={partial}", SUITE,
                    os.path.join(work, "root"), MIRROR], timeout=900)
        self.assertEqual(done.returncode, 0, f"debootstrap --make-tarball:\n{done.stdout[-3000:]}"
                                             f"{done.stderr[-3000:]}")
        shutil.move(partial, tarball)  # Whole or absent: a failed download is not cached.
        log(f"base system downloaded in {time.monotonic() - started:.0f} s into {tarball}")
        return tarball

    def in_root(self, root, command, timeout=600, popen=False, stdout=None):
        """Runs the shell `command` chrooted in `root`, in a mount namespace of its own with
        /proc, and apt's download cache and index from the build directory bound in."""
        cache = os.path.join(build_dir(), "package-cache", "apt")
        archives = os.path.join(cache, "archives")
        lists = os.path.join(cache, "lists")
        os.makedirs(os.path.join(archives, "partial"), exist_ok=True)
        os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
        # The namespace starts with a private copy of every mount of the host, and a copy keeps
        # its filesystem busy: another test's loop device, mounted under /var/tmp or /tmp, could
        # then not be unmounted and made anew (mkfs: "apparently in use by the system") until
        # this command ends. So the copies of those are detached first, in here only.
        detach = ("awk '$5 ~ /^\\/(var\\/)?tmp\\// {print $5}' /proc/self/mountinfo | sort -r | "
                  "while read -r m; do umount -l \"$m\" 2>/dev/null; done; ")
        setup = (detach + f"mount -t proc proc {root}/proc && "
                 f"mount --bind {archives} {root}/var/cache/apt/archives && "
                 f"mount --bind {lists} {root}/var/lib/apt/lists && "
                 f"exec chroot {root} /bin/sh -c \"$0\"")
        argv = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c", setup,
                command]
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8", "HOME": "/root",
               "DEBIAN_FRONTEND": "noninteractive"}
        if popen:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout,
                                    stderr=subprocess.STDOUT, env=env,
                                    preexec_fn=h._die_with_parent)
            self.addCleanup(h._stop_process, proc)
            return proc
        return run(argv, timeout=timeout, env=env)

    def check(self, done, what):
        self.assertEqual(done.returncode, 0, f"{what}:\n{done.stdout[-4000:]}{done.stderr[-4000:]}")
        return done.stdout

    def test_packages_install_and_run_in_a_clean_debian_root(self):
        started = time.monotonic()
        tarball = self.base_tarball()
        root = os.path.join(self.make_dir("stormark-itest-debroot-"), "root")
        step = time.monotonic()
        done = run(["debootstrap", "--variant=minbase", f"--unpack-tarball={tarball}", SUITE,
                    root, MIRROR], timeout=900)
        self.check(done, "debootstrap --unpack-tarball")
        log(f"clean root unpacked in {time.monotonic() - step:.0f} s")

        shutil.copyfile("/etc/resolv.conf", os.path.join(root, "etc", "resolv.conf"))
        # Nothing in the chroot may start a service (there is no init to start one anyway).
        with open(os.path.join(root, "usr", "sbin", "policy-rc.d"), "w") as f:
            f.write("#!/bin/sh\nexit 101\n")
        os.chmod(os.path.join(root, "usr", "sbin", "policy-rc.d"), 0o755)
        os.makedirs(os.path.join(root, "tmp", "debs"))
        for deb in self.debs:
            shutil.copy(deb, os.path.join(root, "tmp", "debs"))
        # Not on this host's mirror list: only the archive the admin's host would have.
        with open(os.path.join(root, "etc", "apt", "sources.list"), "w") as f:
            f.write(f"deb {MIRROR} {SUITE} main\n")

        step = time.monotonic()
        self.check(self.in_root(root, "apt-get update -qq"), "apt-get update")
        names = " ".join(f"/tmp/debs/{os.path.basename(d)}" for d in self.debs)
        out = self.check(self.in_root(
            root, f"apt-get install -y -q --no-install-recommends {names}"), "apt-get install")
        self.assertNotIn("stormark-dbgsym", out)
        log(f"installed with apt in {time.monotonic() - step:.0f} s")

        # Every library resolves, from the packages apt chose.
        for program in ("/usr/bin/stormark-agent", "/usr/bin/stormark"):
            ldd = self.check(self.in_root(root, f"ldd {program}"), f"ldd {program}")
            self.assertNotIn("not found", ldd, ldd)
            self.assertIn("libgrpc++", ldd)
        # What the agent package made and installed.
        facts = self.check(self.in_root(
            root, "getent passwd stormark; getent group stormark; "
                  "stat -c '%U:%G %a %n' /etc/stormark/agent.yaml; "
                  "ls /lib/systemd/system/stormark-agent.service "
                  "/usr/share/man/man1/stormark-agent.1.gz /usr/share/man/man1/stormark.1.gz; "
                  "dpkg-query -W -f='${Conffiles}\\n' stormark-agent"), "package facts")
        self.assertRegex(facts, r"(?m)^stormark:x:\d+:\d+:.*:/nonexistent:/usr/sbin/nologin$")
        self.assertRegex(facts, r"(?m)^stormark:x:\d+:")
        self.assertIn("root:root 644 /etc/stormark/agent.yaml", facts)
        self.assertIn(" /etc/stormark/agent.yaml ", facts)  # a conffile
        version = self.check(self.in_root(root, "stormark-agent --version && stormark --version"),
                             "--version")
        self.assertRegex(version, r"^stormark-agent \d+\.\d+\.\d+\ncommit \S+\nprotocol \d+\.\d+\n"
                                  r"stormark \d")

        # The installed config allows nothing: the agent refuses to start on it.
        refused = self.in_root(root, "stormark-agent --config /etc/stormark/agent.yaml")
        self.assertEqual(refused.returncode, 2, refused.stdout + refused.stderr)
        self.assertIn("it needs a 'targets:' map", refused.stdout + refused.stderr)

        # An admin names a target; the agent serves its default socket (the unit's
        # RuntimeDirectory, made by hand here: there is no systemd in the chroot).
        step = time.monotonic()
        self.check(self.in_root(
            root, "mkdir -p /srv/stormark /run/stormark && "
                  "printf 'targets:\\n  scratch:\\n    dir: /srv/stormark\\n' "
                  "> /etc/stormark/agent.yaml"), "configure")
        agent_log = os.path.join(root, "tmp", "agent.log")
        with open(agent_log, "wb") as out:
            agent = self.in_root(root, "exec stormark-agent --config /etc/stormark/agent.yaml",
                                 popen=True, stdout=out)
        deadline = time.monotonic() + 30
        while "listening on unix:/run/stormark/agent.sock" not in h.read_text(agent_log):
            self.assertIsNone(agent.poll(), h.read_text(agent_log))
            self.assertLess(time.monotonic(), deadline, h.read_text(agent_log))
            time.sleep(0.1)
        phase = self.in_root(root, "stormark run --agent unix:/run/stormark/agent.sock "
                                   "--target scratch --rw write --size 32M --no-db "
                                   "--no-progress", timeout=300)
        self.check(phase, "stormark run on the installed agent")
        self.assertRegex(phase.stdout, r"(?m)^\s+\S+\s+.*scratch.*\bok$", phase.stdout)
        h._stop_process(agent)
        self.assertEqual(os.listdir(os.path.join(root, "srv", "stormark")), [],
                         "the phase's files were not removed")

        # The controller alone: it starts the installed agent on a temporary directory.
        local = self.in_root(root, "stormark run --size 32M --no-db --no-progress",
                             timeout=300)
        self.check(local, "stormark run with a local agent")
        self.assertEqual(len([l for l in local.stdout.splitlines() if l.endswith(" ok")]), 2,
                         local.stdout)
        log(f"both phases ran in {time.monotonic() - step:.0f} s")

        # deploy/ansible's playbook on this root (connection local, no systemd to start the
        # service): it installs the .deb with apt and templates the config the agent takes.
        step = time.monotonic()
        self.check(self.in_root(root, "apt-get install -y -q --no-install-recommends "
                                      "ansible-core python3-apt"), "installing ansible")
        shutil.copytree(os.path.join(SOURCE, "deploy"), os.path.join(root, "tmp", "deploy"))
        with open(os.path.join(root, "tmp", "hosts.ini"), "w") as f:
            f.write("[stormark_agents]\nbench ansible_host=127.0.0.1 ansible_connection=local "
                    "ansible_python_interpreter=/usr/bin/python3\n")
        agent_deb = f"/tmp/debs/{os.path.basename(self.debs[0])}"
        play = self.in_root(
            root, "ANSIBLE_NOCOLOR=1 ansible-playbook -i /tmp/hosts.ini "
                  "/tmp/deploy/ansible/stormark-agent.yml -e stormark_start=false "
                  f"-e stormark_agent_deb={agent_deb} -e stormark_bin=/usr/bin/stormark "
                  "-e stormark_pki=/root/pki", timeout=600)
        self.check(play, "ansible-playbook")
        self.assertRegex(play.stdout, r"bench\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0")
        config = h.read_text(os.path.join(root, "etc", "stormark", "agent.yaml"))
        self.assertIn("Written by deploy/ansible/stormark-agent.yml for bench", config)
        tcp_log = os.path.join(root, "tmp", "agent-tcp.log")
        with open(tcp_log, "wb") as out:
            agent = self.in_root(root, "exec stormark-agent --config /etc/stormark/agent.yaml "
                                       "--listen 127.0.0.1:0", popen=True, stdout=out)
        deadline = time.monotonic() + 30
        while "listening on 127.0.0.1:" not in h.read_text(tcp_log):
            self.assertIsNone(agent.poll(), h.read_text(tcp_log))
            self.assertLess(time.monotonic(), deadline, h.read_text(tcp_log))
            time.sleep(0.1)
        h._stop_process(agent)
        log(f"the playbook installed and configured the agent in {time.monotonic() - step:.0f} s; "
            f"the whole test took {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    h.main()
