"""Who may command an agent on its own host: the unix socket admits root, the agent's own user
and the users and groups its config names (checked on the kernel's credentials of each
connection); plain-text TCP needs --insecure; and one port or socket serves one agent.

The unprivileged caller is `nobody`, by `setpriv`/`runuser` of the real controller binary.
Every socket lives in a directory this test made; nothing touches /run."""

import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

NOBODY = 65534


def can_drop_to_nobody():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


class LocalAccessTest(h.StormarkTestCase):

    def start_unix_agent(self, name, extra_config="", open_socket=False):
        """An agent on BASE/agent.sock. Its directories are opened to others (0755) so that
        only the socket's own mode and the agent's check decide; with `open_socket` the
        socket is made 0666, so that only the agent's check does."""
        agent = self.start_agent(name, unix=True, extra_config=extra_config)
        base = os.path.dirname(agent.config_path)
        os.chmod(base, 0o755)
        self.socket = agent.address[len("unix:"):]
        if open_socket:
            os.chmod(self.socket, 0o666)
        return agent

    def as_nobody(self, args, timeout=60, groups=()):
        """Runs `stormark ARGS` as uid/gid 65534 with supplementary `groups` (gids) only."""
        group_flags = ([f"--groups={','.join(str(g) for g in groups)}"] if groups
                       else ["--clear-groups"])
        argv = (["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}"] + group_flags +
                [os.path.abspath(h.binary("stormark"))] + list(args))
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout, cwd="/",
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                   "HOME": "/nonexistent"},
                              preexec_fn=h._die_with_parent)
        return h.Result(argv, done.returncode, done.stdout, done.stderr)

    def write_as_nobody(self, agent):
        return self.as_nobody(["run", "--agent", agent.address, "--rw", "write", "--size", "4M",
                               "--no-progress", "--no-db"])

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_socket_mode_keeps_an_unprivileged_user_out(self):
        agent = self.start_unix_agent("mode")
        mode = os.stat(self.socket).st_mode & 0o7777
        self.assertEqual(mode, 0o660)
        self.assertRegex(agent.log(), r"listening on unix:\S+ \(peer credentials checked, "
                                      r"socket 0660 root:\S+,")
        result = self.write_as_nobody(agent)
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertIn("permission denied on the agent's socket", result.stderr)
        self.assertNotIn("prepared phase", agent.log())
        self.assertEqual(agent.phase_dirs(), [])

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_unprivileged_user_is_refused_on_its_credentials(self):
        agent = self.start_unix_agent("refused", open_socket=True)
        result = self.as_nobody(["agents", "--agent", agent.address])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertRegex(result.stderr, rf"uid {NOBODY} \(nobody\) gid {NOBODY} pid \d+ may not "
                                        r"use this agent: it admits root, its own user \(uid 0\)"
                                        r" and the config's access.users \(none\)")
        self.assertNotIn("scratch", result.stdout)
        result = self.write_as_nobody(agent)
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertIn("may not use this agent", result.stderr)
        self.assertRegex(agent.log(), rf"refused a connection: uid {NOBODY} \(nobody\)")
        self.assertNotIn("prepared phase", agent.log())
        self.assertEqual(agent.phase_dirs(), [])
        # Root still gets in.
        result = self.run_stormark(["agents", "--agent", agent.address])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIn("scratch", result.stdout)

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_user_the_config_names_is_admitted_and_named_in_the_log(self):
        agent = self.start_unix_agent("users", "access:\n  users: [nobody]\n", open_socket=True)
        result = self.as_nobody(["agents", "--agent", agent.address])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIn("scratch", result.stdout)
        result = self.write_as_nobody(agent)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertRegex(agent.log(), rf"prepared phase '[^']+' on target 'scratch' "
                                      rf"\[peer uid {NOBODY} \(nobody\) gid {NOBODY} pid \d+\]")
        self.assertEqual(agent.phase_dirs(), [])

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_group_the_config_names_is_admitted(self):
        agent = self.start_unix_agent("groups", "access:\n  groups: [nogroup]\n",
                                      open_socket=True)
        result = self.as_nobody(["agents", "--agent", agent.address])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIn("scratch", result.stdout)

    @unittest.skipUnless(can_drop_to_nobody(), "needs root and setpriv")
    def test_supplementary_group_the_config_names_is_admitted(self):
        agent = self.start_unix_agent("supp", "access:\n  groups: [users]\n", open_socket=True)
        users = 100  # Debian's group 'users'
        args = ["agents", "--agent", agent.address]
        result = self.as_nobody(args, groups=[users])
        self.assertEqual(result.returncode, 0, result.describe())
        result = self.as_nobody(args)
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assertIn("access.groups [users]", result.stderr)

    def test_embedded_agent_listens_on_a_socket_only_the_caller_can_reach(self):
        tmpdir = self.make_dir("stormark-itest-tmpdir-")
        ctl = self.start_stormark(["run", "--workload", "randio", "--set", "size=16M",
                                   "--set", "runtime=4s", "--set", "time_based=true",
                                   "--no-progress", "--no-db"], env={"TMPDIR": tmpdir})
        deadline = time.monotonic() + 30
        work = []
        while time.monotonic() < deadline and ctl.running():
            work = [d for d in os.listdir(tmpdir) if d.startswith("stormark-")]
            if work and os.path.exists(os.path.join(tmpdir, work[0], "agent.sock")):
                break
            time.sleep(0.05)
        self.assertTrue(work, ctl.stderr())
        work_dir = os.path.join(tmpdir, work[0])
        self.assertEqual(os.stat(work_dir).st_mode & 0o7777, 0o700)
        self.assertTrue(stat.S_ISSOCK(os.stat(os.path.join(work_dir, "agent.sock")).st_mode))
        with open(f"/proc/{ctl.proc.pid}/task/{ctl.proc.pid}/children") as f:
            children = f.read().split()
        self.assertEqual(len(children), 1, children)
        listening = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True).stdout
        self.assertNotIn(f"pid={children[0]},", listening)
        result = ctl.wait()
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertEqual(os.listdir(tmpdir), [])

    def test_plain_tcp_without_insecure_is_refused_at_start_with_one_line(self):
        work = self.make_dir()
        config = self.write_file(os.path.join(work, "agent.yaml"),
                                 f"targets:\n  scratch:\n    dir: {work}\n")
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn("refusing to listen on 127.0.0.1:0 without TLS", lines[0])
        self.assertIn("--insecure", lines[0])
        self.assertNotIn("listening on", result.stderr)

    def test_insecure_tcp_warns_that_every_local_user_can_use_it(self):
        agent = self.start_agent("insecure")
        self.assertRegex(agent.log(), r"warning: --insecure: plain text on 127\.0\.0\.1:\d+: "
                                      r"every local user, and anyone who can reach the port, "
                                      r"can command this agent")
        self.assertRegex(agent.log(), r"listening on 127\.0\.0\.1:\d+ \(plain text, --insecure,")

    def second_agent_config(self):
        work = self.make_dir()
        second = os.path.join(work, "second")
        os.mkdir(second)
        return self.write_file(os.path.join(work, "agent.yaml"),
                               f"targets:\n  second:\n    dir: {second}\n")

    def assert_only_the_first_answers(self, first):
        for _ in range(6):
            result = self.run_stormark(["agents", "--agent", first.address])
            self.assertEqual(result.returncode, 0, result.describe())
            self.assertIn("scratch", result.stdout)
            self.assertNotIn("second", result.stdout)

    def test_second_agent_on_a_held_port_exits_with_one_line(self):
        first = self.start_agent("first")
        result = self.run_agent_binary(["--listen", first.address, "--insecure",
                                        "--config", self.second_agent_config()])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn(f"cannot listen on {first.address}: the port is in use", lines[0])
        self.assert_only_the_first_answers(first)

    def test_second_agent_on_a_held_socket_exits_with_one_line(self):
        first = self.start_agent("first", unix=True)
        result = self.run_agent_binary(["--listen", first.address,
                                        "--config", self.second_agent_config()])
        self.assert_no_crash(result)
        self.assertNotEqual(result.returncode, 0, result.describe())
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn(f"another stormark-agent serves {first.address}", lines[0])
        self.assertTrue(os.path.exists(first.address[len("unix:"):]))
        self.assert_only_the_first_answers(first)

    def test_socket_of_a_killed_agent_is_replaced_and_a_clean_stop_removes_it(self):
        first = self.start_agent("killed", unix=True)
        path = first.address[len("unix:"):]
        first.send_signal(signal.SIGKILL)
        first.wait()
        self.assertTrue(os.path.exists(path), "a killed agent cannot remove its socket")
        log_path = os.path.join(os.path.dirname(path), "again.log")
        again = self.start_agent_process(["--listen", first.address, "--config",
                                          first.config_path], log_path, name="again",
                                         target_dir=first.target_dir)
        again.wait_for_log(re.escape(f"listening on {first.address} "))
        self.assertIn(f"removed the stale socket {path}", again.log())
        result = self.run_stormark(["agents", "--agent", first.address])
        self.assertEqual(result.returncode, 0, result.describe())
        again.send_signal(signal.SIGTERM)
        self.assertEqual(again.wait(), 0)
        self.assertFalse(os.path.exists(path), "a clean stop removes the socket")


if __name__ == "__main__":
    h.main()
