"""A controller that may not start the threads its fleet needs says so, naming the limit, before
it connects: 40 agents on loopback ports, the controller in a pids cgroup of this test's
(pids.max 30). Before the check, it fell back to serving hosts one after another, gRPC starved
of threads, and 32 healthy agents were reported as "GetInfo timed out: the agent accepted the
connection but did not answer"; the phase ran on 3 of them. Now: exit 2, one line with the
limit, no agent blamed, and the same run outside the cgroup succeeds on all 40."""

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

    def setUp(self):
        self.cgroup = os.path.join(pids_base(), f"stormark-itest-threads-{os.getpid()}")
        os.mkdir(self.cgroup)
        self.addCleanup(os.rmdir, self.cgroup)  # Empty again once the controller has exited.
        with open(os.path.join(self.cgroup, "pids.max"), "w", encoding="utf-8") as f:
            f.write("30")

    def test_a_thread_limit_below_the_fleet_is_named_before_any_agent_is_blamed(self):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 4096), hard), hard))
        agents = [self.start_agent(f"t{i}", extra_targets="  sink: {null: true}\n")
                  for i in range(AGENTS)]
        args = [h.binary("stormark"), "run", "--workload", "randio", "--target", "sink",
                "--set", "rw=randread", "--set", "rate_iops=100", "--set", "runtime=1s",
                "--set", "time_based=true", "--no-db", "--no-progress"]
        for agent in agents:
            args += ["--agent", agent.address]
        procs = os.path.join(self.cgroup, "cgroup.procs")

        def enter():
            with open(procs, "w", encoding="utf-8") as f:
                f.write(str(os.getpid()))

        done = subprocess.run(args, capture_output=True, text=True, preexec_fn=enter, timeout=120,
                              stdin=subprocess.DEVNULL)
        self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
        cgroup = "/" + os.path.basename(self.cgroup)
        self.assertRegex(done.stderr, rf"^stormark: the controller may start \d+ more threads "
                                      rf"\(pids\.max 30 of cgroup {re.escape(cgroup)} \(\d+ in "
                                      rf"use\)\), and a run of {AGENTS} hosts needs about "
                                      rf"{AGENTS + 24} \(one per host, 24 beside\): raise that "
                                      rf"limit, or split the hosts across controllers\n$")
        self.assertNotIn("did not answer", done.stdout + done.stderr)
        self.assertEqual(done.stdout, "")

        # Outside the cgroup the same fleet runs, every agent served.
        result = self.run_stormark(args[1:], timeout=120)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertIn(f"  {AGENTS} agents: {AGENTS} answering\n", result.stdout)
        self.assertIn(f"{AGENTS} ok", result.stdout)


if __name__ == "__main__":
    h.main()
