"""The controller holds no thread per host: 40 agents on loopback ports, the controller in a pids
cgroup of this test's. Before the fleet ran on gRPC callbacks it needed a thread per host: in a
cgroup of 30 it fell back to serving hosts one after another, gRPC starved of threads, and 32
healthy agents were reported as "GetInfo timed out: the agent accepted the connection but did not
answer". Now:

- with pids.max 40 (the controller's own need, kControllerThreads = 32, and a margin), all 40
  agents run two phases, every one served, and the cgroup's peak (pids.peak, where the kernel has
  it) stays under 32;
- with pids.max 12, below what gRPC's pools alone need, the controller says so before it
  connects: exit 2, one line with the limit, no agent blamed."""

import os
import re
import resource
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

AGENTS = 40
CONTROLLER_THREADS = 32  # kControllerThreads in controller/fleet/thread_budget.h
PIDS = "/sys/fs/cgroup/pids"


def pids_base():
    """The pids controller's hierarchy: v1's, else the unified one when it has pids."""
    if os.path.isdir(PIDS):
        return PIDS
    try:
        with open("/sys/fs/cgroup/cgroup.controllers", encoding="utf-8") as f:
            return "/sys/fs/cgroup" if "pids" in f.read().split() else None
    except OSError:
        return None


@unittest.skipUnless(os.geteuid() == 0, "needs root (a pids cgroup)")
@unittest.skipUnless(pids_base(), "needs the pids cgroup controller")
class ThreadLimitTest(h.StormarkTestCase):

    def make_cgroup(self, pids_max):
        cgroup = os.path.join(pids_base(), f"stormark-itest-threads-{os.getpid()}-{pids_max}")
        os.mkdir(cgroup)
        self.addCleanup(os.rmdir, cgroup)  # Empty again once the controller has exited.
        with open(os.path.join(cgroup, "pids.max"), "w", encoding="utf-8") as f:
            f.write(str(pids_max))
        return cgroup

    def run_in(self, cgroup, args):
        procs = os.path.join(cgroup, "cgroup.procs")

        def enter():
            with open(procs, "w", encoding="utf-8") as f:
                f.write(str(os.getpid()))

        return subprocess.run(args, capture_output=True, text=True, preexec_fn=enter,
                              timeout=180, stdin=subprocess.DEVNULL)

    def test_forty_hosts_run_in_a_cgroup_of_the_controllers_own_need(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
        agents = [self.start_agent(f"t{i}", extra_targets="  sink: {null: true}\n")
                  for i in range(AGENTS)]
        args = [h.binary("stormark"), "run", "--workload", "randio", "--target", "sink",
                "--set", "rw=randread", "--set", "rate_iops=100", "--set", "runtime=1s",
                "--set", "time_based=true", "--set", "repeat=2", "--no-db", "--no-progress"]
        for agent in agents:
            args += ["--agent", agent.address]

        roomy = self.make_cgroup(CONTROLLER_THREADS + 8)  # A margin over the check.
        done = self.run_in(roomy, args)
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn(f"  {AGENTS} agents: {AGENTS} answering\n", done.stdout)
        self.assertGreaterEqual(done.stdout.count(f"{AGENTS} ok"), 2, done.stdout)  # Each phase.
        self.assertNotIn("FAILED", done.stdout)
        self.assertNotIn("did not answer", done.stdout + done.stderr)
        peak = os.path.join(roomy, "pids.peak")
        if os.path.exists(peak):
            with open(peak, encoding="utf-8") as f:
                self.assertLess(int(f.read()), CONTROLLER_THREADS)

        tight = self.make_cgroup(12)
        done = self.run_in(tight, args)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        cgroup = "/" + os.path.basename(tight)
        self.assertRegex(done.stderr, rf"^stormark: the controller may start \d+ more threads "
                                      rf"\(pids\.max 12 of cgroup {re.escape(cgroup)} \(\d+ in "
                                      rf"use\)\), and it needs about \d+ more "
                                      rf"\({CONTROLLER_THREADS} in all, whatever the number of "
                                      rf"hosts\): raise that limit\n$")
        self.assertNotIn("did not answer", done.stdout + done.stderr)
        self.assertEqual(done.stdout, "")


if __name__ == "__main__":
    h.main()
