"""A sweep on two agents: mkfs options through setup/teardown hooks on loop devices this test
creates, a read-ahead knob the agents apply and restore, and three repetitions; one command
ends with the summary table of medians and spreads."""

import json
import os
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


def run(argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout.strip()


class SweepTest(h.StormarkTestCase):

    def make_loop_host(self, name):
        """A 64 MiB loop device with ext4, mounted on the agent's target directory."""
        base = self.make_dir(f"stormark-itest-{name}-")
        image = os.path.join(base, "disk.img")
        with open(image, "wb") as f:
            f.truncate(64 * MIB)
        device = run(["losetup", "-f", "--show", image])
        self.addCleanup(subprocess.run, ["losetup", "-d", device], capture_output=True)
        mnt = os.path.join(base, "mnt")
        os.mkdir(mnt)
        run(["mkfs.ext4", "-q", "-F", device])
        run(["mount", device, mnt])
        # Registered last, so it runs first: whatever the hooks left mounted goes.
        self.addCleanup(subprocess.run, ["umount", "-R", "-l", mnt], capture_output=True)
        self.write_file(os.path.join(base, "device"), device)
        return base, mnt, device

    def start_loop_agent(self, name):
        base, mnt, device = self.make_loop_host(name)
        config = self.write_file(
            os.path.join(base, "agent.yaml"),
            f"targets:\n  scratch:\n    dir: {mnt}\n"
            "commands: {enabled: true}\nallow_tuning: true\n")
        log_path = os.path.join(base, "agent.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [h.binary("stormark-agent"), "--listen", "127.0.0.1:0", "--config", config],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=h._die_with_parent)
        self.addCleanup(h._stop_process, proc)
        agent = h.Agent(name, proc, None, mnt, log_path, config)
        agent.address = agent.wait_for_log(h._LISTENING.pattern).group(1)
        return agent, device

    def read_ahead(self, device):
        with open(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb") as f:
            return f.read().strip()

    def test_mkfs_sweep_with_knob_and_repeats_on_two_agents(self):
        agents = [self.start_loop_agent(n) for n in ("a", "b")]
        before = [self.read_ahead(dev) for _, dev in agents]
        dev_of = '"$(cat "$STORMARK_TARGET_DIR/../device")"'
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agents[0][0].address}", labels: {{transport: loop}}}}
  - {{name: right, address: "{agents[1][0].address}", labels: {{transport: loop}}}}
repeat: 3
sweep:
  blocksize: [1024, 4096]
  read_ahead_kb: [64, 512]
setup:
  - umount "$STORMARK_TARGET_DIR" && mkfs.ext4 -q -F -b {{blocksize}} {dev_of} && mount {dev_of} "$STORMARK_TARGET_DIR"
teardown:
  - sync
phases:
  - name: fsblock
    workload: command
    exec: stat -f -c %S .
  - name: write
    workload: stream
    rw: write
    size: 8M
    bs: 64k
    fdatasync: true
""")
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-progress"],
                                   timeout=240)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertIn("Summary: median of 3 runs", result.stdout)
        summary = result.stdout.split("Summary: median of 3 runs")[1]
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout[-1500:])
        # The plan labels both hosts 'loop', which the via column shows.
        self.assertRegex(summary, r"left\s+loop\s+scratch\s+1024\s+64\s")
        self.assertRegex(summary, r"right\s+loop\s+scratch\s+4096\s+512\s")
        self.assertNotIn("labelled 'loop'", result.stdout)  # The agents detected loop too.

        report = self.load_json(json_path)
        self.assertEqual(len(report["phases"]), 4 * 3 * 2)
        self.assertEqual({a["host"]: a["labels"] for a in report["agents"]},
                         {"left": {"transport": "loop"}, "right": {"transport": "loop"}})
        for phase in report["phases"]:
            point = phase["sweep_point"]
            for row in phase["results"]:
                self.assertEqual(row["status"], "succeeded", row)
                if phase["name"] == "fsblock":
                    # The hook really made the filesystem the sweep point asked for.
                    self.assertEqual(row["resolved"]["stdout_tail"].strip(), point["blocksize"])
                else:
                    self.assertEqual(row["tuning"]["read_ahead_kb"], point["read_ahead_kb"])
        # The agents put read-ahead back, and left nothing in the targets.
        self.assertEqual([self.read_ahead(dev) for _, dev in agents], before)
        for agent, _ in agents:
            self.assertEqual(agent.phase_dirs(), [])


if __name__ == "__main__":
    unittest.main()
