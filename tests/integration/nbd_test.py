"""NBD targets end to end: a real agent's user-space NBD client against nbdkit (Debian's), started
and stopped by this test: the memory plugin over TCP, the file plugin over a unix socket (the
bytes in its backing file are checked), TLS with a PSK file, a server killed in the middle of a
run, and a server that is not there."""

import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20


class NbdTest(h.StormarkTestCase):

    def start_nbd_agent(self, targets):
        self.agent = self.start_agent("nbd", extra_targets=targets)
        self.json_path = os.path.join(self.make_dir(), "out.json")

    def mapped_libraries(self, names):
        """Which of the library names the agent process has mapped."""
        with open(f"/proc/{self.agent.proc.pid}/maps", encoding="utf-8") as f:
            paths = {line.split()[-1] for line in f if "/" in line}
        return {n for n in names if any(os.path.basename(p).startswith(n + ".so") for p in paths)}

    def run_randio(self, target, *sets, expect=0):
        result, row, _ = super().run_randio(self.agent, target, self.json_path, *sets,
                                            expect=expect)
        return result, row

    def test_memory_plugin_over_tcp_verifies_and_reports_the_transport(self):
        _, port = net.start_nbdkit(self, "memory", "64M")
        uri = f"nbd://127.0.0.1:{port}/"
        self.start_nbd_agent(f"  mem: {{nbd: '{uri}', disposable: true}}\n")
        # libnbd, and GnuTLS with it, is loaded when an NBD export is first opened, not when
        # the agent starts (agent/devices/shared_library.h).
        self.assertEqual(self.mapped_libraries(("libnbd", "libgnutls")), set())
        _, row = self.run_randio("mem", "rw=randrw", "iodepth=16", "numjobs=2", "size=16M",
                                 "offset_increment=16M", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["bytes"], 2 * 16 * MIB)
        self.assertEqual(row["verify"]["mismatches"], 0)
        # Every unit read back after the run, and the reads during it.
        self.assertGreater(row["verify"]["units_checked"], 32 * MIB // 4096)
        self.assertEqual(row["resolved"]["engine"], "nbd")
        self.assertEqual(row["resolved"]["iodepth"], "16")  # A real queue, not psync's 1.
        self.assertIn(uri, row["resolved"]["device"])
        # Two queues with a connection each, plus the one that laid out the data.
        self.assertEqual(row["device_stats"]["nbd.connections"], "3", row["device_stats"])
        self.assertEqual(row["device_stats"]["nbd.failed_requests"], "0")
        self.assertEqual(row["device_stats"]["nbd.multi_conn"], "yes")
        self.assertEqual(self.mapped_libraries(("libnbd", "libgnutls")), {"libnbd", "libgnutls"})

        with open(self.json_path) as f:
            info = json.load(f)
        target = [t for a in info["agents"] for t in a["targets"] if t["name"] == "mem"][0]
        self.assertEqual(target["kind"], "nbd")
        self.assertEqual(target.get("transport"), "NBD", target)
        self.assertEqual(target.get("transport_detail"),
                         f"user-space NBD client to 127.0.0.1:{port} export ''")
        self.assertEqual(target["size_bytes"], 64 * MIB)

    def test_file_plugin_over_unix_socket_holds_the_verified_bytes(self):
        base = self.make_dir()
        backing = net.make_backing_file(os.path.join(base, "backing.img"), 32 * MIB)
        sock = os.path.join(base, "nbd.sock")
        net.start_nbdkit(self, "file", backing, unix_socket=sock)
        self.start_nbd_agent(f"  file: {{nbd: 'nbd+unix:///?socket={sock}', disposable: true}}\n")
        _, row = self.run_randio("file", "rw=randwrite", "bs=4k-64k", "iodepth=8",
                                 "verify=true", "fdatasync=64")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        self.assertTrue(any(m["name"] == "flush" for m in row["measurements"]), row["measurements"])
        self.assertEqual(h.check_verify_stamps(backing, 32 * MIB), [])

    def test_tls_with_a_psk_file(self):
        base = self.make_dir()
        psk = os.path.join(base, "keys.psk")
        made = subprocess.run(["psktool", "-u", "stormark", "-p", psk], capture_output=True,
                              text=True, timeout=30)
        self.assertEqual(made.returncode, 0, made.stderr)
        _, port = net.start_nbdkit(self, "--tls=require", f"--tls-psk={psk}", "memory", "16M")
        self.start_nbd_agent(
            f"  secure: {{nbd: 'nbds://127.0.0.1:{port}/', disposable: true,"
            f" tls: {{psk_file: {psk}, username: stormark}}}}\n"
            f"  plain: {{nbd: 'nbd://127.0.0.1:{port}/'}}\n")
        _, row = self.run_randio("secure", "rw=randwrite", "iodepth=4", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["device_stats"]["nbd.tls"], "yes")
        self.assertIn("TLS", row["resolved"]["device"])
        # Without TLS the server refuses us, and the error names the URI.
        result, row = self.run_randio("plain", "rw=randread", expect=1)
        self.assertEqual(row["status"], "error", row)
        self.assertIn(f"nbd://127.0.0.1:{port}/", row["error"])
        self.assertNotIn(psk, result.stdout + result.stderr)

    def test_tls_with_x509_certificates(self):
        server_dir = self.make_dir()
        client_dir = self.make_dir()

        def certtool(*args, template=None):
            argv = ["certtool"] + list(args)
            if template:
                path = os.path.join(server_dir, "template.info")
                self.write_file(path, template)
                argv += ["--template", path]
            done = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                                  cwd=server_dir)
            self.assertEqual(done.returncode, 0, done.stderr)

        certtool("--generate-privkey", "--outfile", "ca-key.pem")
        certtool("--generate-self-signed", "--load-privkey", "ca-key.pem", "--outfile",
                 "ca-cert.pem", template="cn = stormark test CA\nca\ncert_signing_key\n"
                 "expiration_days = 2\n")
        certtool("--generate-privkey", "--outfile", "server-key.pem")
        certtool("--generate-certificate", "--load-ca-certificate", "ca-cert.pem",
                 "--load-ca-privkey", "ca-key.pem", "--load-privkey", "server-key.pem",
                 "--outfile", "server-cert.pem",
                 template="cn = 127.0.0.1\nip_address = 127.0.0.1\ntls_www_server\n"
                 "encryption_key\nsigning_key\nexpiration_days = 2\n")
        os.chmod(os.path.join(server_dir, "server-key.pem"), 0o600)
        # The client trusts that CA and nothing else.
        shutil.copy(os.path.join(server_dir, "ca-cert.pem"), client_dir)
        _, port = net.start_nbdkit(self, "--tls=require", f"--tls-certificates={server_dir}",
                                   "memory", "16M")
        self.start_nbd_agent(f"  x509: {{nbd: 'nbds://127.0.0.1:{port}/', disposable: true,"
                             f" tls: {{certificates: {client_dir}}}}}\n")
        _, row = self.run_randio("x509", "rw=randrw", "iodepth=8", "verify=true")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertEqual(row["verify"]["mismatches"], 0)
        self.assertEqual(row["device_stats"]["nbd.tls"], "yes")

    def test_an_export_holding_a_filesystem_is_never_written(self):
        base = self.make_dir()
        backing = os.path.join(base, "ext4.img")
        with open(backing, "wb") as f:
            f.truncate(16 * MIB)
        made = subprocess.run(["mkfs.ext4", "-q", "-F", backing], capture_output=True,
                              text=True, timeout=60)
        self.assertEqual(made.returncode, 0, made.stderr)
        with open(backing, "rb") as f:
            before = f.read()
        _, port = net.start_nbdkit(self, "file", backing)
        uri = f"nbd://127.0.0.1:{port}/"
        self.start_nbd_agent(f"  fs: {{nbd: '{uri}', disposable: true}}\n")
        result, row = self.run_randio("fs", "rw=randwrite", "size=4M", expect=1)
        self.assertEqual(row["status"], "error", row)
        self.assertIn(f"target 'fs' ({uri}) holds data: ext4 filesystem; refusing to write",
                      row["error"])
        with open(backing, "rb") as f:
            self.assertTrue(f.read() == before, "the export was written")
        # Reading it is fine.
        _, row = self.run_randio("fs", "rw=randread", "size=4M")
        self.assertEqual(row["status"], "succeeded", row)

    def test_several_jobs_without_multi_conn_are_warned_about(self):
        _, port = net.start_nbdkit(self, "--filter=multi-conn", "memory", "64M",
                                   "multi-conn-mode=disable")
        self.start_nbd_agent(f"  single: {{nbd: 'nbd://127.0.0.1:{port}/', disposable: true}}\n")
        _, row = self.run_randio("single", "rw=randwrite", "size=4M", "fdatasync=16")
        self.assertEqual(row["device_stats"]["nbd.multi_conn"], "no")
        self.assertFalse(any("multi-conn" in w for w in row.get("warnings", [])), row)
        result, row = self.run_randio("single", "rw=randwrite", "size=4M", "fdatasync=16",
                                      "numjobs=2", "offset_increment=4M")
        self.assertEqual(row["status"], "succeeded", row)
        self.assertTrue(any("does not offer multi-conn" in w for w in row.get("warnings", [])),
                        row.get("warnings"))
        self.assertIn("does not offer multi-conn", result.stdout)

    def test_server_killed_mid_run_fails_the_phase_quickly(self):
        proc, port = net.start_nbdkit(self, "memory", "64M")
        uri = f"nbd://127.0.0.1:{port}/"
        self.start_nbd_agent(f"  mem: {{nbd: '{uri}'}}\n")
        took, row = net.server_killed_mid_run(self, self.agent, "mem", proc, self.json_path)
        self.assertLess(took, 15, "the phase should fail soon after the server died")
        self.assertIn(f"lost the connection to NBD server {uri}", row["error"])
        self.assertEqual(row["device_stats"]["nbd.lost_connections"], "1")

    def test_unreachable_server_is_a_clear_error(self):
        port = h.closed_loopback_port()
        self.start_nbd_agent(f"  gone: {{nbd: 'nbd://127.0.0.1:{port}/x'}}\n")
        started = time.monotonic()
        result, row = self.run_randio("gone", "rw=randread", expect=1)
        self.assertLess(time.monotonic() - started, 30)
        self.assertEqual(row["status"], "error", row["error"])
        self.assertIn(f"cannot connect to NBD server nbd://127.0.0.1:{port}/x", row["error"])

    def test_a_host_without_libnbd_fails_the_nbd_phase_in_one_line_and_serves_the_rest(self):
        """The agent loads libnbd when an NBD target is opened (agent/devices/shared_library.h):
        on a host where it cannot be loaded (here masked by /dev/null in a mount namespace of
        the agent's own), the NBD phase fails with one line naming the Debian package, and the
        agent goes on serving its other targets."""
        mask_libnbd, library = net.library_masker("libnbd.so.0")
        if mask_libnbd is None:
            self.skipTest(f"no {library} to mask")
        _, port = net.start_nbdkit(self, "memory", "16M")
        self.agent = self.start_agent("nolibnbd", preexec=mask_libnbd,
                                      extra_targets=f"  mem: {{nbd: 'nbd://127.0.0.1:{port}/', "
                                                    "disposable: true}\n")
        self.json_path = os.path.join(self.make_dir(), "out.json")
        result, row = self.run_randio("mem", "rw=randread", "size=1M", expect=1)
        self.assertIn("cannot load libnbd.so.0 (Debian package libnbd0), which nbd:// targets "
                      "need: ", row["error"])
        self.assertNotIn("\n", row["error"])
        self.assertEqual(result.stdout.count("cannot load libnbd.so.0"), 1, result.stdout)
        self.assertEqual(self.mapped_libraries(("libnbd", "libgnutls")), set())
        # The agent still serves its directory target.
        _, row = self.run_randio("scratch", "rw=randread", "size=1M")
        self.assertEqual(row["status"], "succeeded", row)


if __name__ == "__main__":
    h.main()
