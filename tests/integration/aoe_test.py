"""stormark's own AoE initiator against a real AoE target written by others: vblade, in a
network namespace joined to the agent's by a veth pair that this test creates.

Each test writes with randio's verify through a real agent and controller, then checks the
bytes in vblade's backing file. Also: 5% frame loss (an nftables netdev ingress rule on both
ends of the veth), a target killed mid-run, and jumbo frames (MTU 9000).

Every namespace, veth, nftables table, process and file is made with names unique to this
process and removed in cleanup, also when a test fails. Needs root, ip, vblade and nft;
skipped without them."""

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
SHELF, SLOT = 7, 3


def have(tool):
    return shutil.which(tool) is not None


def run(*argv, check=True):
    return subprocess.run(list(argv), check=check, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)


@unittest.skipUnless(os.geteuid() == 0 and have("ip") and have("vblade") and have("nft"),
                     "needs root, ip (iproute2), vblade and nft (nftables)")
class AoeTest(h.StormarkTestCase):

    def setUp(self):
        tag = f"{os.getpid() % 100000}{self.id().rsplit('_', 1)[-1][:3]}"
        self.netns = f"smaoe{tag}"
        self.host_if = f"sma{tag}"[:15]   # the agent's end
        self.peer_if = f"smb{tag}"[:15]   # vblade's end, in the namespace
        run("ip", "netns", "add", self.netns)
        self.addCleanup(run, "ip", "netns", "del", self.netns, check=False)
        run("ip", "link", "add", self.host_if, "type", "veth", "peer", "name", self.peer_if)
        self.addCleanup(run, "ip", "link", "del", self.host_if, check=False)
        run("ip", "link", "set", self.peer_if, "netns", self.netns)
        self.base = self.make_dir("stormark-aoe-")
        self.backing = os.path.join(self.base, "vblade.img")
        with open(self.backing, "wb") as f:
            f.truncate(64 * MIB)
        self.vblade = None

    def set_mtu(self, mtu):
        run("ip", "link", "set", self.host_if, "mtu", str(mtu))
        run("ip", "-n", self.netns, "link", "set", self.peer_if, "mtu", str(mtu))

    def start_vblade(self):
        run("ip", "link", "set", self.host_if, "up")
        run("ip", "-n", self.netns, "link", "set", self.peer_if, "up")
        log = open(os.path.join(self.base, "vblade.log"), "wb")
        self.addCleanup(log.close)
        # `ip netns exec` execs vblade itself: the PID is vblade's.
        self.vblade = subprocess.Popen(
            ["ip", "netns", "exec", self.netns, "vblade", str(SHELF), str(SLOT), self.peer_if,
             self.backing], stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        self.addCleanup(h._stop_process, self.vblade)
        deadline = time.monotonic() + 10
        while "sectors" not in h.read_text(log.name):
            self.assertIsNone(self.vblade.poll(), h.read_text(log.name))
            self.assertLess(time.monotonic(), deadline, "vblade did not start")
            time.sleep(0.02)

    def drop_frames(self, percent):
        """Drops `percent`% of AoE frames arriving on either end of the veth."""
        table = f"stormark_aoe_{os.getpid()}"
        for netns, dev in ((None, self.host_if), (self.netns, self.peer_if)):
            prefix = ["ip", "netns", "exec", netns] if netns else []
            run(*prefix, "nft", "add", "table", "netdev", table)
            if netns is None:
                self.addCleanup(run, "nft", "delete", "table", "netdev", table, check=False)
            run(*prefix, "nft", "add", "chain", "netdev", table, "ingress",
                f"{{ type filter hook ingress device {dev} priority 0 ; }}")
            run(*prefix, "nft", "add", "rule", "netdev", table, "ingress", "ether", "type",
                "0x88a2", "numgen", "random", "mod", "100", "<", str(percent), "counter", "drop")
        return table

    def start_aoe_agent(self, size=None):
        extra = f", size: {size}" if size else ""
        return self.start_agent("aoe", extra_targets=(
            f"  shelf: {{aoe: 'aoe://{self.host_if}/{SHELF}.{SLOT}', disposable: true{extra}}}\n"))

    def randio(self, agent, *sets, expect=0, timeout=240):
        json_path = os.path.join(self.make_dir(), "out.json")
        args = ["run", "--agent", agent.address, "--target", "shelf", "--workload", "randio",
                "--json", json_path, "--no-progress"]
        for s in sets:
            args += ["--set", s]
        result = self.run_stormark(args, timeout=timeout)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        with open(json_path) as f:
            return result, json.load(f)["phases"][0]["results"][0]

    def assert_backing_holds_verified_units(self, begin, end, unit=4096):
        """Every unit of [begin, end) in vblade's file is one of randio's verifiable units,
        written for exactly that offset, all of one run (one salt)."""
        salts = set()
        with open(self.backing, "rb") as f:
            f.seek(begin)
            for offset in range(begin, end, unit):
                block = f.read(unit)
                self.assertEqual(block[:4], b"SMV1", f"no verify header at offset {offset}")
                (own_offset,) = struct.unpack_from("<Q", block, 8)
                self.assertEqual(own_offset, offset, f"unit at {offset} names {own_offset}")
                salts.add(block[16:20])
        self.assertEqual(len(salts), 1)

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
        self.assert_backing_holds_verified_units(0, 16 * MIB)

    def test_mixed_reads_and_writes_verify_with_deep_queues(self):
        self.start_vblade()
        agent = self.start_aoe_agent(size="32M")
        _, row = self.randio(agent, "rw=randrw", "bs=4k-64k", "iodepth=32", "numjobs=2",
                             "offset_increment=16M", "size=16M", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        # Two queues of 32 share vblade's 16 buffers; exceeding them would lose frames.
        self.assertEqual(row["device_stats"]["aoe.timeouts"], "0")
        self.assert_backing_holds_verified_units(0, 32 * MIB)

    def test_five_percent_frame_loss_still_verifies(self):
        self.start_vblade()
        table = self.drop_frames(5)
        agent = self.start_aoe_agent()
        result, row = self.randio(agent, "rw=randwrite", "bs=4k", "iodepth=8", "size=4M",
                                  "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        retransmits = int(row["device_stats"]["aoe.retransmits"])
        self.assertGreater(retransmits, 0)
        self.assertIn("aoe.retransmits", result.stdout)
        self.assert_backing_holds_verified_units(0, 4 * MIB)
        # The rule really dropped frames.
        listing = run("nft", "list", "table", "netdev", table).stdout
        self.assertRegex(listing, r"counter packets [1-9]")

    def test_target_killed_mid_run_fails_the_phase_in_bounded_time(self):
        self.start_vblade()
        agent = self.start_aoe_agent()
        json_path = os.path.join(self.make_dir(), "out.json")
        ctl = self.start_stormark(["run", "--agent", agent.address, "--target", "shelf",
                                   "--workload", "randio", "--set", "rw=randread",
                                   "--set", "iodepth=8", "--set", "time_based=true",
                                   "--set", "runtime=120s", "--json", json_path,
                                   "--no-progress"])
        time.sleep(2)
        self.assertTrue(ctl.running(), ctl.stderr())
        os.kill(self.vblade.pid, signal.SIGKILL)
        killed = time.monotonic()
        result = ctl.wait(timeout=60)
        took = time.monotonic() - killed
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertLess(took, 30, result.describe())
        with open(json_path) as f:
            row = json.load(f)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "failed", row)
        self.assertIn("Connection timed out", row["error"])
        self.assertIn(f"no reply from AoE target shelf {SHELF} slot {SLOT}", row["error"])
        self.assertIn("gone or unreachable", row["error"])
        self.assertGreater(int(row["device_stats"]["aoe.timeouts"]), 0)

    def test_jumbo_frames_carry_17_sectors(self):
        self.set_mtu(9000)
        self.start_vblade()
        agent = self.start_aoe_agent()
        _, row = self.randio(agent, "rw=write", "bs=1M", "iodepth=4", "size=16M",
                             "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["device_stats"]["aoe.sectors_per_frame"], "17")
        self.assertIn("17 sectors/frame", row["resolved"]["device"])
        self.assertEqual(row["device_stats"]["aoe.timeouts"], "0")
        self.assert_backing_holds_verified_units(0, 16 * MIB)

    def test_absent_target_is_a_clear_error(self):
        run("ip", "link", "set", self.host_if, "up")
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
    unittest.main()
