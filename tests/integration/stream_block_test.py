"""The stream workload on block and network targets, end to end: a real agent and controller.

- a block file and the null target (no root needed);
- a loop device this test attaches to a file it made (root and losetup): write and read, the
  bytes in the backing file carry stream's per-4 KiB offset stamps;
- an nbdkit memory export and an nbdkit file export over a unix socket (nbdkit), started and
  stopped by this test;
- vblade in a network namespace joined by a veth pair this test creates (root, ip, vblade);
- tgtd with a file-backed LUN on loopback (tgtd, tgtadm), started and stopped by this test.

A read of bytes an earlier phase of the same agent wrote is not laid out again: the block file's
mtime, the loop device's count of sectors written (/sys/block/loopN/stat) and a marker poked into
the LUN's backing file show that nothing was written, and the row's warnings say so.

Everything made here (loop devices, namespaces, veths, servers, files) has a name unique to this
process and is removed in cleanup, also when a test fails."""

import os
import subprocess
import struct
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


def stamp_problems(path, size, begin=0):
    """Problems (empty when none) with stream's data in [begin, begin + size) of the file
    `path`: every 4 KiB must start with its own offset, little-endian."""
    problems = []
    with open(path, "rb") as f:
        f.seek(begin)
        for offset in range(begin, begin + size, 4096):
            block = f.read(4096)
            if len(block) < 8:
                return problems + [f"file ends at {offset}"]
            (stamp,) = struct.unpack_from("<Q", block)
            if stamp != offset:
                problems.append(f"4 KiB at {offset} is stamped {stamp}")
            if len(problems) > 5:
                break
    return problems


class StreamTestCase(h.StormarkTestCase):

    def stream(self, agent, target, rw, size, *flags, expect=0):
        """Runs one stream phase; returns (Result, the phase's one result row, the phase)."""
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--agent", agent.address, "--target", target,
                                    "--rw", rw, "--size", size, "--json", json_path,
                                    "--no-progress", "--no-db"] + list(flags), timeout=240)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        phase = self.load_json(json_path)["phases"][0]
        return result, phase["results"][0], phase

    def assert_no_layout(self, row, writer, how):
        """The row says that the read used what the phase `writer` (its JSON) wrote by `how`
        ("stream write"), without a layout."""
        self.assertTrue([w for w in row["warnings"] if w.startswith("no layout") and
                         f"phase '{writer['phase_id']}' ({how})" in w], row["warnings"])

    def assert_laid_out(self, row):
        self.assertFalse([w for w in row["warnings"] if "no layout" in w], row["warnings"])

    def assert_streamed(self, result, row, phase, size_bytes, device):
        """A succeeded stream phase over exactly size_bytes of `device`, rendered as on a dir
        target (MiB/s and the via column)."""
        self.assert_succeeded_result(phase, row, size_bytes)
        self.assertIn(device, row["resolved"]["device"])
        header = [line for line in result.stdout.splitlines() if "MiB/s" in line]
        self.assertTrue(header, result.stdout)
        self.assertIn(" via ", header[0])


