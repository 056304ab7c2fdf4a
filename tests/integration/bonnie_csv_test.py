"""Two real agents run the bonnie workload; the results come out as bonnie++ would give them.

`stormark run --workload bonnie --csv FILE` writes one bonnie++ 2.00 CSV line per host, which
Debian's bon_csv2txt and bon_csv2html read (exit 0, both hosts named), and stdout shows the
bonnie++-style table with a row per host in each block. Sizes are tiny (16 MiB, 256 seeks,
1024 empty files): every figure is "+++++" here; this is about the format, not the figures
(bonnie_vs_bonnie_test.py checks those).

The CSV test is skipped only when bon_csv2txt or bon_csv2html (package bonnie++) is missing.
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

MIB = 1 << 20
SIZE = 16 * MIB
SEEKS = 256

BON_CSV2TXT = shutil.which("bon_csv2txt")
BON_CSV2HTML = shutil.which("bon_csv2html")

# 0-based fields of a bonnie++ 2.00 CSV data line (it has 50).
F_NAME, F_FILE_SIZE, F_SEEKS_COUNT, F_SEEKERS, F_NUM_FILES = 2, 5, 7, 8, 21


def bonnie_blocks(stdout):
    """The host rows of the bonnie++-style table in stdout, Latency lines left out:
    {"io": [...], "files": [...]} for the I/O block (under "Name:Size etc") and the file-test
    block (under the "files ... /sec %CP" header)."""
    blocks = {}
    current = None
    name = None  # a host name too long for the first column stands on its own line
    for line in stdout.splitlines():
        if line.startswith("Name:Size etc"):
            current = blocks.setdefault("io", [])
            continue
        if "files" in line and "/sec %CP" in line:
            current = blocks.setdefault("files", [])
            continue
        if current is None:
            continue
        if name is not None and line.startswith(" "):
            current.append(name + " " + line.strip())
            name = None
            continue
        if not line.strip() or line.startswith(" ") or line.startswith("Version"):
            current = None  # a blank line or the next block's header ends the block
            continue
        if " " not in line.strip():
            name = line.strip()
        elif not line.startswith("Latency"):
            current.append(line)
    return blocks


class BonnieCsvTest(h.StormarkTestCase):

    def setUp(self):
        self.a = self.start_agent("a")
        self.b = self.start_agent("b")
        self.agents = (self.a, self.b)
        self.work = self.make_dir()
        self.csv_path = os.path.join(self.work, "bonnie.csv")
        self.json_path = os.path.join(self.work, "out.json")

    def run_bonnie(self):
        result = self.run_stormark(
            ["run", "--agent", self.a.address, "--agent", self.b.address,
             "--workload", "bonnie", "--set", "size=16M", "--set", "fast=true",
             "--set", "files=1:0:0:1", "--set", f"seeks={SEEKS}",
             "--csv", self.csv_path, "--json", self.json_path, "--no-progress"])
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        for agent in self.agents:
            self.assertEqual(os.listdir(agent.target_dir), [],
                             f"agent {agent.name} left files; its log:\n{agent.log()}")
        return result

    def run_tool(self, tool, csv_text):
        try:
            done = subprocess.run([tool], input=csv_text, capture_output=True, text=True,
                                  errors="replace", timeout=30, preexec_fn=h._die_with_parent)
        except subprocess.TimeoutExpired:  # subprocess.run has killed it.
            self.fail(f"{tool} did not finish within 30 s")
        return h.Result([tool], done.returncode, done.stdout, done.stderr)

    @unittest.skipUnless(BON_CSV2TXT and BON_CSV2HTML,
                         "bon_csv2txt or bon_csv2html is not installed (package bonnie++; "
                         "scripts/install-deps.sh installs it)")
    def test_csv_has_a_line_per_host_and_bonnie_tools_read_it(self):
        result = self.run_bonnie()
        self.assertIn(f"bonnie++ CSV: {self.csv_path}", result.stdout, result.describe())
        with open(self.csv_path, encoding="utf-8") as f:
            csv_text = f.read()
        lines = csv_text.splitlines()
        self.assertEqual(len(lines), 2, csv_text)
        self.assertTrue(csv_text.endswith("\n"), csv_text)
        for line, agent in zip(lines, self.agents):
            fields = line.split(",")
            self.assertEqual(len(fields), 50, line)
            self.assertEqual(fields[:2], ["1.98", "2.00a"], line)
            self.assertEqual(fields[F_NAME], agent.address, line)
            self.assertEqual(fields[F_FILE_SIZE], "16M", line)
            self.assertEqual(fields[F_SEEKS_COUNT], str(SEEKS), line)
            self.assertEqual(fields[F_SEEKERS], "5", line)
            self.assertEqual(fields[F_NUM_FILES], "1", line)

        for tool in (BON_CSV2TXT, BON_CSV2HTML):
            out = self.run_tool(tool, csv_text)
            self.assertEqual(out.returncode, 0, out.describe())
            for agent in self.agents:
                self.assertIn(agent.address, out.stdout, f"{tool} does not name {agent.address}:\n"
                                                         f"{out.describe()}")

        # The JSON report has each host's per-test figures; the block tests moved the size.
        report = self.load_json(self.json_path)
        phase = report["phases"][0]
        self.assertEqual(phase["workload"]["type"], "bonnie")
        for agent in self.agents:
            r = self.result_for(phase, agent.address)
            self.assertEqual(r["status"], "succeeded", r)
            tests = {m["name"]: m for m in r["measurements"]}
            for name in ("put_block", "rewrite", "get_block"):
                self.assertEqual(tests[name]["bytes"], SIZE, tests[name])
            self.assertEqual(tests["seeks"]["ops"], SEEKS, tests["seeks"])
            for name in ("seq_create", "seq_stat", "seq_del", "ran_create", "ran_stat",
                         "ran_del"):
                self.assertFalse(tests[name]["skipped"], tests[name])
                self.assertEqual(tests[name]["ops"], 1024, tests[name])
            for name in ("putc", "getc"):
                self.assertTrue(tests[name]["skipped"], tests[name])

    def test_stdout_table_has_a_row_per_host(self):
        result = self.run_bonnie()
        blocks = bonnie_blocks(result.stdout)
        for block in ("io", "files"):
            rows = blocks.get(block, [])
            self.assertEqual(len(rows), len(self.agents),
                             f"{block} block of the bonnie table:\n{result.stdout}")
            for agent in self.agents:
                # The full address: two agents on one machine differ only in the port.
                named = [r for r in rows if r.startswith(agent.address + " ")]
                self.assertEqual(len(named), 1,
                                 f"no {block} row names {agent.address}:\n{result.stdout}")


if __name__ == "__main__":
    h.main()
