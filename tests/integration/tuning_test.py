"""Tuning a target's device (read_ahead_kb and the other queue knobs of a plan) reaches only a
disk the agent's config says it may change. A dir: target's filesystem sits on a disk shared
with other data, often the host's root disk: without `device:` naming that disk, or with `device:`
naming another one, the phase is refused in one line and no queue setting changes anywhere."""

import os
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


def read_ahead(device):
    return h.read_text(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb").strip()


def every_read_ahead():
    """Every block device's read_ahead_kb on this host, by name."""
    found = {}
    for name in sorted(os.listdir("/sys/block")):
        path = f"/sys/block/{name}/queue/read_ahead_kb"
        if os.path.exists(path):
            found[name] = h.read_text(path).strip()
    return found


@unittest.skipUnless(os.geteuid() == 0 and all(map(shutil.which, ("losetup", "mkfs.ext4"))),
                     "needs root, losetup and mkfs.ext4")
class TuningTest(h.StormarkTestCase):

    def phase(self, agent, knob_value):
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--target", "scratch",
                                    "--rw", "write", "--size", "4M", "--set",
                                    f"read_ahead_kb={knob_value}", "--json", json_path,
                                    "--no-progress", "--no-db"])
        self.assert_no_crash(result)
        return result, self.load_json(json_path)["phases"][0]["results"][0]

    def assert_refused(self, result, row, *said):
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn(row["status"], ("failed", "error"), row)  # Refused at Prepare.
        error = row["error"]
        self.assertNotIn("\n", error.strip(), "one line")
        self.assertIn("target 'scratch'", error)
        for text in said:
            self.assertIn(text, error)

    def test_a_dir_target_without_device_is_refused_and_no_disk_changes(self):
        loop = h.start_loop_agent(self, "untuned", "allow_tuning: true\n", device=None)
        before = every_read_ahead()
        wanted = "1024" if read_ahead(loop.device) != "1024" else "512"
        result, row = self.phase(loop.agent, wanted)
        self.assert_refused(result, row, "which other data shares", "device: /dev/")
        self.assertEqual(every_read_ahead(), before)
        # The agent still serves a phase without tuning.
        ok = self.run_stormark(["run", "--agent", loop.agent.address, "--target", "scratch",
                                "--rw", "write", "--size", "4M", "--no-progress", "--no-db"])
        self.assertEqual(ok.returncode, 0, ok.describe())

    def test_a_device_that_names_another_disk_is_refused_and_no_disk_changes(self):
        image = os.path.join(self.make_dir(), "other.img")
        with open(image, "wb") as f:
            f.truncate(8 << 20)
        other = subprocess.run(["losetup", "-f", "--show", image], check=True,
                               capture_output=True, text=True).stdout.strip()
        self.addCleanup(subprocess.run, ["losetup", "-d", other], capture_output=True)
        loop = h.start_loop_agent(self, "mistuned", "allow_tuning: true\n", device=other)
        before = every_read_ahead()
        wanted = "1024" if read_ahead(loop.device) != "1024" else "512"
        result, row = self.phase(loop.agent, wanted)
        self.assert_refused(result, row, f"its filesystem is on {loop.device}",
                            f"not on device: {other}")
        self.assertEqual(every_read_ahead(), before)

    def test_the_disk_device_names_is_tuned_and_put_back(self):
        loop = h.start_loop_agent(self, "tuned", "allow_tuning: true\n")
        before = every_read_ahead()
        wanted = "1024" if read_ahead(loop.device) != "1024" else "512"
        result, row = self.phase(loop.agent, wanted)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertEqual(row["tuning"]["read_ahead_kb"], wanted, row)
        self.assertEqual(row["tuning"]["read_ahead_kb.before"], read_ahead(loop.device), row)
        self.assertEqual(every_read_ahead(), before, "put back after the phase")


if __name__ == "__main__":
    h.main()