class StreamOnBlockFileTest(StreamTestCase):

    def setUp(self):
        self.agent = self.start_agent("stream-block", extra_targets=(
            "  img: {block: $BASE/disk.img, size: 16M, disposable: true}\n"
            "  ro: {block: $BASE/ro.img, size: 8M}\n"
            "  sink: {null: true}\n"))
        self.base = os.path.dirname(self.agent.target_dir)

    def test_write_then_read_in_place(self):
        image = os.path.join(self.base, "disk.img")
        result, row, phase = self.stream(self.agent, "img", "write", "8M")
        self.assert_streamed(result, row, phase, 8 * MIB, image)
        self.assertEqual(os.path.getsize(image), 16 * MIB)  # Used in place, not recreated.
        self.assertEqual(stamp_problems(image, 8 * MIB), [])
        result, row, phase = self.stream(self.agent, "img", "read", "16M", "--direct")
        self.assert_streamed(result, row, phase, 16 * MIB, image)
        self.assertIn("direct", row["resolved"]["device"])
        self.assertFalse([w for w in row["warnings"] if "not disposable" in w], row["warnings"])
        # The read laid out all it read.
        self.assertEqual(stamp_problems(image, 16 * MIB), [])

    def sparse_image(self):
        """disk.img as a fresh 16 MiB sparse file (the agent would otherwise create and fill
        it), so that only the agent's memory can tell what holds data."""
        image = os.path.join(self.base, "disk.img")
        with open(image, "wb") as f:
            f.truncate(16 * MIB)
        return image

    def test_read_of_what_a_write_wrote_is_not_laid_out_again(self):
        image = self.sparse_image()
        _, row, writer = self.stream(self.agent, "img", "write", "8M", "--fdatasync")
        self.assertEqual(row["status"], "succeeded", row)
        written = os.stat(image).st_mtime_ns
        time.sleep(0.05)  # Past the filesystem's timestamp granularity.
        _, row, _ = self.stream(self.agent, "img", "read", "8M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assert_no_layout(row, writer, "stream write")
        self.assertEqual(os.stat(image).st_mtime_ns, written, "the read wrote to the file")
        # Beyond what was written: laid out (the file changes), and remembered from then on.
        _, row, reader = self.stream(self.agent, "img", "read", "16M")
        self.assert_laid_out(row)
        laid_out = os.stat(image).st_mtime_ns
        self.assertGreater(laid_out, written)
        time.sleep(0.05)
        _, row, _ = self.stream(self.agent, "img", "read", "12M")
        self.assert_no_layout(row, reader, "stream read's layout")
        self.assertEqual(os.stat(image).st_mtime_ns, laid_out)

    def test_a_restarted_agent_asks_the_filesystem_what_holds_data(self):
        image = self.sparse_image()
        self.stream(self.agent, "img", "write", "8M", "--fdatasync")
        self.agent.stop()
        self.agent = self.start_agent("stream-block", extra_targets=(
            f"  img: {{block: {image}, size: 16M, disposable: true}}\n"))
        written = os.stat(image).st_mtime_ns
        time.sleep(0.05)
        # The new agent has no memory of the write, but the file's holes tell.
        _, row, _ = self.stream(self.agent, "img", "read", "8M")
        self.assertTrue([w for w in row["warnings"] if w.startswith(f"no layout: {image} holds "
                         "data all through the 8 MiB this reads")], row["warnings"])
        self.assertEqual(os.stat(image).st_mtime_ns, written)
        _, row, _ = self.stream(self.agent, "img", "read", "16M")
        self.assert_laid_out(row)
        self.assertGreater(os.stat(image).st_mtime_ns, written)

    def test_target_not_disposable_is_read_as_it_is_and_never_written(self):
        result, row, _ = self.stream(self.agent, "ro", "write", "1M", expect=1)
        self.assertIn("is not marked 'disposable: true'", result.stdout + result.stderr)
        # The agent created and filled ro.img at its first phase: it holds data all through.
        image = os.path.join(self.base, "ro.img")
        _, row, _ = self.stream(self.agent, "ro", "read", "4M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertFalse([w for w in row["warnings"] if "no data" in w or "not disposable" in w],
                         row["warnings"])
        # Punch a hole: a block file can tell what its reads would not find on the disk.
        subprocess.run(["fallocate", "--punch-hole", "--offset", "1MiB", "--length", "2MiB",
                        image], check=True)
        mtime = os.stat(image).st_mtime_ns
        _, row, _ = self.stream(self.agent, "ro", "read", "4M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertTrue([w for w in row["warnings"] if w.startswith(
            "target 'ro': 2 MiB of the 4 MiB this phase reads hold no data in ")], row["warnings"])
        self.assertEqual(os.stat(image).st_mtime_ns, mtime, "a read phase writes nothing")

    def test_size_beyond_the_target_is_one_clear_error(self):
        result, row, _ = self.stream(self.agent, "img", "write", "32M", expect=1)
        self.assertEqual(row["status"], "error", row)
        self.assertIn("stream: size 32 MiB does not fit target 'img' on", row["error"])
        self.assertIn("which holds 16 MiB", row["error"])

    def test_null_target_says_no_data_moves(self):
        _, row, _ = self.stream(self.agent, "sink", "write", "64M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["bytes"], 64 * MIB)
        self.assertTrue([w for w in row["warnings"] if "null target" in w], row["warnings"])


@unittest.skipUnless(os.geteuid() == 0 and net.have("losetup"), "needs root and losetup")
class StreamOnLoopDeviceTest(StreamTestCase):

    def setUp(self):
        self.backing = os.path.join(self.make_dir("stormark-loop-"), "backing.img")
        with open(self.backing, "wb") as f:
            f.truncate(64 * MIB)
        self.device = net.run("losetup", "-f", "--show", self.backing).stdout.strip()
        self.assertTrue(self.device.startswith("/dev/loop"), self.device)
        self.addCleanup(net.run, "losetup", "-d", self.device, check=False)
        self.agent = self.start_agent("stream-loop", extra_targets=(
            f"  loop: {{block: {self.device}, disposable: true}}\n"))

    def test_buffered_write_and_direct_read(self):
        result, row, phase = self.stream(self.agent, "loop", "write", "32M")
        self.assert_streamed(result, row, phase, 32 * MIB, self.device)
        self.assertEqual(stamp_problems(self.backing, 32 * MIB), [])
        # The rest of the device was not touched.
        with open(self.backing, "rb") as f:
            f.seek(32 * MIB)
            self.assertEqual(f.read(MIB), bytes(MIB))
        result, row, phase = self.stream(self.agent, "loop", "read", "64M", "--direct")
        self.assert_streamed(result, row, phase, 64 * MIB, self.device)
        self.assertEqual(stamp_problems(self.backing, 64 * MIB), [])

    def test_direct_write_and_buffered_read_from_an_evicted_device(self):
        result, row, phase = self.stream(self.agent, "loop", "write", "64M", "--direct")
        self.assert_streamed(result, row, phase, 64 * MIB, self.device)
        self.assertEqual(stamp_problems(self.backing, 64 * MIB), [])
        result, row, phase = self.stream(self.agent, "loop", "read", "64M")
        self.assert_streamed(result, row, phase, 64 * MIB, self.device)
        self.assertFalse([w for w in row["warnings"] if "page cache" in w], row["warnings"])

    def sectors_written(self):
        """The loop device's count of 512-byte sectors written (/sys/block/loopN/stat)."""
        name = os.path.basename(self.device)
        with open(f"/sys/block/{name}/stat") as f:
            return int(f.read().split()[6])

    def test_write_then_read_plan_writes_the_device_once(self):
        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: loophost, address: "{self.agent.address}", target: loop}}
