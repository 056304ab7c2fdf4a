"""A worker stuck in the kernel (state D), as on a dead network disk (axboe/fio#1004): the
agent stays responsive (heartbeats, Abort), reports the phase FAILED naming the stuck call,
refuses new phases while the thread is stuck, and takes phases again once it returns. The same
for a Prepare stuck laying out its file: past its prepare deadline the host fails with one line
naming phase and host, and the other hosts run.

The D state is real and made from things this test creates and always removes: an ext4 image
on a loop device, mounted under /var/tmp, frozen with fsfreeze (writes to a frozen
filesystem wait uninterruptibly), thawed in cleanup. Needs root; skipped otherwise."""

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

TOOLS = ("mkfs.ext4", "mount", "umount", "fsfreeze")


def run(*argv):
    subprocess.run(argv, check=True, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)


@unittest.skipUnless(os.geteuid() == 0 and all(shutil.which(t) for t in TOOLS),
                     "needs root, mkfs.ext4, mount and fsfreeze")
class StuckWorkerTest(h.StormarkTestCase):

    def frozen_filesystem_dir(self):
        """A fresh ext4 filesystem mounted on a loop device; returns (mount point, freeze,
        thaw). Cleanup thaws, unmounts (which frees the loop device) and removes the image."""
        base = self.make_dir(f"stormark-stuck-{os.getpid()}-")
        image = os.path.join(base, "fs.img")
        with open(image, "wb") as f:
            f.truncate(8 << 30)  # Sparse: only what the test writes takes space.
        run("mkfs.ext4", "-q", "-F", image)
        mnt = os.path.join(base, "mnt")
        os.mkdir(mnt)
        run("mount", "-o", "loop", image, mnt)
        self.addCleanup(subprocess.run, ["umount", mnt], capture_output=True, timeout=60)
        frozen = []

        def freeze():
            run("fsfreeze", "--freeze", mnt)
            frozen.append(True)

        def thaw():
            if frozen:
                subprocess.run(["fsfreeze", "--unfreeze", mnt], capture_output=True, timeout=60)
                frozen.clear()

        # Runs before the unmount and before the agents are stopped (cleanups run last-first).
        self.addCleanup(thaw)
        return mnt, freeze, thaw

    def start_frozen_agent(self, name):
        """An agent with a target 'frozen' on a fresh ext4 filesystem that the test can freeze,
        and stuck_worker_after 2 s; returns (agent, target dir, freeze, thaw)."""
        mnt, freeze, thaw = self.frozen_filesystem_dir()
        target = os.path.join(mnt, "t")
        os.mkdir(target)
        agent = self.start_agent(name, extra_targets=f"  frozen: {{dir: {target}}}\n",
                                 extra_config="stuck_worker_after: 2s\n")
        self.addCleanup(thaw)  # Registered after the agent: runs before it is stopped.
        return agent, target, freeze, thaw

    def assert_refuses_phases_until_thawed(self, agent, target, thaw):
        """While its worker is stuck the agent answers and refuses new phases, saying why;
        thawed, the I/O returns, the phase's files in `target` go and it takes phases again."""
        again = self.run_stormark(["run", "--agent", agent.address, "--target", "scratch",
                                   "--rw", "write", "--size", "1M", "--no-progress"])
        self.assertEqual(again.returncode, 1, again.describe())
        self.assertIn("stuck in the kernel", again.stdout + again.stderr)
        thaw()
        deadline = time.monotonic() + 30
        while os.listdir(target) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.assertEqual(os.listdir(target), [], agent.log())
        ok = self.run_stormark(["run", "--agent", agent.address, "--target", "frozen",
                                "--rw", "write", "--size", "1M", "--no-progress"])
        self.assertEqual(ok.returncode, 0, ok.describe())

    def test_stuck_write_fails_the_phase_and_blocks_the_agent_until_it_returns(self):
        agent, target, freeze, thaw = self.start_frozen_agent("stuck")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--target", "frozen",
                                   "--rw", "write", "--size", "4G", "--bs", "4k", "--direct",
                                   "--no-fdatasync", "--deadline", "3s",
                                   "--heartbeat-interval", "500ms", "--heartbeat-timeout", "3s",
                                   "--json", json_path, "--no-progress"])
        phase_id = agent.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(0.6)  # The workload is writing.
        freeze()
        result = ctl.wait(timeout=60)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        r = self.result_for(self.load_json(json_path)["phases"][0], agent.address)
        self.assertEqual(r["status"], "failed", r)
        # The deadline stopped it; the agent said why it could not stop.
        self.assertIn("phase deadline: ran ", r["error"])
        self.assertRegex(r["error"], r"worker stuck in the kernel in (write|pwrite64|openat|"
                                     r"fdatasync)[^;]* for \d+ s; the I/O may never return")
        # Heartbeats went on: the host was not given up.
        self.assertNotIn("no heartbeat", r["error"])
        # The stuck call is a field of its own in the report, for tools.
        self.assertRegex(r.get("stuck_worker", ""),
                         r"^(write|pwrite64|openat|fdatasync) .* for \d+ s$", r)

        self.assert_refuses_phases_until_thawed(agent, target, thaw)
        self.assertIn(phase_id, agent.log())

    def test_stuck_prepare_fails_its_host_past_the_prepare_deadline_and_the_others_run(self):
        stuck, target, freeze, thaw = self.start_frozen_agent("stuckprep")
        other = self.start_agent("other")
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: frozen-host, address: "{stuck.address}", target: frozen}}
  - {{name: good-host, address: "{other.address}", target: scratch}}
phases:
  - {{name: layout, workload: stream, rw: read, size: 64M, bs: 1M}}
""")
        json_path = os.path.join(work, "out.json")
        freeze()  # The read phase's lay-out write (its Prepare) now blocks in the kernel.
        started = time.monotonic()
        result = self.run_stormark(["run", "--plan", plan, "--prepare-deadline", "3s",
                                    "--heartbeat-interval", "500ms", "--json", json_path,
                                    "--no-progress"], timeout=90)
        took = time.monotonic() - started
        self.assertEqual(result.returncode, 1, result.describe())
        self.assert_no_crash(result)
        # Bounded: the 3 s deadline, the agent's 2 s stuck_worker_after, and some slack.
        self.assertLess(took, 30, result.describe())
        phase = self.load_json(json_path)["phases"][0]
        r = self.result_for(phase, "frozen-host")
        self.assertEqual(r["status"], "error", r)  # No result: it never started.
        self.assertRegex(r["error"], r"^prepare of phase 'layout' on host frozen-host did not "
                                     r"finish in 3 s \(its prepare_deadline\); aborted there: ")
        self.assertRegex(r["error"], r"worker stuck in the kernel in \S+.* while preparing phase")
        self.assertIn("prepare of phase 'layout' on host frozen-host did not finish in 3 s",
                      result.stdout + result.stderr)
        # The other host was not held back: it prepared, ran and its result is kept.
        self.assert_succeeded_result(phase, self.result_for(phase, "good-host"), 64 << 20)
        self.assertEqual(os.listdir(other.target_dir), [], other.log())
        self.assert_refuses_phases_until_thawed(stuck, target, thaw)


if __name__ == "__main__":
    h.main()
