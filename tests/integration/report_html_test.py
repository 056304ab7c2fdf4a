"""`stormark report`: a two-host, three-point sweep, run twice, gives one self-contained HTML
page that headless Chromium renders without a console error, with its charts drawn from the
data; the test saves a screenshot of the page (build/test-artifacts/report_html.png)."""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True  # No __pycache__ in the source tree.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless_chromium  # noqa: E402
import stormark_harness as h  # noqa: E402

RUN_ID = re.compile(r"run (r\d{8}-\d{6}-[0-9a-f]{4})")
LABEL = "<b>nightly</b> & \"sweep\""

# What the page holds, read by the browser from the rendered DOM.
CHARTS = """Array.from(document.querySelectorAll('svg.chart')).map(s => ({
  title: s.getAttribute('aria-label'), kind: s.dataset.kind,
  series: +s.dataset.series, points: +s.dataset.points,
  marks: s.querySelectorAll('circle.point, rect.bar').length,
  lines: s.querySelectorAll('path.line').length,
  width: s.getBoundingClientRect().width, height: s.getBoundingClientRect().height}))"""
PAGE = """({title: document.title, h1: document.querySelector('h1').textContent,
  bold: document.querySelectorAll('h1 b, title b').length,
  scripts: document.scripts.length,
  tables: document.querySelectorAll('table.results').length,
  shaded: document.querySelectorAll('table.results td[style*=background]').length,
  differs: document.querySelectorAll('table.environment tr.differs').length,
  sections: Array.from(document.querySelectorAll('section')).map(s => s.id)})"""

# The pairs of axis labels of one chart whose rendered boxes overlap, as "chart: a / b".
OVERLAPPING_TICKS = """[].concat(...Array.from(document.querySelectorAll('svg.chart')).map(s => {
  const ticks = Array.from(s.querySelectorAll('text.tick')).map(t => ({
    text: t.textContent, box: t.getBoundingClientRect()}));
  const out = [];
  for (let i = 0; i < ticks.length; ++i) for (let j = i + 1; j < ticks.length; ++j) {
    const a = ticks[i].box, b = ticks[j].box;
    if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 &&
        b.top < a.bottom - 1) {
      out.push(s.getAttribute('aria-label') + ': ' + ticks[i].text + ' / ' + ticks[j].text);
    }
  }
  return out;
}))"""


def artifact_dir():
    path = os.path.join(os.path.dirname(os.path.abspath(h.bin_dir())), "test-artifacts")
    os.makedirs(path, exist_ok=True)
    return path


@unittest.skipUnless(headless_chromium.chromium_binary(), "needs Debian's chromium")
class ReportHtmlTest(h.StormarkTestCase):

    def test_sweep_report_renders_in_chromium_with_charts(self):
        agents = [self.start_agent(n) for n in ("left", "right")]
        work = self.make_dir()
        db = os.path.join(work, "results.db")
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agents[0].address}", target: scratch}}
  - {{name: right, address: "{agents[1].address}", target: scratch}}
repeat: 2
sweep:
  bs: [64k, 256k, 1M]
phases:
  - {{name: seq-write, workload: stream, rw: write, size: 8M, fdatasync: true}}
