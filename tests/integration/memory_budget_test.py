"""The memory budget (agent/config/policy.h, common/memory_estimate.h): a phase whose buffers or
tables would exhaust the host is refused at Prepare with one line naming the parameters that
make it that large, and a phase whose memory the host cannot give after all (an allocation
that fails) fails by itself. Either way the agent stays up and serves the next phase; before
the budget, `iodepth 4096 bs 1M` got the agent killed by the OOM killer, or std::bad_alloc
terminated it and the controller reported a closed connection."""

import os
import re
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

GIB = 1 << 30
MIB = 1 << 20


def host_ram_bytes():
    with open("/proc/meminfo", encoding="ascii") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    return 0


def vm_size_bytes(pid):
    """The address space a process maps now (VmSize), in bytes."""
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmSize for process {pid}")


class MemoryBudgetTest(h.StormarkTestCase):

    def run_phase(self, agent, args, timeout=120):
        return self.run_stormark(["run", "--agent", agent.address, "--no-progress", "--no-db"]
                                 + args, timeout=timeout)

    def refused(self, agent, args, expect):
        """Runs a phase the agent must refuse; returns the one output line that says why,
        after checking it is there once, names `expect`, and ends by saying what to do."""
        result = self.run_phase(agent, args)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        lines = [l for l in (result.stdout + result.stderr).splitlines() if "needs " in l and
                 "limits.max_memory" in l]
        self.assertEqual(len(lines), 1, result.describe())
        self.assertIn(expect, lines[0], result.describe())
        self.assertTrue(lines[0].endswith("or raise limits.max_memory"), lines[0])
        self.assertNotIn("closed the connection", result.stdout + result.stderr)
        self.assertEqual(agent.phase_dirs(), [])
        return lines[0]

    def assert_serves_a_phase(self, agent):
        self.assertIsNone(agent.proc.poll(), f"the agent died:\n{agent.log()}")
        result = self.run_phase(agent, ["--rw", "write", "--size", "4M", "--bs", "64k"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIsNone(agent.proc.poll(), f"the agent died:\n{agent.log()}")

    def test_hostile_values_are_refused_and_the_agent_serves_the_next_phase(self):
        agent = self.start_agent("budget", extra_config="limits: {max_memory: 1G}\n")
        line = self.refused(agent, ["--workload", "randio", "--set", "rw=randread",
                                    "--set", "iodepth=4096", "--set", "bs=1M",
                                    "--set", "size=64M", "--set", "engine=io_uring"],
                            "randio needs 8.00 GiB of memory (buffers: iodepth 4096 x bs 1 MiB x "
                            "1 job, 2 MiB each), over this agent's limits.max_memory of 1 GiB; "
                            "lower iodepth, bs or numjobs, or raise limits.max_memory")
        self.assertIn(agent.address, line)  # The controller says which host refused.
        self.refused(agent, ["--workload", "randio", "--set", "rw=randread", "--set", "bs=64M",
                             "--set", "numjobs=256", "--set", "size=64M"],
                     "(buffers: iodepth 1 x bs 64 MiB x 256 jobs)")
        self.refused(agent, ["--workload", "postmark", "--set", "number=10000000"],
                     "lower number, or raise limits.max_memory")
        self.refused(agent, ["--workload", "bonnie", "--set", "size=64M", "--set", "chunk=64M",
                             "--set", "seekers=64"],
                     "(chunk buffers: (1 + seekers 64) x chunk 64 MiB)")
        agent.wait_for_log(r"refused prepare of phase '[^']+' on target 'scratch': randio needs "
                           r"8\.00 GiB of memory")
        self.assert_serves_a_phase(agent)

    def test_the_default_budget_is_a_quarter_of_the_ram(self):
        ram = host_ram_bytes()
        if ram == 0 or ram >= 64 * GIB:
            h.skip_for_host(self, f"the test needs less than 64 GiB of RAM (this one: {ram} bytes)")
        agent = self.start_agent("default")
        self.refused(agent, ["--workload", "randio", "--set", "rw=randread", "--set", "bs=64M",
                             "--set", "numjobs=256", "--set", "size=64M"],
                     "(a quarter of its RAM); lower iodepth, bs or numjobs")
        self.assert_serves_a_phase(agent)

    def make_memory_cgroup(self, limit_bytes):
        """A cgroup v1 memory cgroup of this test's, with `limit_bytes` as its limit; removed
        at cleanup (after the agents in it are stopped). Returns its directory."""
        root = "/sys/fs/cgroup/memory"
        if not os.path.exists(os.path.join(root, "cgroup.procs")) or os.geteuid() != 0:
            self.skipTest("needs root and a cgroup v1 memory hierarchy at " + root)
        path = os.path.join(root, f"stormark-itest-{os.getpid()}-{id(self):x}")
        os.mkdir(path)
        self.addCleanup(os.rmdir, path)
        with open(os.path.join(path, "memory.limit_in_bytes"), "w", encoding="ascii") as f:
            f.write(str(limit_bytes))
        return path

    def test_the_default_budget_follows_the_agents_memory_cgroup(self):
        cgroup = self.make_memory_cgroup(GIB)
        procs = os.path.join(cgroup, "cgroup.procs")

        def join_cgroup():
            with open(procs, "w", encoding="ascii") as f:
                f.write(str(os.getpid()))

        agent = self.start_agent("cgroup", preexec=join_cgroup)
        with open(procs, encoding="ascii") as f:
            self.assertIn(str(agent.pid), f.read().split())
        self.refused(agent, ["--workload", "randio", "--set", "rw=randread",
                             "--set", "iodepth=512", "--set", "bs=4k", "--set", "numjobs=256",
                             "--set", "size=4M"],
                     "over this agent's limits.max_memory of 512 MiB (half of the 1 GiB its "
                     "memory cgroup allows)")
        self.assert_serves_a_phase(agent)

    @unittest.skipUnless(shutil.which("prlimit"), "needs prlimit (util-linux)")
    def test_memory_the_host_cannot_give_fails_the_phase_not_the_agent(self):
        # Within the budget, but the agent's address space is limited to what it maps after a
        # first phase plus 256 MiB: the allocations fail as on a host out of memory.
        agent = self.start_agent("oom", extra_config="limits: {max_memory: 4G}\n")
        self.assert_serves_a_phase(agent)
        limit = vm_size_bytes(agent.pid) + 256 * MIB
        done = subprocess.run(["prlimit", "--pid", str(agent.pid), f"--as={limit}:{limit}"],
                              capture_output=True, text=True, timeout=10)
        self.assertEqual(done.returncode, 0, done.stderr)

        # 1 GiB of randio buffers: the job that finds none left fails the phase's Prepare.
        result = self.run_phase(agent, ["--workload", "randio", "--set", "rw=randread",
                                        "--set", "bs=64M", "--set", "numjobs=16",
                                        "--set", "size=64M"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertRegex(result.stdout + result.stderr,
                         r"randio: job \d+, buffer 1 of iodepth 1: out of memory: cannot "
                         r"allocate an I/O buffer of 64 MiB")
        self.assertEqual(agent.phase_dirs(), [])
        self.assertIsNone(agent.proc.poll(), f"the agent died:\n{agent.log()}")

        # PostMark's file table (2 x 10M slots, 305 MiB) is a std::vector deep in the
        # workload: its std::bad_alloc fails the phase at the top of the set-up's thread.
        result = self.run_phase(agent, ["--workload", "postmark", "--set", "number=10000000",
                                        "--set", "size=1:2", "--set", "transactions=1"],
                                timeout=60)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("postmark set-up: out of memory (std::bad_alloc)",
                      result.stdout + result.stderr)
        self.assertEqual(agent.phase_dirs(), [])

        # Threads the host cannot start (their stacks do not fit) fail the run the same way.
        result = self.run_phase(agent, ["--workload", "randio", "--set", "rw=randread",
                                        "--set", "bs=4k", "--set", "numjobs=256",
                                        "--set", "size=1M"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertRegex(result.stdout + result.stderr,
                         r"randio: cannot start the thread of job \d+ of 256: .* \(lower numjobs\)")
        result = self.run_phase(agent, ["--workload", "bonnie", "--set", "size=8M",
                                        "--set", "seekers=1024", "--set", "fast=true"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertRegex(result.stdout + result.stderr,
                         r"bonnie seeks: cannot start seeker thread \d+ of 1024: .* "
                         r"\(lower seekers\)")
        self.assertEqual(agent.phase_dirs(), [])

        self.assert_serves_a_phase(agent)
        self.assertNotRegex(agent.log(), re.compile("terminate called|std::bad_alloc'"))


if __name__ == "__main__":
    h.main()