phases:
  - {{name: seq-write, workload: stream, rw: write, size: 32M, bs: 1M, direct: true}}
  - {{name: seq-read, workload: stream, rw: read, size: 32M, bs: 1M, direct: true}}
""")
        json_path = os.path.join(work, "out.json")
        before = self.sectors_written()
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-progress",
                                    "--no-db"], timeout=240)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())
        written = (self.sectors_written() - before) * 512
        # The write phase's 32 MiB (and the signature check's nothing); a layout would double it.
        self.assertGreaterEqual(written, 32 * MIB)
        self.assertLess(written, 40 * MIB)
        phases = self.load_json(json_path)["phases"]
        read = self.result_for(phases[1], "loophost")
        self.assertEqual(read["status"], "succeeded", read)
        self.assertEqual(read["bytes"], 32 * MIB)
        self.assertEqual(phases[0]["name"], "seq-write")
        self.assert_no_layout(read, phases[0], "stream write")
        self.assertIn("no layout", result.stdout)  # The table's notes show it too.
        self.assertEqual(stamp_problems(self.backing, 32 * MIB), [])

    @unittest.skipUnless(net.have("mkfs.ext4"), "needs mkfs.ext4")
    def test_device_holding_a_filesystem_is_refused_and_kept(self):
        net.run("mkfs.ext4", "-q", "-F", self.device)
        result, _, _ = self.stream(self.agent, "loop", "write", "1M", expect=1)
        self.assertIn("holds data: ext4 filesystem", result.stdout + result.stderr)
        # A read of a disposable target writes first, so it is refused too, and says why.
        result, _, _ = self.stream(self.agent, "loop", "read", "1M", expect=1)
        self.assertIn("stream rw=read first writes the data it reads",
                      result.stdout + result.stderr)
        self.assertEqual(net.run("blkid", "-o", "value", "-s", "TYPE", self.device,
                                 check=False).stdout.strip(), "ext4")


@unittest.skipUnless(net.have("nbdkit"), "needs nbdkit")
class StreamOnNbdTest(StreamTestCase):

    def start_nbdkit(self, *args, unix_socket=None):
        """nbdkit serving ARGS over loopback TCP (or `unix_socket`); returns its NBD URI."""
        _, port = net.start_nbdkit(self, *args, unix_socket=unix_socket)
        return f"nbd+unix:///?socket={unix_socket}" if unix_socket else f"nbd://127.0.0.1:{port}/"

    def test_memory_export_write_and_read_report_the_device_counters(self):
        uri = self.start_nbdkit("memory", "64M")
        agent = self.start_agent("stream-nbd", extra_targets=(
            f"  mem: {{nbd: '{uri}', disposable: true}}\n"))
        result, row, phase = self.stream(agent, "mem", "write", "32M")
        self.assert_streamed(result, row, phase, 32 * MIB, uri)
        stats = row["device_stats"]
        self.assertEqual(stats["nbd.failed_requests"], "0", stats)
        self.assertEqual(stats["nbd.lost_connections"], "0", stats)
        # A network device has no page cache in front of it: nothing to warn about.
        self.assertFalse([w for w in row["warnings"] if "cache" in w], row["warnings"])
        result, row, phase = self.stream(agent, "mem", "read", "64M")
        self.assert_streamed(result, row, phase, 64 * MIB, uri)
        self.assertIn("nbd.connections", row["device_stats"])
        self.assertIn("NBD", result.stdout)  # The via column names the transport.

    def test_file_export_holds_the_stamped_bytes(self):
        base = self.make_dir()
        backing = os.path.join(base, "backing.img")
        with open(backing, "wb") as f:
            f.truncate(16 * MIB)
        sock = os.path.join(base, "nbd.sock")
        uri = self.start_nbdkit("file", backing, unix_socket=sock)
        agent = self.start_agent("stream-nbd", extra_targets=(
            f"  file: {{nbd: '{uri}', disposable: true}}\n"
            f"  file-ro: {{nbd: '{uri}'}}\n"))
        _, row, _ = self.stream(agent, "file", "write", "8M", "--bs", "64k")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(stamp_problems(backing, 8 * MIB), [])
        # A read of a target that is not disposable leaves the bytes alone, and says so.
        with open(backing, "r+b") as f:
            f.seek(12 * MIB)
            f.write(b"\xab" * 4096)
        _, row, _ = self.stream(agent, "file-ro", "read", "16M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertTrue([w for w in row["warnings"] if "not disposable" in w], row["warnings"])
        with open(backing, "rb") as f:
            f.seek(12 * MIB)
            self.assertEqual(f.read(4096), b"\xab" * 4096)


@unittest.skipUnless(os.geteuid() == 0 and net.have("ip", "vblade"),
                     "needs root, ip (iproute2) and vblade")
class StreamOnAoeTest(StreamTestCase):
    SHELF, SLOT = 7, 4

    def setUp(self):
        tag = f"{os.getpid() % 100000}s"
        netns = net.add_netns(self, f"smstr{tag}", loopback=False)
        veth = net.Veth(self, f"smsa{tag}"[:15], f"smsb{tag}"[:15], netns)
        veth.up()
        self.backing = net.make_backing_file(
            os.path.join(self.make_dir("stormark-aoe-"), "vblade.img"), 16 * MIB)
        net.start_vblade(self, netns, veth.peer_if, self.backing, self.SHELF, self.SLOT)
        self.agent = self.start_agent("stream-aoe", extra_targets=(
            f"  shelf: {{aoe: 'aoe://{veth.host_if}/{self.SHELF}.{self.SLOT}', "
            "disposable: true}\n"))

    def test_write_and_read_through_the_initiator_count_frames(self):
        result, row, phase = self.stream(self.agent, "shelf", "write", "4M", "--bs", "256k")
        self.assert_streamed(result, row, phase, 4 * MIB, f"e{self.SHELF}.{self.SLOT}")
        self.assertEqual(stamp_problems(self.backing, 4 * MIB), [])
        stats = row["device_stats"]
        self.assertGreaterEqual(int(stats["aoe.frames"]), 4 * MIB // 1024, stats)
        self.assertEqual(stats["aoe.timeouts"], "0", stats)
        result, row, phase = self.stream(self.agent, "shelf", "read", "8M", "--bs", "256k")
        self.assert_streamed(result, row, phase, 8 * MIB, f"e{self.SHELF}.{self.SLOT}")
        self.assertIn("aoe.retransmits", row["device_stats"])
        self.assertEqual(stamp_problems(self.backing, 8 * MIB), [])


@unittest.skipUnless(os.geteuid() == 0 and net.have("tgtd", "tgtadm"),
                     "needs root, tgtd and tgtadm (tgt)")
class StreamOnIscsiTest(StreamTestCase):

    def setUp(self):
        self.backing = net.make_backing_file(
            os.path.join(self.make_dir("stormark-iscsi-"), "lun.img"), 16 * MIB)
        tgtd = net.Tgtd(self, self.backing)
        self.uri = tgtd.uri
        self.agent = self.start_agent("stream-iscsi", extra_targets=(
            f"  lun: {{iscsi: '{tgtd.uri}', disposable: true}}\n"
            f"  lun-ro: {{iscsi: '{tgtd.uri}'}}\n"))

    def poke(self, offset, data):
        with open(self.backing, "r+b") as f:
            f.seek(offset)
            f.write(data)

    def read_back(self, offset, size):
        with open(self.backing, "rb") as f:
            f.seek(offset)
            return f.read(size)

    def test_write_then_read_hold_the_stamped_bytes_in_the_backing_file(self):
        result, row, writer = self.stream(self.agent, "lun", "write", "8M", "--bs", "64k",
                                          "--fdatasync")
        self.assert_streamed(result, row, writer, 8 * MIB, self.uri)
        self.assertEqual(row["device_stats"]["iscsi.failed_requests"], "0", row["device_stats"])
        self.assertEqual(stamp_problems(self.backing, 8 * MIB), [])
        self.assertEqual(self.read_back(8 * MIB, MIB), bytes(MIB))  # Only [0, 8M) written.
        self.assertIn("iSCSI", result.stdout)  # The via column names the transport.
        # A read of those bytes is not laid out again: a marker in them stays.
        marker = b"\xab" * 4096
        self.poke(4 * MIB, marker)
        result, row, phase = self.stream(self.agent, "lun", "read", "8M", "--bs", "64k")
        self.assert_streamed(result, row, phase, 8 * MIB, self.uri)
        self.assert_no_layout(row, writer, "stream write")
        self.assertEqual(self.read_back(4 * MIB, 4096), marker)
        # A read of the whole LUN lays out what it reads first.
        result, row, phase = self.stream(self.agent, "lun", "read", "16M", "--bs", "64k")
        self.assert_streamed(result, row, phase, 16 * MIB, self.uri)
        self.assert_laid_out(row)
        self.assertEqual(stamp_problems(self.backing, 16 * MIB), [])

    def test_a_write_without_fdatasync_is_laid_out_again(self):
        # The server's cache need not be shared with the read's own connection.
        _, row, _ = self.stream(self.agent, "lun", "write", "4M", "--bs", "256k",
                                "--no-fdatasync")
        self.assertEqual(row["status"], "succeeded", row)
        marker = b"\xab" * 4096
        self.poke(MIB, marker)
        _, row, _ = self.stream(self.agent, "lun", "read", "4M", "--bs", "256k")
        self.assertEqual(row["status"], "succeeded", row)
        self.assert_laid_out(row)
        self.assertNotEqual(self.read_back(MIB, 4096), marker)
        self.assertEqual(stamp_problems(self.backing, 4 * MIB), [])

    def test_read_of_a_lun_not_disposable_leaves_its_bytes_alone(self):
        marker = b"\xcd" * 4096
        self.poke(2 * MIB, marker)
        _, row, _ = self.stream(self.agent, "lun-ro", "read", "16M", "--bs", "256k")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["bytes"], 16 * MIB)
        self.assertTrue([w for w in row["warnings"] if "not disposable" in w], row["warnings"])
        self.assertEqual(self.read_back(2 * MIB, 4096), marker)
        result, _, _ = self.stream(self.agent, "lun-ro", "write", "1M", expect=1)
        self.assertIn("is not marked 'disposable: true'", result.stdout + result.stderr)
        self.assertEqual(self.read_back(0, MIB), bytes(MIB))


if __name__ == "__main__":
    h.main()
