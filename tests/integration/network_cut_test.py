"""A real network cut, not a stopped process: an agent in its own network namespace, reached over
a veth pair, loses its link in the middle of a phase (`ip link set down`: packets vanish, no
RST, no FIN). The controller must fail that host by heartbeats within the timeout while the
other host finishes; the cut-off agent must abort its phase by its lease and clean up on its
own; and once the link is back, the same agent runs the next phase."""

import os
import re
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

# Short heartbeats, so that the test is quick; the defaults are 2 s and 10 s.
HEARTBEAT = ["--heartbeat-interval", "500ms", "--heartbeat-timeout", "3s"]
AGENT_PORT = 7431


def randio(seconds):
    """A light timed phase on each agent's `scratch` dir target."""
    return ["--workload", "randio", "--target", "scratch", "--set", "rw=randwrite",
            "--set", "size=4M", "--set", f"runtime={seconds}s", "--set", "time_based=true",
            "--set", "rate_iops=500", "--no-progress"]


@unittest.skipUnless(os.geteuid() == 0 and net.have("ip"), "needs root and ip (iproute2)")
class NetworkCutTest(h.StormarkTestCase):

    def setUp(self):
        pid = os.getpid()
        subnet = list(net.free_subnet())
        self.netns = net.add_netns(self, f"smcut{pid}")
        self.veth = net.Veth(self, f"smk{pid}"[:15], f"sml{pid}"[:15], self.netns)
        self.veth.up(f"{subnet[1]}/30", f"{subnet[2]}/30")
        self.scratch = self.make_dir("stormark-itest-cut-")
        os.chmod(self.scratch, 0o755)
        # Plain text on a non-loopback address needs --insecure: the veth is this test's own.
        self.far = net.start_agent_in_netns(
            self, "far", self.netns, f"{subnet[2]}:{AGENT_PORT}",
            f"targets:\n  scratch: {{dir: {self.scratch}}}\n", extra_args=["--insecure"])
        self.near = self.start_agent("near", extra_targets="")
        self.addCleanup(self.link_up)

    def link_up(self):
        net.run("ip", "link", "set", self.veth.host_if, "up", check=False)

    def phase_dirs(self):
        return [d for d in os.listdir(self.scratch) if d.startswith(".stormark-")]

    def test_cut_link_fails_the_host_and_the_agent_lets_go(self):
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", self.far.address, "--agent",
                                   self.near.address, "--json", json_path, *HEARTBEAT,
                                   *randio(10)])
        phase_id = self.far.wait_for_log(r"run phase '([^']+)'", timeout=60).group(1)
        time.sleep(1.0)  # Past the common start instant: both workloads are running.
        self.assertTrue(ctl.running(), ctl.stderr())
        self.assertTrue(self.phase_dirs(), "the far agent's phase has its directory")
        net.run("ip", "link", "set", self.veth.host_if, "down")
        cut_at = time.monotonic()

        # The agent, cut off from its controller, aborts by its lease and removes its files.
        match = self.far.wait_for_log(r"phase '%s' ABORTED: (.*)" % re.escape(phase_id),
                                      timeout=20)
        self.assertLess(time.monotonic() - cut_at, 10, self.far.log())
        self.assertIn("no heartbeat from the controller", match.group(1))
        deadline = time.monotonic() + 10
        while self.phase_dirs() and time.monotonic() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.phase_dirs(), [], self.far.log())

        # The controller fails the far host and keeps the near one's full run.
        result = ctl.wait(timeout=60)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        phase = self.load_json(json_path)["phases"][0]
        far_row = self.result_for(phase, self.far.address)
        self.assertNotEqual(far_row["status"], "succeeded", far_row)
        self.assertRegex(far_row["error"], r"^no heartbeat from agent %s for [3-9]\.\d s" %
                         re.escape(self.far.address))
        near_row = self.result_for(phase, self.near.address)
        self.assertEqual(near_row["status"], "succeeded", near_row)
        self.assertGreater(near_row["bytes"], 0)

        # The link comes back: the same agent takes the next phase.
        self.link_up()
        result = self.run_stormark(["run", "--agent", self.far.address, *HEARTBEAT,
                                    *randio(1)], timeout=60)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assertIsNone(self.far.proc.poll(), "the agent keeps serving")


if __name__ == "__main__":
    h.main()
