"""One `stormark run` comparing a local file target, an NBD export, an iSCSI LUN and an AoE target
side by side: issue 6's acceptance test.

Four agents, each in a network namespace of its own, reached by the controller (in this
process's namespace) over a veth pair and mutual TLS with certificates `stormark certs` makes:
  a: a dir target (a file on this machine's disk);
  b: an NBD export: nbdkit's file plugin, in b's namespace;
  c: an iSCSI LUN: tgtd with a file-backed LUN, in c's namespace;
  d: an AoE target: vblade in a fifth namespace, behind a veth pair from d's, with 5% of the AoE
     frames arriving on d's end dropped (an nftables netdev ingress rule).
One plan, one run, one randio phase that writes with verify and reads everything back, on all
four at once. The table and the JSON export must name each row's transport, every row must verify,
the AoE row must show retransmits, and each server's backing file must hold what was written.

Addresses come from 198.18.0.0/15 (RFC 2544's benchmarking range), a /28 chosen from this
process's PID. Every namespace, veth, nftables table, process and file is removed at cleanup,
also when the test fails. Needs root, ip, nbdkit, tgtd, tgtadm, vblade and nft; skipped without."""

import json
import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_targets as net  # noqa: E402
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
SIZE = 16 * MIB        # what the phase writes and verifies on each host
BACKING = 32 * MIB    # each server's backing file: the phase uses its first SIZE bytes
SHELF, SLOT = 5, 1
AGENT_PORT = 7420      # each agent has a namespace, and so every port, of its own

# host: (its target's name, the transport its row must show)
HOSTS = {"a": ("files", "local"), "b": ("export", "NBD"), "c": ("lun", "iSCSI"),
         "d": ("shelf", "AoE")}


@unittest.skipUnless(os.geteuid() == 0 and net.have("ip", "nbdkit", "tgtd", "tgtadm", "vblade",
                                                      "nft"),
                     "needs root, ip, nbdkit, tgtd, tgtadm, vblade and nft")
