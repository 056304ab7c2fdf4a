"""The README's and docs/' fenced blocks marked ```sh runnable: each runs, as one bash script
with -e, from the source tree, with the built programs first on PATH, a results database and
temporary files of its own, and must succeed. Blocks that need a fleet, root or a network stay
unmarked."""

import glob
import os
import re
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

SOURCE = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
_FENCE = re.compile(r"^```sh runnable\n(.*?)^```$", re.M | re.S)


def runnable_blocks():
    """[(file relative to the source tree, line of the fence, text)]."""
    blocks = []
    for path in ["README.md"] + sorted(glob.glob("docs/**/*.md", root_dir=SOURCE,
                                                  recursive=True)):
        with open(os.path.join(SOURCE, path), encoding="utf-8") as f:
            text = f.read()
        for m in _FENCE.finditer(text):
            blocks.append((path, text.count("\n", 0, m.start()) + 1, m.group(1)))
    return blocks


class DocsCommandsTest(h.StormarkTestCase):

    def test_runnable_blocks_succeed(self):
        blocks = runnable_blocks()
        self.assertGreaterEqual(len(blocks), 2, "no ```sh runnable block found")
        for path, line, text in blocks:
            with self.subTest(block=f"{path}:{line}"):
                work = self.make_dir("stormark-itest-docs-")
                env = dict(os.environ, PATH=os.path.abspath(h.bin_dir()) + ":" + os.environ["PATH"],
                           XDG_DATA_HOME=work, TMPDIR=work)
                # Files the block writes (report.html) go to its own directory.
                script = f"cd {work}\nln -s {SOURCE}/examples examples\n{text}"
                done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env,
                                      stdin=subprocess.DEVNULL, capture_output=True, text=True,
                                      errors="replace", timeout=300)
                result = h.Result([path], done.returncode, done.stdout, done.stderr)
                self.assert_no_crash(result)
                self.assertEqual(done.returncode, 0, f"{path}:{line}:\n{result.describe()}")


if __name__ == "__main__":
    h.main()