""")
        runs = []
        for _ in range(2):
            result = self.run_stormark(["run", "--plan", plan, "--db", db, "--label", LABEL,
                                        "--no-progress"], timeout=180)
            self.assertEqual(result.returncode, 0, result.describe())
            runs.append(RUN_ID.search(result.stdout).group(1))

        report = os.path.join(work, "report.html")
        made = self.run_stormark(["report", "latest", "-o", report, "--db", db])
        self.assertEqual(made.returncode, 0, made.describe())
        self.assert_no_crash(made)
        self.assertIn(f"HTML report of {runs[1]}: {report}", made.stdout)
        html = h.read_text(report)
        self.assertNotIn("<b>nightly", html)  # The label is escaped...
        self.assertIn("&lt;b&gt;nightly&lt;/b&gt; &amp; &quot;sweep&quot;", html)
        for outside in ("<script", "http://", "https://", "src="):
            self.assertFalse(outside in html, outside)  # ...and nothing is fetched or run.

        with headless_chromium.Browser() as browser:
            browser.open("file://" + report)
            page = browser.evaluate(PAGE)
            charts = browser.evaluate(CHARTS)
            shot = os.path.join(artifact_dir(), "report_html.png")
            height = browser.screenshot(shot)
            self.assertEqual(browser.errors, [], browser.browser_log())

        print(f"screenshot: {shot} ({height} px tall)", file=sys.stderr)
        self.assertTrue(os.path.getsize(shot) > 20000, shot)
        # The label is text, never markup.
        self.assertIn(LABEL, page["title"])
        self.assertEqual(page["bold"], 0)
        self.assertEqual(page["scripts"], 0)
        # No "series" section: each phase was over within one sample interval, and a time
        # series of one point says nothing the tables do not.
        self.assertEqual(page["sections"],
                         ["results", "throughput", "sweeps", "latency", "environment"])
        self.assertEqual(page["tables"], 1)
        # Shading follows the figures: none between ranges that overlap (unit-tested), so two
        # agents on this one machine may well leave the table white.

        for chart in charts:
            # Every chart was laid out and holds a mark per data point.
            self.assertGreater(chart["width"], 300, chart)
            self.assertGreater(chart["height"], 200, chart)
            self.assertGreater(chart["points"], 0, chart)
            self.assertEqual(chart["marks"], chart["points"], chart)
        by_title = {c["title"]: c for c in charts}
        # Bars: a host per series, three sweep points each.
        for title in ("seq-write: throughput, MiB/s", "seq-write: IOPS (operations/s)"):
            self.assertEqual((by_title[title]["series"], by_title[title]["points"]), (2, 6))
        # The sweep curve: one line per host over the three block sizes.
        sweep = by_title["seq-write: MiB/s against bs"]
        self.assertEqual((sweep["series"], sweep["lines"], sweep["points"]), (2, 2, 6))
        # Latency: a line per host and sweep point, as percentiles and as a CDF.
        for title in ("seq-write: latency by percentile", "seq-write: latency CDF"):
            self.assertEqual(by_title[title]["series"], 6, by_title[title])
        # No time series of a single point.
        series = [c for c in charts if c["title"].startswith("Phase ")]
        self.assertEqual(series, [], [c["title"] for c in charts])

    def test_bonnie_and_a_four_point_command_sweep_read_as_their_own_views(self):
        agent = self.start_agent("views", extra_config="commands: {enabled: true}\n")
        work = self.make_dir()
        db = os.path.join(work, "results.db")
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agent.address}", target: scratch}}
sweep:
  seeks: [100, 200, 300, 400]
phases:
  - {{name: untar, workload: command, command: "touch a b c && sync"}}
  - {{name: bonnie, workload: bonnie, size: 8M, ram: 4M, chunk: 64k, char_size: 1M, files: "1:0:0:1"}}
""")
        result = self.run_stormark(["run", "--plan", plan, "--db", db, "--no-progress"],
                                   timeout=240)
        self.assertEqual(result.returncode, 0, result.describe())
        report = os.path.join(work, "views.html")
        made = self.run_stormark(["report", "latest", "-o", report, "--db", db])
        self.assertEqual(made.returncode, 0, made.describe())
        html = h.read_text(report)
        with headless_chromium.Browser() as browser:
            browser.open("file://" + report)
            charts = browser.evaluate(CHARTS)
            shot = os.path.join(artifact_dir(), "report_views.png")
            height = browser.screenshot(shot)
            self.assertEqual(browser.errors, [], browser.browser_log())
        print(f"screenshot: {shot} ({height} px tall)", file=sys.stderr)
        titles = [c["title"] for c in charts]
        # The command is its wall time against the swept value, and nothing else: no IOPS,
        # latency, rate over time or throughput bars. bonnie reads as bonnie++'s own table, once
        # per sweep point, with no chart of its totals, which mix tests of different kinds.
        self.assertEqual(titles, ["untar: wall seconds against seeks"])
        self.assertEqual(html.count("<pre>"), 4)
        self.assertIn("Sequential Output", html)

    def test_a_four_point_sweep_of_two_parameters_has_readable_labels(self):
        agents = [self.start_agent(n) for n in ("left", "right")]
        work = self.make_dir()
        db = os.path.join(work, "results.db")
        plan = self.write_file(os.path.join(work, "plan.yaml"), f"""
hosts:
  - {{name: left, address: "{agents[0].address}", target: scratch}}
  - {{name: right, address: "{agents[1].address}", target: scratch}}
sweep:
  bs: [64k, 1M]
  fdatasync: [true, false]
phases:
  - {{name: seq-write, workload: stream, rw: write, size: 8M}}
""")
        result = self.run_stormark(["run", "--plan", plan, "--db", db, "--no-progress"],
                                   timeout=180)
        self.assertEqual(result.returncode, 0, result.describe())
        report = os.path.join(work, "sweep4.html")
        made = self.run_stormark(["report", "latest", "-o", report, "--db", db])
        self.assertEqual(made.returncode, 0, made.describe())
        with headless_chromium.Browser() as browser:
            browser.open("file://" + report)
            charts = browser.evaluate(CHARTS)
            overlaps = browser.evaluate(OVERLAPPING_TICKS)
            shot = os.path.join(artifact_dir(), "report_sweep4.png")
            height = browser.screenshot(shot)
            self.assertEqual(browser.errors, [], browser.browser_log())
        print(f"screenshot: {shot} ({height} px tall)", file=sys.stderr)
        by_title = {c["title"]: c for c in charts}
        # Bars: a host per series, four sweep points each.
        bars = by_title["seq-write: throughput, MiB/s"]
        self.assertEqual((bars["series"], bars["points"]), (2, 8), bars)
        # The heading claims no bs or fdatasync for the phase as a whole: they vary by row.
        self.assertIn("<h3>seq-write: stream, swept over bs, fdatasync (each row&#39;s point gives "
                      "their values)</h3>", h.read_text(report))
        # No axis label runs into another, as rendered (each chart's ticks, pairwise).
        self.assertEqual(overlaps, [], overlaps)


if __name__ == "__main__":
    h.main()
