"""The `command` workload and cache control, through real agents and controllers: a timed
job, its CPU and exit status in the report, the agent's policy, timeouts that kill the
whole process group, and what was done to the page cache."""

import os
import sys
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
        agent = self.start_agent(extra_config="commands:\n  enabled: true\n  allow: [ls]\n")
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
    unittest.main()
