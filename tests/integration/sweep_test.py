"""A sweep on two agents: mkfs options through setup/teardown hooks on loop devices this test
creates, a read-ahead knob the agents apply and restore, and three repetitions; one command
ends with the summary table of medians and spreads."""

import json
import os
import sqlite3
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402


class SweepTest(h.StormarkTestCase):

    def read_ahead(self, device):
        with open(f"/sys/block/{os.path.basename(device)}/queue/read_ahead_kb") as f:
            return f.read().strip()

    def test_mkfs_sweep_with_knob_and_repeats_on_two_agents(self):
        # The setup hook formats and mounts: it needs root, which the config must say.
        agents = [h.start_loop_agent(self, n, "commands: {enabled: true, user: root}\n"
                                              "allow_tuning: true\n")
                  for n in ("a", "b")]
        agents = [(loop.agent, loop.device) for loop in agents]
        before = [self.read_ahead(dev) for _, dev in agents]
        # Each host's own device, from its agent's config (`device:`), never a guess.
        dev_of = '"${STORMARK_TARGET_DEVICE:?}"'
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agents[0][0].address}", labels: {{transport: loop}}}}
  - {{name: right, address: "{agents[1][0].address}", labels: {{transport: loop}}}}
repeat: 3
sweep:
  blocksize: [1024, 4096]
  read_ahead_kb: [64, 512]
setup:
  - umount "$STORMARK_TARGET_DIR" && mkfs.ext4 -q -F -b {{blocksize}} {dev_of} && mount {dev_of} "$STORMARK_TARGET_DIR"
teardown:
  - sync
phases:
  - name: fsblock
    workload: command
    exec: stat -f -c %S .
  - name: write
    workload: stream
    rw: write
    size: 8M
    bs: 64k
    fdatasync: true
""")
        json_path = os.path.join(self.make_dir(), "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-progress"],
                                   timeout=240)
        self.assertEqual(result.returncode, 0, result.describe())
        self.assert_no_crash(result)
        self.assertIn("Summary: median of 3 runs", result.stdout)
        summary = result.stdout.split("Summary: median of 3 runs")[1]
        if os.environ.get("STORMARK_SHOW_OUTPUT"):
            print(result.stdout[-1500:])
        # The plan labels both hosts 'loop', which the via column shows.
        self.assertRegex(summary, r"left\s+loop\s+scratch\s+1024\s+64\s")
        self.assertRegex(summary, r"right\s+loop\s+scratch\s+4096\s+512\s")
        self.assertNotIn("labelled 'loop'", result.stdout)  # The agents detected loop too.

        report = self.load_json(json_path)
        self.assertEqual(len(report["phases"]), 4 * 3 * 2)
        self.assertEqual({a["host"]: a["labels"] for a in report["agents"]},
                         {"left": {"transport": "loop"}, "right": {"transport": "loop"}})
        for phase in report["phases"]:
            point = phase["sweep_point"]
            for row in phase["results"]:
                self.assertEqual(row["status"], "succeeded", row)
                if phase["name"] == "fsblock":
                    # The hook really made the filesystem the sweep point asked for.
                    self.assertEqual(row["resolved"]["stdout_tail"].strip(), point["blocksize"])
                else:
                    self.assertEqual(row["tuning"]["read_ahead_kb"], point["read_ahead_kb"])
        # `results show` prints the run as `run` printed it: the points' headers, the hooks'
        # lines, each phase's table with its repetition, and the summary.
        show = self.run_stormark(["results", "show", "latest"])
        self.assertEqual(show.returncode, 0, show.describe())

        def body(text):
            start = text.index("Sweep point 1/4: ")
            summary = text.index("Summary: median of 3 runs")
            end = text.find("\n\n", summary)
            return text[start:end if end >= 0 else len(text)]

        self.assertEqual(body(show.stdout), body(result.stdout))
        self.assertIn(", run 3/3]", show.stdout)
        self.assertIn("  setup `umount", show.stdout)

        # The agents put read-ahead back, and left nothing in the targets.
        self.assertEqual([self.read_ahead(dev) for _, dev in agents], before)
        for agent, _ in agents:
            self.assertEqual(agent.phase_dirs(), [])

    def test_a_hook_that_needs_root_says_so_when_it_runs_as_nobody(self):
        loop = h.start_loop_agent(self, "nobody", "commands: {enabled: true}\n")
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{loop.agent.address}"}}
setup:
  - umount "$STORMARK_TARGET_DIR"
phases:
  - {{name: write, workload: stream, rw: write, size: 1M, bs: 64k}}
""")
        result = self.run_stormark(["run", "--plan", plan, "--no-progress"], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertIn("(the hook ran as user 'nobody'; hooks that format or mount filesystems "
                      "need 'commands.user: root' in the agent's config)", result.stdout)
        # Still mounted: the hook could not touch it.
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            self.assertIn(f" {loop.mount_point} ", f.read())

    def test_a_failed_setup_skips_its_point_and_every_view_says_so(self):
        agent = self.start_agent("skips", extra_config="commands: {enabled: true}\n")
        # Point n=2's setup fails as mkfs does: its error first, then a long usage text.
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agent.address}"}}
sweep:
  n: [1, 2, 3]
