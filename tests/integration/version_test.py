"""`--version` of both programs: the release, the git commit of the build and the protocol
version, the three lines help2man and bug reports read."""

import os
import re
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


class VersionTest(unittest.TestCase):

    def check(self, program):
        done = subprocess.run([h.binary(program), "--version"], capture_output=True, text=True,
                              timeout=20)
        self.assertEqual(done.returncode, 0, done.stderr)
        lines = done.stdout.splitlines()
        self.assertEqual(len(lines), 3, done.stdout)
        self.assertRegex(lines[0], rf"^{re.escape(program)} \d+\.\d+\.\d+$")
        self.assertRegex(lines[1], r"^commit ([0-9a-f]{12}(-dirty)?|unknown)$")
        self.assertRegex(lines[2], r"^protocol \d+\.\d+$")
        with open(os.path.join(SOURCE, "CMakeLists.txt"), encoding="utf-8") as f:
            release = re.search(r"project\(stormark VERSION (\S+)", f.read()).group(1)
        self.assertEqual(lines[0].split()[1], release)
        return lines

    def test_agent_version(self):
        self.check("stormark-agent")

    def test_controller_version_matches_the_agent(self):
        self.assertEqual(self.check("stormark")[1:], self.check("stormark-agent")[1:])


if __name__ == "__main__":
    h.main()
