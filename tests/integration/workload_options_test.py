"""Workload options through the paths users take: every documented fio alias of randio
(ioengine, readwrite, rwmixwrite, bsrange, randseed) given with `--set`, as plan keys and as
sweep axes, on the controller's embedded local agent (`stormark run --dir`), each checked in the
JSON report: the phase's workload spec and the agent's `resolved` values. Also `stormark help
workload` against the generated docs, and the one-line errors for bad keys and values."""

import os
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stormark_harness as h  # noqa: E402

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "workloads")

# A randio phase that ends at once: 1 MiB, at most 1 s.
TINY = {"size": "1M", "runtime": "1s"}

# Each fio alias, the value given, and what the report must then show: fields of the phase's
# workload spec, and of the agent's resolved values.
ALIASES = [
    ("ioengine", "io_uring", {"engine": "IO_URING"}, {"engine": "io_uring"}),
    ("readwrite", "randrw", {"rw": "RANDRW"}, {"rw": "randrw"}),
    ("rwmixwrite", "30", {"rwmixread": 70}, {}),
    ("bsrange", "4k-8k", {"bs_min": 4096, "bs_max": 8192}, {"bs": "4k-8k"}),
    ("randseed", "4242", {"seed": 4242}, {"seed": "4242"}),
]


class WorkloadOptionsTest(h.StormarkTestCase):

    def setUp(self):
        self.data = self.make_dir("stormark-itest-options-")
        self.out = self.make_dir("stormark-itest-options-out-")
        self.json_path = os.path.join(self.out, "out.json")

    def run_local(self, args, expect=0):
        result = self.run_stormark(["run", "--dir", self.data, "--no-db", "--no-progress",
                                    "--json", self.json_path] + args)
        self.assert_no_crash(result)
        # The agent's error when the kernel refuses a ring (uring_queue.cc).
        if expect == 0 and result.returncode != 0 and \
                "io_uring with depth" in result.stdout + result.stderr:
            self.skipTest("io_uring is not available on this machine")
        self.assertEqual(result.returncode, expect, result.describe())
        return result

    def check_took_effect(self, phase, only=None):
        self.assertEqual(phase["workload"]["type"], "randio")
        self.assertEqual(len(phase["results"]), 1, phase)
        row = phase["results"][0]
        self.assertEqual(row["status"], "succeeded", row)
        for alias, value, spec, resolved in ALIASES:
            if only is not None and alias not in only:
                continue
            for field, want in spec.items():
                self.assertEqual(phase["workload"][field], want, f"{alias}={value}: {field}")
            for field, want in resolved.items():
                self.assertEqual(row["resolved"][field], want, f"{alias}={value}: resolved {field}")

    def test_every_fio_alias_through_set(self):
        sets = [f"{k}={v}" for k, v in TINY.items()] + [f"{a}={v}" for a, v, _, _ in ALIASES]
        args = ["--workload", "randio"]
        for s in sets:
            args += ["--set", s]
        self.run_local(args)
        report = self.load_json(self.json_path)
        self.assertEqual(len(report["phases"]), 1)
        self.check_took_effect(report["phases"][0])

    def test_every_fio_alias_as_a_plan_key(self):
        keys = "".join(f"    {k}: {v}\n" for k, v in TINY.items())
        keys += "".join(f"    {a}: {v}\n" for a, v, _, _ in ALIASES)
        plan = self.write_file(os.path.join(self.out, "plan.yaml"),
                               "phases:\n  - name: aliases\n    workload: randio\n" + keys)
        self.run_local(["--plan", plan])
        report = self.load_json(self.json_path)
        self.assertEqual([p["name"] for p in report["phases"]], ["aliases"])
        self.check_took_effect(report["phases"][0])

    def test_every_fio_alias_as_a_sweep_axis(self):
        # Each alias an axis; two of them with two values, so that the points differ.
        axes = {a: [v] for a, v, _, _ in ALIASES}
        axes["ioengine"] = ["psync", "io_uring"]
        axes["randseed"] = ["4242", "4343"]
        sweep = "".join(f"  {a}: [{', '.join(vs)}]\n" for a, vs in axes.items())
        keys = "".join(f"    {k}: {v}\n" for k, v in TINY.items())
        plan = self.write_file(os.path.join(self.out, "plan.yaml"),
                               "sweep:\n" + sweep +
                               "phases:\n  - name: swept\n    workload: randio\n" + keys)
        self.run_local(["--plan", plan])
        report = self.load_json(self.json_path)
        self.assertEqual(len(report["phases"]), 4, [p["sweep_point"] for p in report["phases"]])
        seen = set()
        for phase in report["phases"]:
            point = phase["sweep_point"]
            self.assertEqual(set(point), set(axes))
            self.check_took_effect(phase, only={"readwrite", "rwmixwrite", "bsrange"})
            engine = point["ioengine"]
            self.assertEqual(phase["workload"]["engine"], engine.upper())
            self.assertEqual(phase["results"][0]["resolved"]["engine"], engine)
            self.assertEqual(phase["workload"]["seed"], int(point["randseed"]))
            self.assertEqual(phase["results"][0]["resolved"]["seed"], point["randseed"])
            seen.add((engine, point["randseed"]))
        self.assertEqual(len(seen), 4)

    def test_bad_values_and_keys_are_one_line_naming_them(self):
        cases = [
            (["--workload", "randio", "--set", "ioengine=posixaio"],
             ["ioengine", "'posixaio'", "psync, io_uring or libaio"]),
            (["--workload", "randio", "--set", "rwmixwrite=101"],
             ["rwmixwrite", "'101'", "0 to 100"]),
            (["--workload", "randio", "--set", "blocksize=4k"],
             ["no phase takes 'blocksize'"]),
        ]
        for args, mentions in cases:
            with self.subTest(args=args):
                result = self.run_local(args, expect=2)
                lines = result.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, result.describe())
                for m in mentions:
                    self.assertIn(m, lines[0])
                self.assertNotIn("Phase ", result.stdout)
        plan = self.write_file(os.path.join(self.out, "bad.yaml"),
                               "phases:\n  - workload: randio\n    blocksize: 4k\n")
        result = self.run_local(["--plan", plan], expect=2)
        self.assertIn("unknown randio parameter 'blocksize' (known: rw (readwrite)", result.stderr)
        self.assertIn("engine (ioengine)", result.stderr)

    def test_help_workload_prints_every_option_and_matches_the_docs(self):
        listing = self.run_stormark(["help", "workload"])
        self.assertEqual(listing.returncode, 0, listing.describe())
        names = listing.stdout.split("workloads: ")[1].splitlines()[0].split(", ")
        self.assertIn("randio", names)
        for name in names:
            with self.subTest(workload=name):
                md = self.run_stormark(["help", "workload", name, "--markdown"])
                self.assertEqual(md.returncode, 0, md.describe())
                self.assertEqual(md.stdout, h.read_text(os.path.join(DOCS, f"{name}-options.md")),
                                 f"docs/workloads/{name}-options.md is out of date")
        text = self.run_stormark(["help", "workload", "randio"])
        self.assertEqual(text.returncode, 0, text.describe())
        for alias, _, _, _ in ALIASES:
            self.assertIn(alias, text.stdout)
        self.assertIn("engine, ioengine", text.stdout)
        self.assertIn("default 60s", text.stdout)
        bad = self.run_stormark(["help", "workload", "fio"])
        self.assertEqual(bad.returncode, 2, bad.describe())
        self.assertIn("unknown workload 'fio'", bad.stderr)


if __name__ == "__main__":
    h.main()