setup:
  - if test {{n}} = 2; then echo "bad value {{n}}" >&2; seq 400 | sed 's/^/usage /' >&2; exit 3; fi
phases:
  - {{name: write, workload: stream, rw: write, size: 1M, bs: 64k}}
""")
        work = self.make_dir()
        json_path = os.path.join(work, "out.json")
        db = os.path.join(work, "results.db")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--db", db,
                                    "--no-progress"], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        out = result.stdout
        self.assertRegex(out, r"FAILED\n  x left: [^\n]*command exited with status 3: bad value 2 "
                              r"\.\.\. usage 400\n")
        self.assertIn("  the phases of this point are skipped: its setup failed", out)
        self.assertIn("status: partial:\n", out)
        self.assertIn("  - sweep point n=2: its phases were skipped (its setup failed)", out)

        report = self.load_json(json_path)
        self.assertEqual(report["status"], "partial")
        self.assertIn("sweep point n=2: its phases were skipped (its setup failed)",
                      report["reasons"])
        self.assertEqual([p["sweep_point"] for p in report["skipped_points"]], ["n=2"])
        failed = [hk for hk in report["hooks"] if not hk["ok"]]
        self.assertEqual(len(failed), 1, report["hooks"])
        self.assertIn("bad value 2 ... usage 400", failed[0]["failures"][0]["error"])
        self.assertEqual(len(report["phases"]), 2)

        with sqlite3.connect(db) as conn:
            self.assertEqual(conn.execute("SELECT status FROM runs").fetchone()[0], "partial")
        show = self.run_stormark(["results", "show", "latest", "--db", db])
        self.assertEqual(show.returncode, 0, show.describe())
        start = out.index("Sweep point 1/3: ")
        end = out.index("\n\n", out.index("status: partial"))
        self.assertEqual(show.stdout[show.stdout.index("Sweep point 1/3: "):][:end - start],
                         out[start:end])

    def test_a_teardown_runs_every_line_past_a_failed_one(self):
        # As the RAID sweep's does: an `umount` that fails must not keep the `mdadm --stop`
        # after it from freeing the disks for the next point.
        agent = self.start_agent("teardown", extra_config="commands: {enabled: true}\n")
        marks = self.make_dir()
        os.chmod(marks, 0o777)  # The hooks run as 'nobody'.
        plan = self.write_file(os.path.join(self.make_dir(), "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agent.address}"}}
sweep:
  n: [1, 2]
teardown:
  - echo "not mounted" >&2; exit 4
  - touch {marks}/stopped-{{n}}
phases:
  - {{name: write, workload: stream, rw: write, size: 1M, bs: 64k}}
""")
        work = self.make_dir()
        json_path = os.path.join(work, "out.json")
        db = os.path.join(work, "results.db")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--db", db,
                                    "--no-progress"], timeout=120)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 1, result.describe())
        self.assertEqual(sorted(os.listdir(marks)), ["stopped-1", "stopped-2"], result.stdout)
        report = self.load_json(json_path)
        self.assertEqual([(hk["what"], hk["ok"]) for hk in report["hooks"]],
                         [("teardown", False), ("teardown", True)] * 2, report["hooks"])
        self.assertEqual(len(report["phases"]), 2)
        self.assertIn("command exited with status 4: not mounted", result.stdout)
        show = self.run_stormark(["results", "show", "latest", "--db", db])
        self.assertEqual(show.returncode, 0, show.describe())
        start = result.stdout.index("Sweep point 1/2: ")
        end = result.stdout.index("touch", result.stdout.index("Sweep point 2/2: "))
        self.assertEqual(show.stdout[show.stdout.index("Sweep point 1/2: "):][:end - start],
                         result.stdout[start:end])


if __name__ == "__main__":
    h.main()