class NetworkCompareTest(h.StormarkTestCase):

    def setUp(self):
        self.base = self.make_dir("stormark-itest-netcmp-")
        self.pki = os.path.join(self.base, "pki")
        pid = os.getpid()
        subnet = list(net.free_subnet())
        self.netns = {}
        self.addresses = {}
        for i, host in enumerate(HOSTS):
            netns = net.add_netns(self, f"smcmp{pid}{host}")
            veth = net.Veth(self, f"smc{pid}{host}", f"smd{pid}{host}", netns)
            # A /30 per agent: .1 here, .2 in the agent's namespace.
            veth.up(f"{subnet[4 * i + 1]}/30", f"{subnet[4 * i + 2]}/30")
            self.netns[host] = netns
            self.addresses[host] = f"{subnet[4 * i + 2]}:{AGENT_PORT}"
        self.certs("init", "--dir", self.pki)
        self.certs("issue", "--dir", self.pki, "--controller")
        for host, address in self.addresses.items():
            self.certs("issue", "--dir", self.pki, "--agent", host, "--ip",
                       address.split(":")[0])

    def certs(self, *args):
        result = self.run_stormark(["certs"] + list(args))
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())

    def start_agent_on(self, host, targets):
        """Starts host's agent in its namespace, on its veth address, with mutual TLS."""
        config = (f"targets:\n{targets}"
                  f"tls: {{ca: {self.pki}/ca.crt, cert: {self.pki}/agent-{host}.crt,"
                  f" key: {self.pki}/agent-{host}.key}}\n")
        agent = net.start_agent_in_netns(self, host, self.netns[host], self.addresses[host],
                                         config)
        self.assertIn(f"mutual TLS as CN={host}", agent.log())
        return agent

    def start_servers_and_agents(self):
        """The four agents and the servers behind b, c and d; returns the servers' backing
        files by host."""
        pid = os.getpid()
        backing = {host: net.make_backing_file(os.path.join(self.base, f"{host}.img"), BACKING)
                   for host in ("b", "c", "d")}
        files = os.path.join(self.base, "a-files")
        os.mkdir(files)
        self.start_agent_on("a", f"  files: {{dir: {files}}}\n")

        _, port = net.start_nbdkit(self, "file", backing["b"], "cache=none",
                                   netns=self.netns["b"])
        self.start_agent_on("b", f"  export: {{nbd: 'nbd://127.0.0.1:{port}/', "
                                 f"disposable: true}}\n")

        tgtd = net.Tgtd(self, backing["c"], netns=self.netns["c"], bsoflags="direct")
        self.start_agent_on("c", f"  lun: {{iscsi: '{tgtd.uri}', disposable: true}}\n")

        shelf_ns = net.add_netns(self, f"smcmp{pid}e", loopback=False)
        aoe = net.Veth(self, f"sme{pid}", f"smf{pid}", shelf_ns, host_netns=self.netns["d"])
        aoe.up()
        net.start_vblade(self, shelf_ns, aoe.peer_if, backing["d"], SHELF, SLOT,
                         options=["-d"])
        self.loss_table = net.drop_frames(self, 5, [(self.netns["d"], aoe.host_if)])
        self.start_agent_on("d", f"  shelf: {{aoe: 'aoe://{aoe.host_if}/{SHELF}.{SLOT}', "
                                 f"disposable: true}}\n")
        return backing

    def write_plan(self):
        hosts = "".join(f"  - {{name: {host}, address: '{self.addresses[host]}', "
                        f"target: {target}}}\n" for host, (target, _) in HOSTS.items())
        return self.write_file(os.path.join(self.base, "compare.yaml"), (
            "tls: {ca: pki/ca.crt, cert: pki/controller.crt, key: pki/controller.key}\n"
            f"hosts:\n{hosts}"
            "phases:\n"
            "  - name: verified-randwrite\n"
            "    workload: randio\n"
            "    rw: randwrite\n"
            "    bs: 4k\n"
            "    iodepth: 8\n"
            "    engine: io_uring\n"
            "    direct: true\n"
            f"    size: {SIZE // MIB}M\n"
            "    verify: true\n"))

    def test_local_nbd_iscsi_and_aoe_side_by_side(self):
        backing = self.start_servers_and_agents()
        json_path = os.path.join(self.base, "run.json")
        result = self.run_stormark(["run", "--plan", self.write_plan(), "--json", json_path,
                                    "--no-progress"], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())

        # The table: one row per host, labelled with its transport, each ok and verified.
        tables = h.phase_tables(result.stdout)
        self.assertEqual(len(tables), 1, result.stdout)
        for host, (target, transport) in HOSTS.items():
            rows = h.rows_for(tables[0], host)
            self.assertEqual(len(rows), 1, result.stdout)
            # "b !" marks a row whose environment differs from the first row's, "ok *" one
            # with a footnote.
            self.assertRegex(rows[0],
                             rf"^  {host}( !)? +{transport} +{target} +write .* ok( \*)?$",
                             result.stdout)
            self.assertRegex(result.stdout, rf"verify {host}( !)?: {SIZE // 4096} units of "
                                            r"4 KiB checked, 0 mismatches")
        self.assertRegex(result.stdout, r"device on d: .*aoe\.retransmits [1-9]")

        # The JSON report of the run, and the run as the results database exports it.
        run_id = re.search(r"\brun (r[0-9a-f-]+)", result.stdout)
        self.assertIsNotNone(run_id, result.stdout)
        exported = self.run_stormark(["results", "export", run_id.group(1), "--format", "json"])
        self.assert_no_crash(exported)
        self.assertEqual(exported.returncode, 0, exported.describe())
        for report in (self.load_json(json_path), json.loads(exported.stdout)):
            phase = report["phases"][0]
            for host, (target, transport) in HOSTS.items():
                row = self.result_for(phase, host)
                self.assertEqual(row["status"], "succeeded", row)
                self.assertEqual(row["error"], "", row)
                self.assertEqual(row["via"], transport, row)
                self.assertEqual(row["bytes"], SIZE, row)
                self.assertEqual(row["verify"]["mismatches"], 0, row)
                self.assertEqual(row["verify"]["units_checked"], SIZE // 4096, row)
            stats = {host: self.result_for(phase, host)["device_stats"] for host in "bcd"}
            self.assertEqual(stats["b"]["nbd.failed_requests"], "0", stats["b"])
            self.assertEqual(stats["c"]["iscsi.failed_requests"], "0", stats["c"])
            self.assertGreater(int(stats["d"]["aoe.retransmits"]), 0, stats["d"])
            self.assertEqual(stats["d"]["aoe.timeouts"], "0", stats["d"])
            self.assertEqual(stats["d"]["aoe.target_errors"], "0", stats["d"])

        # The loss rule really dropped frames, and the servers hold what was written.
        listing = net.run(*net.in_netns(self.netns["d"], ["nft", "list", "table", "netdev",
                                                         self.loss_table])).stdout
        self.assertRegex(listing, r"counter packets [1-9]")
        for host, path in backing.items():
            self.assertEqual(h.check_verify_stamps(path, SIZE), [], f"{host}: {path}")


if __name__ == "__main__":
    h.main()
