"""The `command` workload and cache control, through real agents and controllers: a timed
job, its CPU and exit status in the report, the agent's policy, timeouts that kill the
whole process group, and what was done to the page cache."""

import hashlib
import io
import os
import pwd
import re
import sys
import tarfile
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


def pid_running(pid):
    """True while `pid` runs (a zombie that no init reaps counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class CommandTest(h.StormarkTestCase):

    def setUp(self):
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def only_result(self):
        report = self.load_json(self.json_path)
        self.assertEqual(len(report["phases"]), 1)
        phase = report["phases"][0]
        self.assertEqual(len(phase["results"]), 1)
        return phase, phase["results"][0]

    def test_embedded_command_is_timed_with_sync_and_dropped_cache(self):
        data = self.make_dir("stormark-itest-data-")
        result = self.run_stormark(
            ["run", "--workload", "command", "--dir", data, "--cache", "drop",
             "--set", "command=head -c 33554432 /dev/urandom > out && echo wrote",
             "--set", "sync=true", "--json", self.json_path, "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertIn("page cache dropped before the timed region", result.stdout)
        self.assertRegex(result.stdout, r"local\s+scratch\s+[0-9.]+ s\s+[0-9.]+ s")
        phase, row = self.only_result()
        self.assertEqual(phase["workload"]["type"], "command")
        self.assertEqual(phase["cache"], "drop")
        self.assertEqual(row["status"], "succeeded")
        self.assertTrue(row["cache"]["dropped"], row["cache"])
        self.assertTrue(row["cache"]["synced"])
        self.assertEqual(row["resolved"]["exit_status"], "exited with status 0")
        self.assertEqual(row["resolved"]["stdout_tail"], "wrote\n")
        [m] = row["measurements"]
        self.assertEqual(m["name"], "command")
        # Reading 32 MiB of /dev/urandom is CPU in the kernel: the command's, not the agent's.
        self.assertGreater(m["cpu_percent"], 5)
        self.assertGreater(int(row["resolved"]["sync_nanos"]), 0)
        self.assertEqual(os.listdir(data), [], "the command's files were not removed")

    def test_an_agent_refuses_commands_unless_its_config_enables_them(self):
        agent = self.start_agent()
        result = self.run_stormark(["run", "--agent", agent.address, "--workload", "command",
                                    "--set", "command=touch /tmp/should-not-exist",
                                    "--no-progress"])
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        self.assertIn("commands: {enabled: true}", result.stderr + result.stdout)
        self.assertEqual(agent.phase_dirs(), [])

    def test_allow_list_and_a_failing_command(self):
        agent = self.start_agent(
            extra_config="commands:\n  enabled: true\n  allow:\n    - [ls, \"[!-]*\"]\n")
        refused = self.run_stormark(["run", "--agent", agent.address, "--workload", "command",
                                     "--set", "exec=true", "--no-progress"])
        self.assertEqual(refused.returncode, 1, refused.describe())
        self.assertIn("commands.allow", refused.stdout + refused.stderr)

        failed = self.run_stormark(["run", "--agent", agent.address, "--workload", "command",
                                    "--set", "exec=ls /no/such/dir", "--json", self.json_path,
                                    "--no-progress"])
        self.assertEqual(failed.returncode, 1, failed.describe())
        self.assertIn("exited with status 2", failed.stdout)
        self.assertIn("/no/such/dir", failed.stdout)
        _, row = self.only_result()
        self.assertEqual(row["status"], "failed")
        self.assertNotIn("measurements", row)  # A failed run is never a timing.
        self.assertEqual(agent.phase_dirs(), [])

    def test_timeout_kills_the_process_group_and_cleans_up(self):
        agent = self.start_agent(extra_config="commands: {enabled: true}\n")
        start = time.monotonic()
        result = self.run_stormark(
            ["run", "--agent", agent.address, "--workload", "command",
             "--set", "command=sleep 120 & echo $! > child.pid; mkdir -p d/e; sleep 120",
             "--set", "timeout=1s", "--no-progress"], timeout=60)
        self.assertLess(time.monotonic() - start, 30)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("timed out after 1 s", result.stdout)
        self.assertEqual(agent.phase_dirs(), [])
        # The background sleep was in the command's process group: it is gone too. Its pid
        # file went with the phase directory, so look for any sleep 120 we started.
        leftovers = [p for p in os.listdir("/proc") if p.isdigit() and pid_running(int(p))
                     and self._cmdline(p) == "sleep\x00120\x00"
                     and self._parent_is_agent_or_init(p, agent.pid)]
        self.assertEqual(leftovers, [])

    def _nobody_or_skip(self):
        if os.geteuid() != 0:
            self.skipTest("needs root (switching users)")
        try:
            return pwd.getpwnam("nobody")
        except KeyError:
            self.skipTest("no user nobody")

    def _victim_and_archive(self):
        """A root-owned victim file (0644) in a directory nobody can search, an archive
        nobody can read that holds hello.txt and a 'victim' of its own, and a script that
        tries to overwrite the victim."""
        victim_dir = self.make_dir("stormark-itest-victim-")
        os.chmod(victim_dir, 0o755)
        victim = self.write_file(os.path.join(victim_dir, "victim"), "precious\n")
        os.chmod(victim, 0o644)
        archive = os.path.join(victim_dir, "x.tar")
        with tarfile.open(archive, "w") as tar:
            for name, data in (("hello.txt", b"hello\n"), ("victim", b"pwned\n")):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        os.chmod(archive, 0o644)
        evil = self.write_file(os.path.join(victim_dir, "evil.sh"),
                               "#!/bin/sh\nid -u; stat -c %U .\n"
                               f"echo pwned > {victim} || echo victim refused\nexit 0\n")
        os.chmod(evil, 0o755)
        return victim, archive, evil

    @staticmethod
    def _digest(path):
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()

    def _command(self, agent, argv, json_path=None):
        args = ["run", "--agent", agent.address, "--workload", "command",
                "--set", "exec=" + " ".join(argv), "--no-progress"]
        if json_path:
            args += ["--json", json_path]
        result = self.run_stormark(args)
        self.assert_no_crash(result)
        return result

    def test_an_argv_pattern_refuses_tars_escapes_and_runs_the_rest_as_nobody(self):
        nobody = self._nobody_or_skip()
        victim, archive, evil = self._victim_and_archive()
        before = self._digest(victim)
        agent = self.start_agent(extra_config=(
            "commands:\n  enabled: true\n  user: nobody\n"
            "  allow:\n    - [tar, -xf, \"*.tar\"]\n"))
        escapes = {
            3: ["tar", "-xf", archive, "--checkpoint=1", f"--checkpoint-action=exec={evil}"],
            1: ["tar", "-I", evil, "-xf", archive],
        }
        for index, argv in escapes.items():
            refused = self._command(agent, argv)
            self.assertEqual(refused.returncode, 1, refused.describe())
            out = refused.stdout + refused.stderr
            self.assertIn(f"argv[{index}] {argv[index]}", out)
            self.assertIn('(rules: [tar, -xf, "*.tar"])', out)
            self.assertNotIn("pwned", out)
        self.assertEqual(self._digest(victim), before)

        ran = self._command(agent, ["tar", "-xf", archive], self.json_path)
        self.assertEqual(ran.returncode, 0, ran.describe())
        _, row = self.only_result()
        self.assertEqual(row["status"], "succeeded")
        self.assertEqual(row["resolved"]["user"], "nobody")
        self.assertEqual(os.path.basename(row["resolved"]["program"]), "tar")
        self.assertEqual(self._digest(victim), before)
        self.assertEqual(agent.phase_dirs(), [])
        self.assertEqual(nobody.pw_name, "nobody")

    def test_even_a_rule_that_grants_a_shell_grants_only_nobodys(self):
        nobody = self._nobody_or_skip()
        victim, archive, evil = self._victim_and_archive()
        before = self._digest(victim)
        agent = self.start_agent(extra_config=(
            "commands:\n  enabled: true\n  allow:\n    - [tar, \"**\"]\n"))
        # tar runs the script, as nobody, in the phase directory nobody was given.
        shell = self._command(agent, ["tar", "-xf", archive, "--checkpoint=1",
                                      f"--checkpoint-action=exec={evil}"], self.json_path)
        self.assertEqual(shell.returncode, 0, shell.describe())
        _, row = self.only_result()
        self.assertEqual(row["resolved"]["stdout_tail"].split("\n")[:3],
                         [str(nobody.pw_uid), "nobody", "victim refused"], row["resolved"])
        # Extracting over the victim itself: refused by the kernel, and the hint says who ran it.
        over = self._command(agent, ["tar", "-xf", archive, "-C", os.path.dirname(victim)],
                             self.json_path)
        self.assertEqual(over.returncode, 1, over.describe())
        self.assertIn("(the command ran as user 'nobody', the agent's commands.user)", over.stdout)
        _, row = self.only_result()
        # Neither a new file in root's directory nor the victim (which tar may not remove).
        self.assertIn("hello.txt: Cannot open: Permission denied", row["resolved"]["stderr_tail"])
        self.assertIn("victim: Cannot open", row["resolved"]["stderr_tail"])
        self.assertEqual(self._digest(victim), before)
        self.assertEqual(agent.phase_dirs(), [])

    def _refusal(self, agent, program):
        """The controller's error line for `exec=PROGRAM` on `agent`, and the whole output."""
        result = self._command(agent, [program])
        self.assertEqual(result.returncode, 1, result.describe())
        out = result.stdout + result.stderr
        lines = [line for line in out.splitlines()
                 if "commands" in line or "cannot run" in line]
        self.assertTrue(lines, result.describe())
        return "\n".join(lines), out

    def test_a_refusal_does_not_tell_whether_a_path_exists(self):
        if os.geteuid() != 0:
            self.skipTest("needs root: /root must be closed to the caller's commands")
        configs = {
            "disabled": "",
            "allow-list": "commands:\n  enabled: true\n  allow:\n    - [tar, -xf, \"*.tar\"]\n",
            "any-as-nobody": "commands: {enabled: true}\n",
        }
        for what, config in configs.items():
            with self.subTest(what):
                agent = self.start_agent(name=what, extra_config=config)
                there, _ = self._refusal(agent, "/root/.bashrc")
                missing, _ = self._refusal(agent, "/root/does-not-exist")
                if what == "disabled":
                    self.assertEqual(there, missing)  # Byte for byte.
                # Beyond the name each repeats, and the phase (directory) ids, the same words.
                norm = lambda text, name: re.sub(r"\.stormark-[^ /:]+", ".stormark-ID",
                                                 text.replace(name, "NAME"))
                self.assertEqual(norm(there, "/root/.bashrc"),
                                 norm(missing, "/root/does-not-exist"))
                self.assertNotIn("No such file", there + missing)
                # The agent's own stderr, by /proc: never resolved to the log file behind it.
                fd_line, fd_out = self._refusal(agent, f"/proc/{agent.pid}/fd/2")
                self.assertNotIn("agent.log", fd_out)
                self.assertNotIn(os.path.dirname(agent.target_dir), fd_line.replace(
                    agent.target_dir, "TARGET"))

    @staticmethod
    def _cmdline(pid):
        try:
            with open(f"/proc/{pid}/cmdline", encoding="utf-8", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    @staticmethod
    def _parent_is_agent_or_init(pid, agent_pid):
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        return ppid in (1, agent_pid)


if __name__ == "__main__":
    h.main()
