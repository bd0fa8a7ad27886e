# SPDX-License-Identifier: GPL-2.0
"""The live path without a browser: the page's messages (the whole
document, then what changed) rebuild the view's document exactly; the
server ends by itself at feed_end, or drains the file when told its
writer is gone; and the terminal's final tables and report.html come
from one snapshot, line for line, also when the guest died before
feed_end (both say so, the same way). The page's merge itself (live.js)
is driven by test_dashboards, in Chromium."""

import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from frlock import TOP, fixtures, report, server, terminal

FIXTURE = fixtures.FIXTURE
SERVER = os.path.join(TOP, "dashboards", "server")
REPORT = os.path.join(TOP, "dashboards", "report")
CHARTJS = os.environ.get("FRLOCK_CHARTJS", server.CHARTJS)
NOTE = "the feed ended without feed_end: the run is incomplete"


def apply(doc, msg):
    """A message merged into the page's document, as live.js merges it."""
    if "full" in msg:
        return json.loads(json.dumps(msg["full"]))
    for what, path, value in msg["ops"]:
        at = doc
        for k in path[:-1]:
            at = at[k]
        if what == "append":
            at[path[-1]].extend(value)
        else:
            at[path[-1]] = value
    return doc


def fixture_lines():
    return open(FIXTURE, "rb").read().splitlines(keepends=True)


