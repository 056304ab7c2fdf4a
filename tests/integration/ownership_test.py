"""A phase belongs to the controller that prepared it.

Two controllers hold certificates of one CA under different names (CN=controller and
CN=intruder, made by `stormark certs` in a temporary directory). The second reads the first's
phase id from GetInfo and tries Abort, Cleanup, Run and Heartbeat on it: each is refused,
the first's run completes, and the agent's log names the second for every refusal. Its
heartbeats do not keep a frozen first controller's phase alive. An identity the config
limits to reading (a certificate, or a local user) is refused a write phase, naming the rule.
Only the local operator (root) ends another's phase, over the agent's unix socket with
`stormark-agent --abort-held-phase`; `nobody`, whom the socket admits, is refused.

Everything listens on loopback or on a unix socket in a temporary directory; the unprivileged
caller is `nobody`, by `setpriv`."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

NULL_TARGET = "  sink: {null: true}\n"
NOBODY = 65534
HEARTBEAT = ["--heartbeat-interval", "500ms", "--heartbeat-timeout", "3s"]


def can_drop_to_nobody():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def randio_on_null(seconds):
    """A timed randio phase on the null target: light, and it runs exactly `seconds`."""
    return ["--workload", "randio", "--target", "sink", "--set", "rw=randread",
            "--set", f"runtime={seconds}s", "--set", "time_based=true", "--no-progress"]


class OwnershipTest(h.StormarkTestCase):

    def setUp(self):
        self.work = self.make_dir("stormark-itest-own-")
        self.pki = os.path.join(self.work, "pki")
        for args in (["init"], ["issue", "--agent", "agent1", "--ip", "127.0.0.1"],
                     ["issue", "--controller"], ["issue", "--controller", "intruder"]):
            result = self.run_stormark(["certs", args[0], "--dir", self.pki] + args[1:])
            self.assertEqual(result.returncode, 0, result.describe())

    def tls_config(self):
        return (f"tls:\n  ca: {self.pki}/ca.crt\n  cert: {self.pki}/agent-agent1.crt\n"
                f"  key: {self.pki}/agent-agent1.key\n")

    def tls_flags(self, name):
        """The flags of the controller whose certificate says CN=`name`."""
        base = "controller" if name == "controller" else f"controller-{name}"
        return ["--tls-ca", f"{self.pki}/ca.crt", "--tls-cert", f"{self.pki}/{base}.crt",
                "--tls-key", f"{self.pki}/{base}.key"]

    def intruder(self, address, *extra, name="intruder"):
        """Runs the second controller against `address`; returns {call: outcome}."""
        argv = [h.binary("stormark-test-phase-caller"), "--agent", address,
                *self.tls_flags(name), *extra]
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=60, preexec_fn=h._die_with_parent)
        self.assertEqual(done.returncode, 0, f"{argv}\n{done.stdout}{done.stderr}")
        return dict(line.split(": ", 1) for line in done.stdout.splitlines())

    def test_a_second_controller_cannot_touch_the_first_controllers_phase(self):
        agent = self.start_agent("own", extra_targets=NULL_TARGET, extra_config=self.tls_config())
        json_path = os.path.join(self.work, "out.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--json", json_path,
                                   *self.tls_flags("controller"), *randio_on_null(6)])
        phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(0.5)  # Running now.

        for token in ([], ["--token", "0" * 32]):
            calls = self.intruder(agent.address, *token)
            self.assertEqual(calls["busy_with_phase"], phase_id)
            for call, verb in (("abort", "abort"), ("cleanup", "clean up"), ("run", "run"),
                               ("heartbeat", "renew the lease of")):
                self.assertTrue(calls[call].startswith(
                    f"PERMISSION_DENIED: CN=intruder may not {verb} phase '{phase_id}': it "
                    "belongs to another identity"), (call, calls[call]))
                self.assertNotIn("CN=controller", calls[call])
            self.assertTrue(calls["abort-any"].startswith("INVALID_ARGUMENT: "),
                            calls["abort-any"])
            self.assertIn("no wildcard", calls["abort-any"])
            self.assertTrue(calls["abort-held-phase"].startswith(
                "PERMISSION_DENIED: CN=intruder may not abort the held phase: only the local "
                "operator may"), calls["abort-held-phase"])

        result = ctl.wait(timeout=60)
        self.assertEqual(result.returncode, 0, result.describe())
        phase = self.load_json(json_path)["phases"][0]
        self.assertEqual(phase["phase_id"], phase_id)
        self.assertEqual(self.result_for(phase, agent.address)["status"], "succeeded")
        self.assertEqual(agent.phase_dirs(), [])

        log = agent.log()
        peer = r"\[peer ipv4:127\.0\.0\.1:\d+ CN=intruder\]"
        pid = re.escape(phase_id)
        for refused, said in (("abort of", "abort"), ("cleanup of", "clean up"),
                              ("run of", "run"), ("heartbeat for", "renew the lease of")):
            self.assertRegex(log, rf"refused {refused} phase '{pid}' \(held by CN=controller\): "
                                  rf"CN=intruder may not {said} .*{peer}")
        self.assertRegex(log, rf"refused forced abort: CN=intruder .*{peer}")
        self.assertRegex(log, rf"phase '{re.escape(phase_id)}' SUCCEEDED \[peer ipv4:127\.0\.0\.1:"
                              r"\d+ CN=controller\]")
        self.assertRegex(log, rf"cleaned up phase '{re.escape(phase_id)}' .*CN=controller\]")

    def test_heartbeats_of_another_controller_do_not_keep_a_frozen_ones_phase(self):
        agent = self.start_agent("lease", extra_targets=NULL_TARGET,
                                 extra_config=self.tls_config())
        ctl = self.start_stormark(["run", "--agent", agent.address, *HEARTBEAT,
                                   *self.tls_flags("controller"), *randio_on_null(60)])
        phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(0.8)
        # A frozen controller keeps its connection open: only the lease can tell.
        ctl.proc.send_signal(signal.SIGSTOP)
        self.addCleanup(lambda: ctl.proc.poll() is None and ctl.proc.send_signal(signal.SIGCONT))
        frozen_at = time.monotonic()
        # Twice a second for 6 s: refused while the phase is held, answered once it is gone.
        calls = self.intruder(agent.address, "--heartbeat-for", "6")
        self.assertRegex(calls["heartbeats"], r"^\d+ refused, \d+ ok")
        match = agent.wait_for_log(r"phase '%s' ABORTED: (.*)" % re.escape(phase_id), timeout=20)
        self.assertIn("no heartbeat from the controller for 3.", match.group(1))
        self.assertLess(time.monotonic() - frozen_at, 10, agent.log())
        # The lease ran out while the intruder was heartbeating the phase.
        before_abort = agent.log()[:match.start()]
        refused = re.findall(r"refused heartbeat for phase '%s' \(held by CN=controller\): "
                             r"CN=intruder may not renew the lease" % re.escape(phase_id),
                             before_abort)
        self.assertGreaterEqual(len(refused), 4, agent.log())
        deadline = time.monotonic() + 10
        while agent.phase_dirs() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(agent.phase_dirs(), [], agent.log())
        ctl.proc.send_signal(signal.SIGCONT)
        result = ctl.wait(timeout=30)
        self.assertEqual(result.returncode, 1, result.describe())

    def test_a_read_only_identity_is_refused_a_write_phase_naming_the_rule(self):
        agent = self.start_agent("authz", extra_config=self.tls_config() + (
            "identities:\n"
            "  - match: {cn: controller}\n"
            "    write: true\n"
            "  - match: {cn: intruder}\n"
            "    targets: [scratch]\n"
            "    write: false\n"))
        write = ["run", "--agent", agent.address, "--rw", "write", "--size", "8M",
                 "--no-progress", "--no-db"]
        result = self.run_stormark(write + self.tls_flags("intruder"))
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        refusal = (r"CN=intruder may not write to target 'scratch' \(stream\): identities rule "
                   r"at .*agent\.yaml:\d+ \(cn: intruder\) has write: false")
        self.assertRegex(result.stdout + result.stderr, refusal)
        self.assertRegex(agent.log(), r"refused prepare of phase '[^']+' on target 'scratch': " +
                         refusal + r" \[peer ipv4:127\.0\.0\.1:\d+ CN=intruder\]")
        self.assertEqual(agent.phase_dirs(), [])
        # A read it may run; the other identity may write.
        read = ["run", "--agent", agent.address, "--rw", "read", "--size", "8M",
                "--no-progress", "--no-db"]
        result = self.run_stormark(read + self.tls_flags("intruder"))
        self.assertEqual(result.returncode, 0, result.describe())
        result = self.run_stormark(write + self.tls_flags("controller"))
        self.assertEqual(result.returncode, 0, result.describe())

    def start_unix_agent(self, name, extra_config=""):
        """An agent on BASE/agent.sock that also admits `nobody` (access:), its directory
        opened (0755) so that nobody reaches the socket."""
        agent = self.start_agent(name, unix=True, extra_targets=NULL_TARGET,
                                 extra_config="access: {users: [nobody]}\n" + extra_config)
        os.chmod(os.path.dirname(agent.config_path), 0o755)
        os.chmod(agent.address[len("unix:"):], 0o666)  # Only the agent's own checks decide.
        return agent

    def as_nobody(self, binary, args, timeout=60):
        """Runs `binary ARGS` as uid/gid 65534 with no supplementary groups."""
        argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                os.path.abspath(h.binary(binary))] + list(args)
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout, cwd="/",
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                   "HOME": "/nonexistent"},
                              preexec_fn=h._die_with_parent)
        return h.Result(argv, done.returncode, done.stdout, done.stderr)

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_only_the_local_operator_ends_another_users_phase(self):
        agent = self.start_unix_agent("op")
        json_path = os.path.join(self.work, "out.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--json", json_path,
                                   *randio_on_null(60)])
        phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(0.5)
        pid = re.escape(phase_id)

        # nobody may use the socket, but the phase is root's, and the forced abort is the
        # operator's.
        calls = self.as_nobody("stormark-test-phase-caller", ["--agent", agent.address])
        self.assertEqual(calls.returncode, 0, calls.describe())
        said = dict(line.split(": ", 1) for line in calls.stdout.splitlines())
        self.assertEqual(said["busy_with_phase"], phase_id)
        for call in ("abort", "cleanup", "run", "heartbeat"):
            self.assertRegex(said[call], rf"^PERMISSION_DENIED: uid {NOBODY} \(nobody\) may not "
                                         rf".* phase '{pid}': it belongs to another identity")
        refused = self.as_nobody("stormark-agent", ["--abort-held-phase", "--listen",
                                                    agent.address])
        self.assertEqual(refused.returncode, 1, refused.describe())
        self.assertIn(f"uid {NOBODY} (nobody) may not abort the held phase: only the local "
                      "operator may", refused.stderr)
        self.assertRegex(agent.log(), rf"refused forced abort: .*\[peer uid {NOBODY} \(nobody\)")

        aborted = self.run_agent_binary(["--abort-held-phase", "--listen", agent.address,
                                         "--reason", "test: stuck controller"], timeout=60)
        self.assertEqual(aborted.returncode, 0, aborted.describe())
        self.assertIn(f"aborted phase '{phase_id}' and removed its files", aborted.stderr)
        self.assertRegex(agent.log(), rf"forced abort of phase '{pid}' \(held by uid 0 \(root\)\): "
                                      r"test: stuck controller \[peer uid 0 \(root\)")
        result = ctl.wait(timeout=60)
        self.assertEqual(result.returncode, 1, result.describe())
        row = self.result_for(self.load_json(json_path)["phases"][0], agent.address)
        self.assertEqual(row["status"], "aborted", row)
        self.assertIn("aborted by the local operator: test: stuck controller", row["error"])
        self.assertEqual(agent.phase_dirs(), [])

        again = self.run_agent_binary(["--abort-held-phase", "--listen", agent.address])
        self.assertEqual(again.returncode, 0, again.describe())
        self.assertIn("holds no phase", again.stderr)
        over_tcp = self.run_agent_binary(["--abort-held-phase", "--listen", "127.0.0.1:7420"])
        self.assertEqual(over_tcp.returncode, 2, over_tcp.describe())
        self.assertEqual(len(over_tcp.stderr.splitlines()), 1, over_tcp.describe())
        self.assertIn("give --listen unix:/path", over_tcp.stderr)

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_a_local_user_limited_to_reading_is_refused_a_write(self):
        agent = self.start_unix_agent("user", extra_config=(
            "identities:\n"
            "  - match: {user: nobody}\n"
            "    targets: [scratch]\n"
            "    write: false\n"))
        write = ["run", "--agent", agent.address, "--target", "scratch", "--rw", "write",
                 "--size", "4M", "--no-progress", "--no-db"]
        result = self.as_nobody("stormark", write)
        self.assertEqual(result.returncode, 1, result.describe())
        refusal = (rf"uid {NOBODY} \(nobody\) may not write to target 'scratch' \(stream\): "
                   r"identities rule at .*agent\.yaml:\d+ \(user: nobody\) has write: false")
        self.assertRegex(result.stdout + result.stderr, refusal)
        self.assertRegex(agent.log(), r"refused prepare of phase '[^']+' on target 'scratch': " +
                         refusal)
        # Root is the local operator: no rule limits it.
        result = self.run_stormark(write)
        self.assertEqual(result.returncode, 0, result.describe())


if __name__ == "__main__":
    h.main()
