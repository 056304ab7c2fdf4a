"""Clock sync against a real offset: a qemu guest (vmlab.py) boots with its clock set 7 s ahead of
the host's, and runs the agent; an agent on the host runs beside it. Every other test's agents
share one clock, so only here does the controller have to find and use a real offset.

- The controller's estimate of the guest's offset agrees with the offset the test sees itself:
  the guest prints its clock (ns) on its console a few times, and the test notes its own clock as
  each line appears (within a few ms: the lines' spread was 14-20 ms on a loaded host). It is
  also between +5.5 and +7.2 s: the guest's kernel starts from the RTC's whole second (up to 1 s
  behind), and /init adds 7 s to that in one process (vmlab.py).
- The host agent's offset is within 50 ms of 0.
- A concurrent phase on both starts together on the controller's clock: its start skew across
  hosts is under the 200 ms a TCG guest's slow RPCs allow, not the 7 s of the raw clocks, and the
  result's start instants, corrected by each host's offset, are as close.
"""

import os
import sys
import time
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
import stormark_harness as h  # noqa: E402
import vmlab  # noqa: E402

WHY_NOT = vmlab.missing()
OFFSET_S = 7
CLOCK_LINES = 5


@unittest.skipIf(WHY_NOT, WHY_NOT)
class ClockOffsetTest(h.StormarkTestCase):

    def test_a_guest_seven_seconds_ahead_starts_with_the_others(self):
        config = "targets:\n  mem: {null: true}\n"
        show_clock = (f"for i in $(seq {CLOCK_LINES}); do echo \"GUEST-CLOCK "
                      f"$(chroot /host /usr/bin/date +%s.%N)\"; sleep 0.3; done\n")
        guest = vmlab.Guest(self, "ahead", vmlab.agent_script(h.bin_dir(), config, show_clock),
                            clock_offset_seconds=OFFSET_S).start()
        host_agent = self.start_agent("beside", extra_targets="  mem: {null: true}\n")
        seen_offset = self.offset_seen_on_console(guest)
        guest.wait_for(r"listening on", timeout=240)

        work = self.make_dir()
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""hosts:
  - {{name: guest, address: "127.0.0.1:{guest.port(7420)}", target: mem}}
  - {{name: host, address: "{host_agent.address}", target: mem}}
phases:
  - {{name: w, workload: stream, rw: write, size: 64M, bs: 1M}}
""")
        json_path = os.path.join(work, "out.json")
        result = self.run_stormark(["run", "--plan", plan, "--json", json_path, "--no-db",
                                    "--no-progress"], timeout=600)
        self.assert_no_crash(result)
        self.assertEqual(result.returncode, 0, result.describe() + guest.console_text()[-2000:])
        print(result.stdout, file=sys.stderr)
        report = self.load_json(json_path)
        phase = report["phases"][0]
        rows = {r["host"]: r for r in phase["results"]}
        for row in rows.values():
            self.assertEqual(row["status"], "succeeded", row)
        guest_offset = rows["guest"]["clock_offset_nanos"] / 1e9
        host_offset = rows["host"]["clock_offset_nanos"] / 1e9
        # A line appears after the guest read its clock, never before: the offset seen is at
        # most the true one, and late by the line's way to the console.
        self.assertGreater(guest_offset, seen_offset - 0.01, (guest_offset, seen_offset))
        self.assertLess(guest_offset, seen_offset + 0.1, (guest_offset, seen_offset))
        self.assertGreater(guest_offset, OFFSET_S - 1.5, guest_offset)
        self.assertLess(guest_offset, OFFSET_S + 0.2, guest_offset)
        self.assertLess(abs(host_offset), 0.05, host_offset)
        self.assertIsNotNone(phase["start_skew_nanos"], phase)
        self.assertLess(phase["start_skew_nanos"], 200e6, phase)
        # The agents' own start instants, each on its own clock, 7 s apart; corrected, together.
        starts = {name: row["start_unix_nanos"] - row["clock_offset_nanos"]
                  for name, row in rows.items()}
        self.assertLess(abs(starts["guest"] - starts["host"]), 200e6, starts)
        raw = abs(rows["guest"]["start_unix_nanos"] - rows["host"]["start_unix_nanos"]) / 1e9
        self.assertGreater(raw, OFFSET_S - 1.5, raw)

    def offset_seen_on_console(self, guest):
        """The guest's clock less the test's, as seen: for each GUEST-CLOCK line, the guest's
        instant less this clock's when the line appeared (polled every 2 ms); the largest, the
        line that came quickest."""
        seen, offsets = set(), []
        deadline = time.monotonic() + 240
        while len(offsets) < CLOCK_LINES:
            now = time.time()
            for line in guest.console_text().splitlines():
                if line.startswith("GUEST-CLOCK ") and line not in seen:
                    seen.add(line)
                    offsets.append(float(line.split()[1]) - now)
            if time.monotonic() > deadline:
                self.fail(f"{len(offsets)} of {CLOCK_LINES} clock lines in 240 s: "
                          f"{guest.console_text()[-2000:]}")
            time.sleep(0.002)
        print(f"offset seen on the console: {max(offsets):+.3f} s "
              f"(lines spread {max(offsets) - min(offsets):.3f} s)", file=sys.stderr)
        return max(offsets)


if __name__ == "__main__":
    h.main()