def report_snapshot(html):
    """The snapshot report.html inlines (and report.js draws)."""
    text = open(html, encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="frlock-data">(.*?)</script>', text, re.S)
    return json.loads(m.group(1))["view"]


class Messages(unittest.TestCase):
    def test_changes_rebuild_the_document(self):
        """live: the page's messages, merged, are the view's document after every push; rows only ever appended"""
        fd = server.Feed("fixture", tell=lambda msg: None)
        doc, seq, sizes, wholes = None, None, [], []
        lines = fixture_lines()
        for i, raw in enumerate(lines):
            fd.add_line(raw.rstrip(b"\n"))
            if i % 7 and i != len(lines) - 1:
                continue
            msgs, seq = fd.page_messages(seq)
            for n, m in msgs:
                msg = json.loads(m)
                self.assertEqual(msg.get("base", n - 1), n - 1)
                if doc is not None:
                    self.assertNotIn("full", msg, "line %d: the whole document again" % i)
                    self.assertNotIn(["rows", "rows"], [op[1] for op in msg["ops"]
                                                        if op[0] == "set"], "line %d" % i)
                    sizes.append(len(m))
                doc = apply(doc, msg)
            whole = fd.whole_json()
            wholes.append(len(whole))
            self.assertEqual(doc, json.loads(whole)["full"], "line %d" % (i + 1))
        fd.end()
        msgs, seq = fd.page_messages(seq)
        for _, m in msgs:
            doc = apply(doc, json.loads(m))
        self.assertEqual(doc, json.loads(fd.whole_json())["full"])
        self.assertEqual({k: v for k, v in doc.items() if k != "status"},
                         json.loads(json.dumps(fd.final)))
        print("# %d pushes: changes %d..%d bytes (mean %d); the whole document grew from %d "
              "to %d bytes" % (len(wholes), min(sizes), max(sizes), sum(sizes) // len(sizes),
                               wholes[0], wholes[-1]))

    def test_resume_and_gap(self):
        """live: a page resumes from a kept message, and gets the whole document when it is further behind"""
        fd = server.Feed("fixture", tell=lambda msg: None)
        lines = fixture_lines()
        fd.add_line(lines[0].rstrip(b"\n"))
        msgs, first = fd.page_messages(None)
        self.assertEqual(len(msgs), 1)
        self.assertEqual(fd.page_messages(first), ([], first))
        for raw in lines[1:]:
            fd.add_line(raw.rstrip(b"\n"))
            fd.page_messages(first)     # a push to some page: one message a line
        behind = fd.seq - 3
        msgs, now = fd.page_messages(behind)
        self.assertEqual([n for n, _ in msgs], [behind + 1, behind + 2, behind + 3])
        self.assertGreater(len(lines), server.KEEP_MESSAGES + 1)
        msgs, now = fd.page_messages(first)
        self.assertEqual(len(msgs), 1)
        self.assertIn("full", json.loads(msgs[0][1]))
        msgs, _ = fd.page_messages(now + 10)    # another server's number
        self.assertIn("full", json.loads(msgs[0][1]))


@unittest.skipUnless(os.path.isfile(CHARTJS), "libjs-chart.js not installed: make deps")
class EndsAndAgrees(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="frlock-live.")

    def start(self, feed):
        urlf = os.path.join(self.dir, "url")
        if os.path.exists(urlf):
            os.remove(urlf)
        self.out = os.path.join(self.dir, "terminal.txt")
        self.err = os.path.join(self.dir, "server.err")
        self.html = os.path.join(self.dir, "report.html")
        p = subprocess.Popen([SERVER, "--terminal", "--report", self.html, "--url-file", urlf,
                              feed], stdout=open(self.out, "w"), stderr=open(self.err, "w"))
        self.addCleanup(lambda: p.poll() is None and (p.kill(), p.wait()))
        for _ in range(100):
            if os.path.exists(urlf) and open(urlf).read().strip():
                return p, open(urlf).read().strip()
            time.sleep(0.1)
        raise AssertionError("no URL: " + open(self.err).read())

    def agree(self, snap, after=()):
        """The terminal ends with the report's final tables, line for line
        (then the lines after, if any)."""
        text = open(self.out).read().splitlines()
        want = terminal.final_text(snap) + list(after)
        self.assertEqual(text[-len(want):], want, "the terminal's last lines")
        self.assertEqual(terminal.tables_in("\n".join(text), snap), [])

    def test_fixture(self):
        """live: on the recorded feed the server ends by itself at feed_end, and its final tables and report.html agree line for line"""
        feed = os.path.join(self.dir, "feed.ndjson")
        with open(feed, "wb") as f:
            f.write(b"".join(fixture_lines()))
        p, _ = self.start(feed)         # following, no --once: feed_end ends it
        self.assertEqual(p.wait(30), 0, open(self.err).read())
        snap = report_snapshot(self.html)
        self.agree(snap)
        self.assertIsNone(snap["incomplete"])
        # dashboards/report reads the file as the server did.
        self.assertEqual(snap, json.loads(json.dumps(report.read_feed(feed).final)))

    def test_guest_died(self):
        """live: a guest that dies before feed_end: the server drains the file when told, and the terminal and report.html say the run is incomplete, the same way"""
        feed = os.path.join(self.dir, "feed.ndjson")
        lines = [ln for ln in fixture_lines() if b'"feed_end"' not in ln]
        cut = lines[:len(lines) * 2 // 3]
        open(feed, "w").close()
        p, url = self.start(feed)
        for i in range(0, len(cut), 40):
            with open(feed, "ab") as f:
                f.write(b"".join(cut[i:i + 40]))
            time.sleep(0.1)
        p.send_signal(signal.SIGUSR1)   # at once: what is in the file must still be read
        self.assertEqual(p.wait(30), server.INCOMPLETE_STATUS, open(self.err).read())
        snap = report_snapshot(self.html)
        self.assertEqual(snap["incomplete"], NOTE)
        self.assertEqual(open(self.out).read().splitlines()[-1], NOTE)
        self.agree(snap)
        self.assertIn("dashboards/server: " + NOTE, open(self.err).read().splitlines())
        whole = report.read_feed(feed)
        self.assertEqual(whole.lines, len(cut))
        self.assertEqual(snap, json.loads(json.dumps(whole.final)), "nothing left unread")
        # The report of the file alone says it too.
        html = os.path.join(self.dir, "alone.html")
        r = subprocess.run([REPORT, "-o", html, feed], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("frlock-report: " + NOTE, r.stderr.splitlines())
        self.assertEqual(report_snapshot(html), snap)

    def test_late_writer_gone(self):
        """live: SIGUSR1 until the server has exited never kills it (make run sends it once the guest is gone, maybe as the server ends)"""
        for _ in range(3):
            p, _ = self.start(FIXTURE)
            while p.poll() is None:
                try:
                    p.send_signal(signal.SIGUSR1)
                except ProcessLookupError:
                    break
                time.sleep(0.002)
            self.assertEqual(p.wait(), 0, open(self.err).read())

    def test_after_feed_end(self):
        """live: lines after feed_end are counted, not read, by the server and the report alike"""
        feed = os.path.join(self.dir, "feed.ndjson")
        lines = fixture_lines()
        with open(feed, "wb") as f:
            f.write(b"".join(lines) + b"".join(lines[:5]))
        p, _ = self.start(feed)
        self.assertEqual(p.wait(30), 0, open(self.err).read())
        self.assertIn("dashboards/server: 5 lines after feed_end not read",
                      open(self.err).read().splitlines())
        snap = report_snapshot(self.html)
        self.agree(snap, ["dashboards/server: line %d comes after feed_end: not read (counted)"
                          % (len(lines) + 1)])
        r = subprocess.run([REPORT, "-o", os.path.join(self.dir, "r.html"), feed],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertIn("frlock-report: 5 lines after feed_end not read", r.stderr.splitlines())
        self.assertEqual(report_snapshot(os.path.join(self.dir, "r.html")), snap)


if __name__ == "__main__":
    unittest.main()
