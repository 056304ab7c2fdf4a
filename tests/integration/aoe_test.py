"""stormark's own AoE initiator against a real AoE target written by others: vblade, in a
network namespace joined to the agent's by a veth pair that this test creates.

Each test writes with randio's verify through a real agent and controller, then checks the
bytes in vblade's backing file. Also: 5% frame loss (an nftables netdev ingress rule on both
ends of the veth), a target killed mid-run, and jumbo frames (MTU 9000).

Every namespace, veth, nftables table, process and file is made with names unique to this
process and removed in cleanup, also when a test fails. Needs root, ip, vblade and nft;
skipped without them."""

import os
import signal
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
SHELF, SLOT = 7, 3


@unittest.skipUnless(os.geteuid() == 0 and net.have("ip", "vblade", "nft"),
                     "needs root, ip (iproute2), vblade and nft (nftables)")
class AoeTest(h.StormarkTestCase):

    def setUp(self):
        tag = f"{os.getpid() % 100000}{self.id().rsplit('_', 1)[-1][:3]}"
        self.netns = net.add_netns(self, f"smaoe{tag}", loopback=False)
        # The agent's end in this namespace, vblade's end in the new one.
        self.veth = net.Veth(self, f"sma{tag}"[:15], f"smb{tag}"[:15], self.netns)
        self.host_if = self.veth.host_if
        self.peer_if = self.veth.peer_if
        self.backing = net.make_backing_file(
            os.path.join(self.make_dir("stormark-aoe-"), "vblade.img"), 64 * MIB)
        self.vblade = None

    def start_vblade(self):
        self.veth.up()
        self.vblade = net.start_vblade(self, self.netns, self.peer_if, self.backing, SHELF, SLOT)

    def start_aoe_agent(self, size=None, io_timeout=None):
        extra = f", size: {size}" if size else ""
        extra += f", io_timeout: {io_timeout}" if io_timeout else ""
        return self.start_agent("aoe", extra_targets=(
            f"  shelf: {{aoe: 'aoe://{self.host_if}/{SHELF}.{SLOT}', disposable: true{extra}}}\n"))

    def randio(self, agent, *sets, expect=0, timeout=240):
        json_path = os.path.join(self.make_dir(), "out.json")
        result, row, _ = self.run_randio(agent, "shelf", json_path, *sets, expect=expect,
                                         timeout=timeout)
        return result, row

    def assert_backing_holds_verified_units(self, size):
        """Every unit of [0, size) in vblade's file is one of randio's verifiable units, written
        for exactly that offset, all of one run (one salt); a sample passes its CRC."""
        self.assertEqual(h.check_verify_stamps(self.backing, size), [])

    def test_verified_random_writes_land_in_the_backing_file(self):
        self.start_vblade()
        agent = self.start_aoe_agent()
        result, row = self.randio(agent, "rw=randwrite", "bs=4k", "iodepth=8", "size=16M",
                                  "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        self.assertEqual(row["verify"]["units_checked"], 16 * MIB // 4096)
        self.assertEqual(row["resolved"]["engine"], "aoe")
        self.assertIn(f"aoe://{self.host_if}/{SHELF}.{SLOT}", row["resolved"]["device"])
        stats = row["device_stats"]
        self.assertEqual(stats["aoe.buffer_count"], "16")   # vblade's default
        self.assertEqual(stats["aoe.sectors_per_frame"], "2")  # MTU 1500
        self.assertEqual(stats["aoe.timeouts"], "0")
        self.assertGreater(float(stats["aoe.srtt_us"]), 0)
        self.assertIn("device on", result.stdout)
        # GetInfo found the target: its size is vblade's file.
        self.assertRegex(result.stdout, rf"shelf \(aoe://{self.host_if}/{SHELF}\.{SLOT}, "
                                        r"64(\.0)? MiB, disposable\)")
        self.assertFalse(any("cache" in w for w in row["warnings"]), row["warnings"])
        self.assert_backing_holds_verified_units(16 * MIB)

    def test_mixed_reads_and_writes_verify_with_deep_queues(self):
        self.start_vblade()
        agent = self.start_aoe_agent(size="32M")
        _, row = self.randio(agent, "rw=randrw", "bs=4k-64k", "iodepth=32", "numjobs=2",
                             "offset_increment=16M", "size=16M", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        # Two queues of 32 share vblade's 16 buffers; exceeding them would lose frames.
        self.assertEqual(row["device_stats"]["aoe.timeouts"], "0")
        self.assert_backing_holds_verified_units(32 * MIB)

    def test_five_percent_frame_loss_still_verifies(self):
        self.start_vblade()
        table = net.drop_frames(self, 5, [(None, self.host_if), (self.netns, self.peer_if)])
        agent = self.start_aoe_agent()
        result, row = self.randio(agent, "rw=randwrite", "bs=4k", "iodepth=8", "size=4M",
                                  "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        retransmits = int(row["device_stats"]["aoe.retransmits"])
        self.assertGreater(retransmits, 0)
        self.assertIn("aoe.retransmits", result.stdout)
        self.assert_backing_holds_verified_units(4 * MIB)
        # The rule really dropped frames.
        listing = net.run("nft", "list", "table", "netdev", table).stdout
        self.assertRegex(listing, r"counter packets [1-9]")

    def test_target_killed_mid_run_fails_the_phase_in_bounded_time(self):
        self.start_vblade()
        agent = self.start_aoe_agent()
        took, row = net.server_killed_mid_run(
            self, agent, "shelf", self.vblade, os.path.join(self.make_dir(), "out.json"),
            runtime="120s", settle=2, wait=60)
        self.assertLess(took, 30, row)
        self.assertIn("Connection timed out", row["error"])
        self.assertIn(f"no reply from AoE target shelf {SHELF} slot {SLOT}", row["error"])
        self.assertIn("gone or unreachable", row["error"])
        self.assertGreater(int(row["device_stats"]["aoe.timeouts"]), 0)

    def test_io_timeout_from_the_config_bounds_a_dead_target(self):
        self.start_vblade()
        agent = self.start_aoe_agent(io_timeout="2s")
        took, row = net.server_killed_mid_run(
            self, agent, "shelf", self.vblade, os.path.join(self.make_dir(), "out.json"),
            runtime="120s", settle=2, wait=30)
        self.assertLess(took, 8, row)
        self.assertRegex(row["error"], r"after \d+ attempts in 2\.\d s")

    def test_aborting_against_a_dead_target_does_not_wait_for_the_timeout(self):
        self.start_vblade()
        agent = self.start_aoe_agent(io_timeout="60s")
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--target", "shelf",
                                   "--workload", "randio", "--set", "rw=randread",
                                   "--set", "iodepth=8", "--set", "runtime=120s",
                                   "--set", "time_based=true", "--json", json_path,
                                   "--no-progress"])
        time.sleep(2)
        self.assertTrue(ctl.running(), ctl.stderr())
        self.vblade.send_signal(signal.SIGKILL)
        time.sleep(1)  # Requests are now in flight to no one, with 59 s left on their timers.
        interrupted = time.monotonic()
        ctl.proc.send_signal(signal.SIGINT)
        result = ctl.wait(timeout=60)
        took = time.monotonic() - interrupted
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 130, result.describe())
        self.assertLess(took, 5, result.describe())
        # The agent let go of the phase: it answers and takes the next one at once.
        started = time.monotonic()
        result, row = self.randio(agent, "rw=randread", "size=1M", expect=1)
        self.assertLess(time.monotonic() - started, 20)
        self.assertNotIn("busy", row.get("error", ""))
        self.assertNotIn("stuck", row.get("error", ""))

    def test_jumbo_frames_carry_17_sectors(self):
        self.veth.set_mtu(9000)
        self.start_vblade()
        agent = self.start_aoe_agent()
        _, row = self.randio(agent, "rw=write", "bs=1M", "iodepth=4", "size=16M",
                             "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["device_stats"]["aoe.sectors_per_frame"], "17")
        self.assertIn("17 sectors/frame", row["resolved"]["device"])
        self.assertEqual(row["device_stats"]["aoe.timeouts"], "0")
        self.assert_backing_holds_verified_units(16 * MIB)

    def test_absent_target_is_a_clear_error(self):
        self.veth.up()
        agent = self.start_aoe_agent()
        started = time.monotonic()
        result = self.run_stormark(["run", "--agent", agent.address, "--target", "shelf",
                                    "--workload", "randio", "--set", "rw=randread",
                                    "--set", "size=1M", "--no-progress"])
        self.assertLess(time.monotonic() - started, 30)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn(f"no answer to Query Config for AoE target shelf {SHELF} slot {SLOT}",
                      result.stdout + result.stderr)


if __name__ == "__main__":
    h.main()
