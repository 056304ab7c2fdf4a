"""The agent checks owners and modes as OpenSSH's StrictModes does (agent/config/strict_modes.h).

The attack: a root agent's dir target that `nobody` owns, inside a world-writable sticky
directory, lets `nobody` swap the target for a symbolic link and aim the agent's writes at
root's files. A real agent, running as root, is given such a target beside sound ones: each
Prepare on it is refused with one line that names the path, its owner, its mode and the fix,
nothing is written through it, and the agent goes on serving the other targets. The attacker's
steps run as `nobody` (runuser). Needs root; skipped otherwise.
"""

import os
import pwd
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


def _nobody_uid():
    try:
        return pwd.getpwnam("nobody").pw_uid
    except KeyError:
        return None


class StrictModesTest(h.StormarkTestCase):

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("needs root: the agent runs as root and the attacker as nobody")
        if _nobody_uid() is None or shutil.which("runuser") is None:
            self.skipTest("needs the user 'nobody' and runuser")
        # A sticky, world-writable directory like /var/tmp, inside this test's own one.
        self.work = self.make_dir("stormark-itest-strict-")
        os.chmod(self.work, 0o755)  # So that nobody can reach pub/.
        self.pub = os.path.join(self.work, "pub")
        os.mkdir(self.pub)
        os.chmod(self.pub, 0o1777)

    def as_nobody(self, *argv):
        subprocess.run(["runuser", "-u", "nobody", "--"] + list(argv), check=True, timeout=10,
                       stdin=subprocess.DEVNULL)

    def run_stream(self, agent, target, expect):
        result = self.run_stormark(["run", "--agent", agent.address, "--target", target,
                                    "--rw", "write", "--size", "1M", "--no-progress", "--no-db"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        return result

    @staticmethod
    def refusal(path):
        nobody = f"nobody (uid {_nobody_uid()})"
        return (f"{path} is owned by {nobody}, mode 0777: it must be owned by root or by the "
                f"agent's user (root) and not writable by group or others; fix: chown root "
                f"{path} && chmod go-w {path}")

    def test_target_owned_by_nobody_is_refused_until_fixed_and_others_still_served(self):
        theirs = os.path.join(self.pub, "stormark")
        self.as_nobody("mkdir", "-m", "0777", theirs)
        ours = os.path.join(self.pub, "ours")  # Root's, in the same sticky directory: sound.
        os.mkdir(ours, 0o755)
        agent = self.start_agent("strict", extra_targets=(
            f"  theirs: {{dir: {theirs}}}\n  ours: {{dir: {ours}}}\n"))
        # At start it is a warning: the owner may be fixed while the agent runs.
        agent.wait_for_log(re.escape(f"warning: target 'theirs': every phase on it is refused "
                                     f"until this is fixed: {self.refusal(theirs)}"))

        result = self.run_stream(agent, "theirs", expect=1)
        line = f"target 'theirs': {self.refusal(theirs)}"
        self.assertIn(line, result.stdout + result.stderr)
        self.assertEqual(os.listdir(theirs), [])
        agent.wait_for_log(r"refused prepare of phase '[^']+' on target 'theirs': " +
                           r"[^\n]*is owned by nobody")

        # The same agent goes on serving its sound targets, the sticky directory's one too.
        for target, path in (("ours", ours), ("scratch", agent.target_dir)):
            self.run_stream(agent, target, expect=0)
            self.assertEqual(os.listdir(path), [], target)

        # Checked at each Prepare: once root fixes it, no restart is needed.
        os.chown(theirs, 0, 0)
        os.chmod(theirs, 0o755)
        self.run_stream(agent, "theirs", expect=0)
        self.assertEqual(os.listdir(theirs), [])

    def test_target_swapped_for_a_symlink_writes_nothing_through_it(self):
        victim = os.path.join(self.work, "victim")  # Stands for /etc: root's, 0755.
        os.mkdir(victim, 0o755)
        theirs = os.path.join(self.pub, "stormark")
        self.as_nobody("mkdir", "-m", "0755", theirs)
        agent = self.start_agent("swap", extra_targets=f"  theirs: {{dir: {theirs}}}\n")
        # The attack: nobody owns the entry, so the sticky bit lets them rename it.
        self.as_nobody("mv", theirs, theirs + ".old")
        self.as_nobody("ln", "-s", victim, theirs)

        result = self.run_stream(agent, "theirs", expect=1)
        self.assertIn(f"target 'theirs': {theirs} is a symbolic link owned by nobody",
                      result.stdout + result.stderr)
        self.assertEqual(os.listdir(victim), [])
        self.run_stream(agent, "scratch", expect=0)

    def test_config_file_others_may_write_refuses_to_start(self):
        target = os.path.join(self.work, "target")
        os.mkdir(target, 0o700)
        config = self.write_file(os.path.join(self.work, "agent.yaml"),
                                 f"targets:\n  scratch: {{dir: {target}}}\n")
        os.chmod(config, 0o666)
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 2, result.describe())
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertIn(f"config: {config} is owned by root (uid 0), mode 0666", result.stderr)
        self.assertIn(f"fix: chmod go-w {config}", result.stderr)


if __name__ == "__main__":
    h.main()
