"""Mutual TLS between controller and agents, with certificates `stormark certs` makes.

Every agent listens on loopback (or on 0.0.0.0, reached through loopback) with a private CA
made in a temporary directory by this test; nothing leaves the machine."""

import os
import re
import stat
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

_ANY_LISTENING = r"stormark-agent: listening on ([0-9.]+):(\d+) "


class TlsTest(h.StormarkTestCase):

    def setUp(self):
        self.work = self.make_dir("stormark-itest-tls-")
        self.pki = os.path.join(self.work, "pki")
        self.certs("init", "--dir", self.pki)
        # agent1 is valid for its name and 127.0.0.1; agent2 only for its name.
        self.certs("issue", "--dir", self.pki, "--agent", "agent1", "--ip", "127.0.0.1")
        self.certs("issue", "--dir", self.pki, "--agent", "agent2", "--key-type", "rsa")
        self.certs("issue", "--dir", self.pki, "--controller")
        # A second CA, and a controller certificate it signed.
        self.other = os.path.join(self.work, "other")
        self.certs("init", "--dir", self.other)
        self.certs("issue", "--dir", self.other, "--controller")

    def certs(self, *args, expect=0):
        result = self.run_stormark(["certs"] + list(args))
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        return result

    def tls_config(self, agent="agent1"):
        return (f"tls:\n  ca: {self.pki}/ca.crt\n  cert: {self.pki}/agent-{agent}.crt\n"
                f"  key: {self.pki}/agent-{agent}.key\n")

    def controller_flags(self, pki=None, name="controller"):
        pki = pki or self.pki
        return ["--tls-ca", f"{self.pki}/ca.crt", "--tls-cert", f"{pki}/{name}.crt",
                "--tls-key", f"{pki}/{name}.key"]

    def write_phase(self, address, flags, expect=0, extra=()):
        result = self.run_stormark(["run", "--agent", address, "--rw", "write", "--size", "8M",
                                    "--no-progress", "--no-db"] + flags + list(extra))
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, expect, result.describe())
        return result

    def test_issued_keys_are_private_and_never_overwritten(self):
        for name in ("ca.key", "agent-agent1.key", "agent-agent2.key", "controller.key"):
            mode = stat.S_IMODE(os.stat(os.path.join(self.pki, name)).st_mode)
            self.assertEqual(mode, 0o600, name)
        result = self.certs("issue", "--dir", self.pki, "--agent", "agent1", expect=2)
        self.assertIn("agent-agent1.key already exists", result.stderr)
        result = self.certs("init", "--dir", self.pki, expect=2)
        self.assertIn("ca.key already exists", result.stderr)
        result = self.certs("issue", "--dir", self.pki, "--agent", "../x", expect=2)
        self.assertIn("bad name '../x'", result.stderr)

    def test_phase_runs_over_mutual_tls_and_the_agent_logs_the_controller(self):
        agent = self.start_agent("tls", extra_config=self.tls_config())
        self.assertIn("mutual TLS as CN=agent1", agent.log())
        json_path = os.path.join(self.work, "out.json")
        self.write_phase(agent.address, ["--tls-dir", self.pki], extra=["--json", json_path])
        report = self.load_json(json_path)
        result = report["phases"][0]["results"][0]
        self.assert_succeeded_result(report["phases"][0], result, 8 << 20)
        self.assertRegex(agent.log(), r"prepared phase '.*' \[peer ipv4:127\.0\.0\.1:\d+ "
                                      r"CN=controller\]")

    def test_plan_tls_name_is_the_name_the_certificate_must_hold(self):
        agent = self.start_agent("tls2", extra_config=self.tls_config("agent2"))
        # Reached by address, the agent's certificate (DNS:agent2 only) does not match.
        result = self.write_phase(agent.address, ["--tls-dir", self.pki], expect=1)
        self.assertRegex(result.stderr, r"host 127\.0\.0\.1:\d+: TLS: .*certificate")
        plan = self.write_file(os.path.join(self.work, "plan.yaml"), f"""
hosts:
  - {{name: two, address: "{agent.address}", tls_name: agent2}}
tls: {{ca: pki/ca.crt, cert: pki/controller.crt, key: pki/controller.key}}
phases:
  - {{name: w, workload: stream, rw: write, size: 8M, bs: 1M}}
""")
        result = self.run_stormark(["run", "--plan", plan, "--no-progress", "--no-db"])
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe())

    def test_controller_with_a_certificate_from_another_ca_is_refused(self):
        agent = self.start_agent("tls3", extra_config=self.tls_config())
        result = self.write_phase(agent.address, self.controller_flags(pki=self.other),
                                  expect=1)
        lines = [l for l in result.stderr.splitlines() if agent.address in l]
        self.assertTrue(lines, result.describe())
        self.assertIn("TLS", lines[0])
        self.assertIn("refused this controller's certificate", lines[0])
        self.assertNotIn("prepared phase", agent.log())

    def test_an_agent_certificate_cannot_act_as_a_controller(self):
        agent = self.start_agent("tls4", extra_config=self.tls_config())
        result = self.write_phase(agent.address, self.controller_flags(name="agent-agent1"),
                                  expect=1)
        self.assertIn("refused this controller's certificate", result.stderr)
        self.assertNotIn("prepared phase", agent.log())

    def test_plain_text_controller_is_refused(self):
        agent = self.start_agent("tls5", extra_config=self.tls_config())
        result = self.write_phase(agent.address, [], expect=1)
        self.assertRegex(result.stderr, rf"host {re.escape(agent.address)}: .*TLS")
        self.assertNotIn("prepared phase", agent.log())

    def test_tls_agent_may_listen_on_every_address(self):
        config = self.write_file(os.path.join(self.work, "agent.yaml"),
                                 f"targets:\n  scratch:\n    dir: {self.work}\n" +
                                 self.tls_config())
        log_path = os.path.join(self.work, "agent.log")
        agent = self.start_agent_process(["--listen", "0.0.0.0:0", "--config", config],
                                         log_path)
        match = agent.wait_for_log(_ANY_LISTENING)
        self.assertEqual(match.group(1), "0.0.0.0")
        self.write_phase(f"127.0.0.1:{match.group(2)}", ["--tls-dir", self.pki])

    def test_group_readable_key_is_refused_at_start(self):
        key = os.path.join(self.pki, "agent-agent1.key")
        os.chmod(key, 0o640)
        config = self.write_file(os.path.join(self.work, "agent.yaml"),
                                 f"targets:\n  scratch:\n    dir: {self.work}\n" +
                                 self.tls_config())
        result = self.run_agent_binary(["--listen", "127.0.0.1:0", "--config", config])
        self.assertNotEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertEqual(len(result.stderr.splitlines()), 1, result.describe())
        self.assertIn(f"key {key} is readable by other users; chmod 600", result.stderr)


if __name__ == "__main__":
    h.main()
