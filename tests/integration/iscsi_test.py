"""iSCSI targets end to end: a real agent's user-space iSCSI initiator (libiscsi) against tgtd
(Debian's tgt) with a file-backed LUN, started, configured and shut down by this test through
tgtadm: a verified run whose bytes are checked in the backing file, CHAP with the password in a
file (and a wrong one refused without showing it), and tgtd killed in the middle of a run."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class IscsiTest(h.StormarkTestCase):

    def setUp(self):
        self.base = self.make_dir()
        self.backing = net.make_backing_file(os.path.join(self.base, "lun.img"), 32 * MIB)
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def run_randio(self, target, *sets, expect=0):
        return super().run_randio(self.agent, target, self.json_path, *sets, expect=expect)

    def test_verified_writes_reach_the_backing_file(self):
        tgtd = net.Tgtd(self, self.backing)
        self.agent = self.start_agent("iscsi", extra_targets=(
            f"  lun: {{iscsi: '{tgtd.uri}', disposable: true}}\n"))
        _, row, report = self.run_randio("lun", "rw=randrw", "bs=4k-64k", "iodepth=16",
                                         "verify=true", "fdatasync=32")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        self.assertGreater(row["verify"]["units_checked"], 32 * MIB // 4096)
        self.assertEqual(row["resolved"]["engine"], "iscsi")
        self.assertEqual(row["resolved"]["iodepth"], "16")
        self.assertEqual(row["device_stats"]["iscsi.failed_requests"], "0")
        self.assertEqual(h.check_verify_stamps(self.backing, 32 * MIB), [])
        target = [t for a in report["agents"] for t in a["targets"] if t["name"] == "lun"][0]
        self.assertEqual(target["transport"], "iSCSI")
        self.assertEqual(target["transport_detail"],
                         f"user-space iSCSI initiator to 127.0.0.1:{tgtd.port} target "
                         f"{tgtd.iqn} LUN 1")
        self.assertEqual(target["size_bytes"], 32 * MIB)
        self.assertEqual(target["logical_block_size"], 512)

    def test_chap_from_the_agent_config(self):
        tgtd = net.Tgtd(self, self.backing, chap=("bench", "s3cret-pass-4u"))
        good = self.write_file(os.path.join(self.base, "chap.secret"), "s3cret-pass-4u\n")
        bad = self.write_file(os.path.join(self.base, "wrong.secret"), "wrong-pass-123\n")
        self.agent = self.start_agent("iscsi-chap", extra_targets=(
            f"  lun: {{iscsi: '{tgtd.uri}', disposable: true,"
            f" chap: {{user: bench, password_file: {good}}}}}\n"
            f"  wrong: {{iscsi: '{tgtd.uri}', chap: {{user: bench, password_file: {bad}}}}}\n"
            f"  none: {{iscsi: '{tgtd.uri}'}}\n"))
        _, row, _ = self.run_randio("lun", "rw=randwrite", "iodepth=8", "verify=true",
                                    "size=8M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertIn("CHAP", row["resolved"]["device"])
        for target in ("wrong", "none"):
            result, row, _ = self.run_randio(target, "rw=randread", expect=1)
            self.assertEqual(row["status"], "error", row)
            self.assertIn(tgtd.uri, row["error"])
            self.assertIn("log in", row["error"])
            output = result.stdout + result.stderr + h.read_text(self.agent.log_path)
            self.assertNotIn("wrong-pass-123", output)
            self.assertNotIn("s3cret-pass-4u", output)

    def test_tgtd_killed_mid_run_fails_the_phase_quickly(self):
        tgtd = net.Tgtd(self, self.backing)
        self.agent = self.start_agent("iscsi-kill", extra_targets=(
            f"  lun: {{iscsi: '{tgtd.uri}'}}\n"))
        took, row = net.server_killed_mid_run(self, self.agent, "lun", tgtd.proc,
                                              self.json_path)
        self.assertLess(took, 15, "the phase should fail soon after the target died")
        self.assertIn(f"lost the session with iSCSI target {tgtd.uri}", row["error"])

    def test_a_host_without_libiscsi_fails_the_iscsi_phase_in_one_line_and_serves_the_rest(self):
        """The agent loads libiscsi when an iSCSI target is opened (shared_library.h): where it
        cannot be loaded, the phase fails before any connection with one line naming the
        Debian package, and the agent serves its other targets (see nbd_test's twin)."""
        mask_libiscsi, library = net.library_masker("libiscsi.so.7")
        if mask_libiscsi is None:
            self.skipTest(f"no {library} to mask")
        port = h.closed_loopback_port()
        self.agent = self.start_agent("nolibiscsi", preexec=mask_libiscsi, extra_targets=(
            f"  lun: {{iscsi: 'iscsi://127.0.0.1:{port}/iqn.2026-12.test:none/1'}}\n"))
        result, row, _ = self.run_randio("lun", "rw=randread", "size=1M", expect=1)
        self.assertIn("cannot load libiscsi.so.7 (Debian package libiscsi7), which iscsi:// "
                      "targets need: ", row["error"])
        self.assertNotIn("\n", row["error"])
        _, row, _ = self.run_randio("scratch", "rw=randread", "size=1M")
        self.assertEqual(row["status"], "succeeded", row)


if __name__ == "__main__":
    h.main()
