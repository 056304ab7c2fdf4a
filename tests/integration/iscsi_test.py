"""iSCSI targets end to end: a real agent's user-space iSCSI initiator (libiscsi) against tgtd
(Debian's tgt) with a file-backed LUN, started, configured and shut down by this test through
tgtadm: a verified run whose bytes are checked in the backing file, CHAP with the password in a
file (and a wrong one refused without showing it), and tgtd killed in the middle of a run."""

import json
import os
import signal
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class Tgtd:
    """One tgtd with its own control port, holding one target with one file-backed LUN (LUN 1:
    tgt keeps LUN 0 for its controller)."""

    def __init__(self, test, backing, chap=None):
        self.test = test
        # tgtd takes control ports up to 32767; the test process's own two.
        self.control = str(1000 + os.getpid() % 15000 * 2 + len(test._tgtds))
        test._tgtds.append(self)
        self.port = h.free_loopback_port()
        self.iqn = f"iqn.2024-01.org.stormark.test:lun{os.getpid()}"
        base = test.make_dir("stormark-itest-tgtd-")
        self.log_path = os.path.join(base, "tgtd.log")
        os.makedirs("/var/run/tgtd", exist_ok=True)
        log = open(self.log_path, "wb")
        test.addCleanup(log.close)
        self.proc = subprocess.Popen(
            ["tgtd", "-f", "-C", self.control, "--iscsi", f"portal=127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        test.addCleanup(self.shut_down)
        deadline = time.monotonic() + 20
        while self.adm("--mode", "sys", "--op", "show", check=False).returncode != 0:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                test.fail(f"tgtd did not start: {h.read_text(self.log_path)}")
            time.sleep(0.1)
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "new", "--tid", "1",
                 "--targetname", self.iqn)
        self.adm("--lld", "iscsi", "--mode", "logicalunit", "--op", "new", "--tid", "1",
                 "--lun", "1", "--backing-store", backing)
        self.adm("--lld", "iscsi", "--mode", "target", "--op", "bind", "--tid", "1",
                 "--initiator-address", "127.0.0.1")
        if chap:
            user, password = chap
            self.adm("--lld", "iscsi", "--mode", "account", "--op", "new", "--user", user,
                     "--password", password)
            self.adm("--lld", "iscsi", "--mode", "account", "--op", "bind", "--tid", "1",
                     "--user", user)
        self.uri = f"iscsi://127.0.0.1:{self.port}/{self.iqn}/1"

    def adm(self, *args, check=True):
        done = subprocess.run(["tgtadm", "-C", self.control] + list(args), capture_output=True,
                              text=True, timeout=30)
        if check:
            self.test.assertEqual(done.returncode, 0, f"tgtadm {args}: {done.stderr}")
        return done

    def shut_down(self):
        """The clean way first (offline, delete the target, delete the system); SIGKILL by PID
        only when that did not end it."""
        if self.proc.poll() is None:
            self.adm("--mode", "sys", "--op", "update", "--name", "State", "--value", "offline",
                     check=False)
            self.adm("--lld", "iscsi", "--mode", "target", "--op", "delete", "--force",
                     "--tid", "1", check=False)
            self.adm("--mode", "sys", "--op", "delete", check=False)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        h._stop_process(self.proc)


class IscsiTest(h.StormarkTestCase):

    def setUp(self):
        self._tgtds = []
        self.base = self.make_dir()
        self.backing = os.path.join(self.base, "lun.img")
        with open(self.backing, "wb") as f:
            f.truncate(32 * MIB)
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def run_randio(self, target, *sets, expect=0):
        return super().run_randio(self.agent, target, self.json_path, *sets, expect=expect)

    def test_verified_writes_reach_the_backing_file(self):
        tgtd = Tgtd(self, self.backing)
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
        tgtd = Tgtd(self, self.backing, chap=("bench", "s3cret-pass-4u"))
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
        tgtd = Tgtd(self, self.backing)
        self.agent = self.start_agent("iscsi-kill", extra_targets=(
            f"  lun: {{iscsi: '{tgtd.uri}'}}\n"))
        run = self.start_stormark(["run", "--agent", self.agent.address, "--target", "lun",
                                   "--workload", "randio", "--set", "rw=randread",
                                   "--set", "iodepth=8", "--set", "runtime=60s",
                                   "--set", "time_based=true", "--json", self.json_path,
                                   "--no-progress"])
        time.sleep(3)
        killed = time.monotonic()
        tgtd.proc.send_signal(signal.SIGKILL)
        result = run.wait(timeout=30)
        took = time.monotonic() - killed
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertLess(took, 15, "the phase should fail soon after the target died")
        with open(self.json_path) as f:
            row = json.load(f)["phases"][0]["results"][0]
        self.assertEqual(row["status"], "failed", row["error"])
        self.assertIn(f"lost the session with iSCSI target {tgtd.uri}", row["error"])


if __name__ == "__main__":
    unittest.main()
