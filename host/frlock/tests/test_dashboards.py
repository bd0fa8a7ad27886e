# SPDX-License-Identifier: GPL-2.0
"""The dashboards: the server, the live page and the report, drawn by
headless Chromium from the recorded fixture (dashboards/fixtures/) and
from synthetic feeds. The expected cells come from the view computed here
from the same feed; the terminal, the page and the report must show
exactly those. Logs, pages' summaries and screenshots go to
$FRLOCK_TEST_LOGS/dashboards (or a new folder under /tmp)."""

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.request
import http.client

from frlock import TOP, fixtures, report, server, terminal
from frlock.tests import synth as S

DASH = os.path.join(TOP, "dashboards")
FIXTURE = fixtures.FIXTURE
BROWSER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "browser.py")
CHARTJS = os.environ.get("FRLOCK_CHARTJS", server.CHARTJS)
HAVE_BROWSER = bool(shutil.which("chromium")) and os.path.isfile(CHARTJS)
try:
    import websocket  # noqa: F401  (browser.py's)
except ImportError:
    HAVE_BROWSER = False
NEED = "chromium, libjs-chart.js or python3-websocket not installed: make deps"


def logs():
    d = os.environ.get("FRLOCK_TEST_LOGS")
    d = os.path.join(d, "dashboards") if d else None
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    return tempfile.mkdtemp(prefix="frlock-dashboards.")


LOGS = logs()


def snapshot(path, lock=None):
    v, _ = report.read_view(path, lock)
    return v.snapshot()


def write_feed(path, records, extra_lines=()):
    with open(path, "wb") as f:
        for line in S.lines(records):
            f.write(line + b"\n")
        for line in extra_lines:
            f.write(line + b"\n")


class Srv:
    """dashboards/server in the background; its URL, stdout and stderr."""

    def __init__(self, name, *args):
        self.name = name
        self.out = os.path.join(LOGS, name + ".out")
        self.err = os.path.join(LOGS, name + ".err")
        urlf = os.path.join(LOGS, name + ".url")
        if os.path.exists(urlf):
            os.remove(urlf)
        self.p = subprocess.Popen([os.path.join(DASH, "server"), "--url-file", urlf] +
                                  list(args), stdout=open(self.out, "w"),
                                  stderr=open(self.err, "w"))
        self.url = None
        for _ in range(100):
            if os.path.exists(urlf) and open(urlf).read().strip():
                self.url = open(urlf).read().strip()
                break
            if self.p.poll() is not None:
                break
            time.sleep(0.1)
        if not self.url:
            self.stop()
            raise AssertionError("the server gave no URL: " + open(self.err).read())
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def wait_page(self):
        """Until a page has opened its stream (30 s at most)."""
        for _ in range(300):
            with urllib.request.urlopen(self.url + "stats.json") as r:
                if json.load(r)["pages"] > 0:
                    return
            time.sleep(0.1)

    def stop(self, sig=signal.SIGTERM, wait=15):
        if self.p.poll() is None:
            self.p.send_signal(sig)
        return self.p.wait(wait)

    def text(self):
        return open(self.out).read()

    def last_err(self):
        lines = open(self.err).read().splitlines()
        return lines[-1] if lines else ""


def browse(name, url, wait_ended=True, timeout=90):
    png = os.path.join(LOGS, name + ".png")
    args = ["/usr/bin/python3", BROWSER, "--timeout", str(timeout), "--png", png, url]
    if wait_ended:
        args.insert(2, "--wait-ended")
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(os.path.join(LOGS, name + ".json"), "w") as f:
        f.write(p.stdout)
    if p.returncode:
        raise AssertionError("browser.py: " + p.stderr)
    return json.loads(p.stdout)


class Shows(unittest.TestCase):
    """Assertions that a page (browser.py's summary) shows the view's cells."""

    def same_cells(self, page, snap, what):
        s = page["summary"]
        self.assertEqual(page["errors"], [], "%s: console errors" % what)
        self.assertTrue(s["ended"], what)
        self.assertEqual(s["locks"], snap["locks"]["rows"], what + ": the table of every lock")
        self.assertEqual(s["rows"], snap["rows"]["rows"], what + ": the detail's rows")
        self.assertEqual(s["callers"], snap["callers"]["rows"], what + ": the call sites")
        self.assertEqual(s["headers"], [list(snap[k]["columns"]) for k in
                                        ("locks", "rows", "callers")], what + ": headers")
        self.assertEqual(s["lost"], snap["lost"], what + ": lost events")
        self.assertEqual(s["skipped"], snap["skipped"], what + ": skipped")
        self.assertEqual(s["skippedWarn"], any(snap["skipped_counts"].values()),
                         what + ": the skipped line in red when not zero")
        self.assertEqual(s["detail"], snap["detail"]["lock"], what + ": the detail lock")
        self.assertEqual(s["numbers"], snap["numbers"], what + ": the numbers")
        for k, h in snap["hists"].items():
            self.assertEqual(s["hists"][k], {"labels": h["labels"], "run": h["run"],
                                             "last": h["last"]}, what + ": histogram " + k)
        for k in ("reads", "writes", "adjtimex", "retried"):
            self.assertEqual(s["rates"][k], snap["series"][k], what + ": the %s line" % k)
        heat = snap["heat"]["hold_ns"]
        self.assertEqual((s["heat"]["cols"], s["heat"]["cells"], s["heat"]["drawn"]),
                         (len(heat["cols"]), heat["cells"], heat["cells"]), what + ": heatmap")
        canvases = {c[0]: c for c in page["canvases"]}
        for cid in ("heatmap", "rates") + tuple(snap["hists"]):
            self.assertTrue(cid in canvases and canvases[cid][1] >= 200 and
                            canvases[cid][2] >= 100, "%s: canvas %s drawn" % (what, cid))

    def terminal_shows(self, text, snap):
        self.assertEqual(terminal.tables_in(text, snap), [],
                         "the terminal printed the view's tables, lost and skipped lines")
        # Each interval printed live, under its own header, is the same row
        # (a row's cells hold no spaces).
        lines = text.splitlines()
        header = " ".join(snap["rows"]["columns"]).split()
        live = [lines[i + 1].split() for i, ln in enumerate(lines[:-1])
                if ln.split() == header and i > 0 and "per interval" not in lines[i - 1]]
        self.assertEqual(live, snap["rows"]["rows"], "the rows printed live")


class Fixture(unittest.TestCase):
    def test_fixture(self):
        """dashboards: the fixture has both kinds of lock, waits, call sites, a lost event and the load"""
        self.assertEqual(fixtures.problems(FIXTURE), [])


@unittest.skipUnless(HAVE_BROWSER, NEED)
class SameCells(Shows):
    def test_fixture_same_cells(self):
        """dashboards: the terminal, the live page and the report show the fixture's view, cell by cell"""
        snap = snapshot(FIXTURE)
        self.assertEqual(snap["detail"]["lock"], "tk_core")   # series v4: frlockstat names it by its symbol
        self.assertTrue(any(r[1] == "seqcount" for r in snap["locks"]["rows"]))
        # Every chart the page draws has data in a recording of the current
        # tools (the v3 fixture hid two charts left empty by v4's feed).
        self.assertEqual([k for k, h in snap["hists"].items() if not h["labels"]], [])
        srv = Srv("live", "--terminal", "--once", "--linger", "120", FIXTURE)
        try:
            page = browse("live", srv.url)
        finally:
            rc = srv.stop()
        self.assertEqual(rc, 0)
        self.same_cells(page, snap, "live page")
        self.terminal_shows(srv.text(), snap)
        self.assertRegex(srv.last_err(), r"^dashboards/server: \d+ lines, 0 malformed, 0 of "
                         r"unknown type, 0 of a newer schema$")
        html = os.path.join(LOGS, "report.html")
        p = subprocess.run([os.path.join(DASH, "report"), "-o", html, FIXTURE],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.same_cells(browse("report", "file://" + html), snap, "report")

    def test_mixed_locks(self):
        """dashboards: another lock leading on retries half way: every table shows one lock's figures"""
        recs = []
        for i in range(1, 9):
            ts = 500.0 + i
            recs += [S.caller("tk_core.lock", "write", "timekeeping_advance+0x4f3", 300 + i,
                              "update_wall_time+0xc", 1000),
                     S.stat("tk_core.lock", "frlock", ts, 300 + i, retries=2),
                     S.stat("d_seq", "seqcount", ts, 9000 + i, retries=800 if i > 4 else 0,
                            waits=3),
                     S.load(ts + 0.05, 40000.0)]
        feed = os.path.join(LOGS, "mixed.ndjson")
        write_feed(feed, recs + [S.summary(320000, 8.0), {"type": "feed_end", "status": 0}])
        snap = snapshot(feed)
        self.assertEqual(snap["detail"]["lock"], "tk_core.lock")
        self.assertEqual([r[3] for r in snap["rows"]["rows"]], [str(300 + i) for i in range(1, 9)])
        srv = Srv("mixed", "--terminal", "--once", "--linger", "120", feed)
        try:
            page = browse("mixed", srv.url)
        finally:
            srv.stop()
        self.same_cells(page, snap, "live page")
        self.terminal_shows(srv.text(), snap)

    def test_skipped(self):
        """dashboards: malformed lines, unknown records and a newer schema are skipped and named alike on all three"""
        recs = [S.stat("tk_core.lock", "frlock", 10.0 + i, 100) for i in range(1, 4)]
        extra = [b"not json", b'{"type":"load","t":1}', b'{"type":"bogus","v":2}',
                 json.dumps(S.stat("tk_core.lock", "frlock", 20.0, 5, v=3)).encode(), b"",
                 b"\xff\xfe"]
        feed = os.path.join(LOGS, "skipped.ndjson")
        write_feed(feed, recs, extra)
        snap = snapshot(feed)
        self.assertEqual(snap["skipped"], "skipped: 3 malformed lines, 1 records of unknown "
                         "type, 1 of a newer schema (v3: 1; this reader knows v2)")
        srv = Srv("skipped", "--terminal", "--once", "--linger", "120", feed)
        try:
            page = browse("skipped", srv.url)
        finally:
            srv.stop()
        self.same_cells(page, snap, "live page")
        self.terminal_shows(srv.text(), snap)
        html = os.path.join(LOGS, "skipped.html")
        subprocess.run([os.path.join(DASH, "report"), "-o", html, feed], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.same_cells(browse("skipped-report", "file://" + html), snap, "report")

    def test_stall(self):
        """dashboards: a feed that stops is reported within two intervals on the terminal and the page, naming the console log"""
        feed = os.path.join(LOGS, "stalled.ndjson")
        lines = open(FIXTURE, "rb").read().splitlines(keepends=True)
        with open(feed, "wb") as f:
            f.write(b"".join(lines[:len(lines) // 2]))
        srv = Srv("stalled", "--terminal", "--interval", "1", "--console-log",
                  "/tmp/the-console.log", feed)
        try:
            time.sleep(3)               # the page has its first view
            with open(feed, "ab") as f:
                f.write(lines[len(lines) // 2])
            t0 = time.monotonic()
            while "no data from the guest" not in srv.text():
                self.assertLess(time.monotonic() - t0, 4, "no stall reported")
                time.sleep(0.05)
            took = time.monotonic() - t0
            page = browse("stalled", srv.url, wait_ended=False)
        finally:
            srv.stop()
        self.assertLessEqual(took, 2.0)
        line = [ln for ln in srv.text().splitlines() if "no data from the guest" in ln][-1]
        self.assertIn("console log: /tmp/the-console.log", line)
        self.assertEqual("dashboards/server: " + page["summary"]["stall"], line)

    def test_follow(self):
        """dashboards: the page merges what is new as the feed grows; the server ends by itself after feed_end"""
        feed = os.path.join(LOGS, "growing.ndjson")
        open(feed, "w").close()
        srv = Srv("follow", feed)
        lines = open(FIXTURE, "rb").read().splitlines(keepends=True)
        proc = subprocess.Popen(["/usr/bin/python3", BROWSER, "--wait-ended", "--timeout", "90",
                                 "--png", os.path.join(LOGS, "follow.png"), srv.url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            srv.wait_page()
            step = len(lines) // 4 + 1
            for i in range(0, len(lines), step):
                with open(feed, "ab") as f:
                    f.write(b"".join(lines[i:i + step]))
                time.sleep(1.5)
            rc = srv.p.wait(30)         # no signal: feed_end ends it
        finally:
            srv.stop()
        out, err = proc.communicate(60)
        self.assertEqual((rc, proc.returncode), (0, 0), err)
        page = json.loads(out)
        self.assertTrue(page["status"].startswith("input ended"), page["status"])
        self.assertGreaterEqual(len({s[1] for s in page["samples"]}), 3, page["samples"])
        snap = snapshot(FIXTURE)
        self.same_cells(page, snap, "live page, merged from changes")
        st = page["summary"]["stream"]
        self.assertEqual((st["whole"], st["resyncs"]), (1, 0), st)
        self.assertGreaterEqual(st["changes"], 3, st)

    def test_stopped(self):
        """dashboards: a server stopped before feed_end tells the page; the terminal, the page and the report say the run is incomplete"""
        feed = os.path.join(LOGS, "stopped.ndjson")
        lines = open(FIXTURE, "rb").read().splitlines(keepends=True)
        with open(feed, "wb") as f:
            f.write(b"".join(lines[:len(lines) // 2]))
        html = os.path.join(LOGS, "stopped.html")
        srv = Srv("stopped", "--terminal", "--report", html, feed)
        proc = subprocess.Popen(["/usr/bin/python3", BROWSER, "--wait-ended", "--timeout", "90",
                                 "--png", os.path.join(LOGS, "stopped.png"), srv.url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            srv.wait_page()
            time.sleep(1)
        finally:
            rc = srv.stop()
        out, err = proc.communicate(60)
        self.assertEqual((rc, proc.returncode), (server.INCOMPLETE_STATUS, 0), err)
        page = json.loads(out)
        self.assertTrue(page["status"].startswith("server stopped"), page["status"])
        note = srv.text().splitlines()[-1]
        self.assertEqual(note, "the feed ended without feed_end: the run is incomplete")
        self.assertEqual(page["summary"]["incomplete"], note)
        drawn = browse("stopped-report", "file://" + html)
        self.assertEqual(drawn["summary"]["incomplete"], note)
        self.same_cells(drawn, snapshot(feed), "the report of a stopped server")
        self.terminal_shows(srv.text(), snapshot(feed))


@unittest.skipUnless(HAVE_BROWSER, NEED)
class Gap(Shows):
    def test_gap(self):
        """dashboards: a message that does not follow the page's last makes it ask for the whole view again, and it ends right"""
        fd = server.Feed("fixture", tell=lambda msg: None)
        srv = server.Server(("127.0.0.1", 0), server.Handler)
        srv.feed, srv.chartjs, srv.verbose = fd, CHARTJS, False
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        url = "http://127.0.0.1:%d/" % srv.server_address[1]
        lines = [ln.rstrip(b"\n") for ln in open(FIXTURE, "rb")]
        for raw in lines[:len(lines) // 2]:
            fd.add_line(raw)
        proc = subprocess.Popen(["/usr/bin/python3", BROWSER, "--wait-ended", "--timeout", "90",
                                 "--png", os.path.join(LOGS, "gap.png"), url],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while fd.delivered == 0 and not fd.whole and time.monotonic() < deadline:
                time.sleep(0.1)
            time.sleep(1)               # the page has the whole document
            with fd.cond:
                # A message for a document the page does not have.
                fd.seq += 1
                fd.messages.append((fd.seq, json.dumps(
                    {"seq": fd.seq, "base": fd.seq + 5, "ops": []})))
                fd.cond.notify_all()
            time.sleep(2)
            for raw in lines[len(lines) // 2:]:
                fd.add_line(raw)
            fd.end()
            out, err = proc.communicate(90)
        finally:
            if proc.poll() is None:
                proc.kill()
            srv.shutdown()
            srv.server_close()
        self.assertEqual(proc.returncode, 0, err)
        page = json.loads(out)
        self.assertEqual(page["summary"]["stream"]["resyncs"], 1, page["summary"]["stream"])
        self.assertEqual(page["summary"]["stream"]["whole"], 2, page["summary"]["stream"])
        self.same_cells(page, snapshot(FIXTURE), "live page after a gap")


class Usage(unittest.TestCase):
    def run_tool(self, tool, *args):
        return subprocess.run([os.path.join(DASH, tool)] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)

    def test_bind(self):
        """dashboards: the server refuses any --bind but 127.0.0.1 (exit 2)"""
        for addr in ("0.0.0.0", "10.0.0.1", "::", "::1", "example.com", ""):
            p = self.run_tool("server", "--bind", addr, FIXTURE)
            self.assertEqual(p.returncode, 2, addr)
            self.assertIn("refusing to bind", p.stderr)
            self.assertEqual(p.stdout, "")

    def test_bad_usage(self):
        """dashboards: server and report refuse bad options and files with their usage and one line (exit 2)"""
        d = tempfile.mkdtemp(dir=LOGS)
        txt, binf = os.path.join(d, "garbage.txt"), os.path.join(d, "garbage.bin")
        with open(txt, "w") as f:
            f.write("this is not\nan NDJSON feed\n")
        with open(binf, "wb") as f:
            f.write(os.urandom(100000))
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        cases = [("server", [], "the following arguments are required"),
                 ("server", ["--port"], "expected one argument"),
                 ("server", ["--port", "abc", FIXTURE], "invalid int value"),
                 ("server", ["--port", "70000", FIXTURE], "--port must be 0 to 65535"),
                 ("server", ["--bogus", FIXTURE], "unrecognized arguments: --bogus"),
                 ("server", ["--linger", "nan", FIXTURE], "--linger must be"),
                 ("server", [FIXTURE, "extra"], "unrecognized arguments: extra"),
                 ("server", ["/nonexistent/feed"], "no such file"),
                 ("server", [d], "is a directory"),
                 ("server", [fifo], "not a regular file"),
                 ("server", [txt], "not an NDJSON feed"),
                 ("server", [binf], "not an NDJSON feed"),
                 ("server", ["--chartjs", "/nonexistent.js", FIXTURE], "no such file"),
                 ("report", [binf], "not an NDJSON feed"),
                 ("report", ["-o", os.path.join(d, "x.html"), txt], "not an NDJSON feed"),
                 ("report", [], "the following arguments are required"),
                 ("report", ["-"], "no such file"),
                 ("report", ["-o"], "expected one argument")]
        for tool, args, want in cases:
            with self.subTest(tool=tool, args=args):
                p = self.run_tool(tool, *args)
                self.assertEqual(p.returncode, 2, p.stderr)
                err = p.stderr.splitlines()
                self.assertTrue(err and err[0].startswith("usage:"), p.stderr)
                self.assertEqual(len([ln for ln in err if not ln.startswith(("usage:", " "))]), 1,
                                 p.stderr)
                self.assertIn(want, err[-1])
                self.assertEqual(p.stdout, "")
        self.assertFalse(os.path.exists(os.path.join(d, "x.html")))

    def test_loopback(self):
        """dashboards: the server listens on 127.0.0.1 only and refuses foreign Hosts and other paths"""
        want = {"127.0.0.1": True, "127.8.9.10": True, "::1": True, "::ffff:127.0.0.1": True,
                "10.0.0.2": False, "::ffff:10.0.0.1": False, "0.0.0.0": False, "bogus": False}
        self.assertEqual({a: server.is_loopback(a) for a in want}, want)
        srv = Srv("peers", "--once", "--linger", "60", FIXTURE)
        try:
            ss = subprocess.run(["ss", "-Hltn", "sport = :%d" % srv.port], stdout=subprocess.PIPE,
                                text=True).stdout.split()
            self.assertIn("127.0.0.1:%d" % srv.port, ss)
            self.assertEqual(len([w for w in ss if w.endswith(":%d" % srv.port)]), 1, ss)

            def get(path, host=None):
                c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
                c.putrequest("GET", path, skip_host=host is not None)
                if host:
                    c.putheader("Host", host)
                c.endheaders()
                return c.getresponse().status
            self.assertEqual(get("/"), 200)
            self.assertEqual(get("/", "attacker.example:80"), 403)
            self.assertEqual(get("/../../etc/passwd"), 404)
        finally:
            srv.stop()

    def test_report_self_contained(self):
        """dashboards: the report is one file: no src or href, the view and Chart.js inlined"""
        html = os.path.join(LOGS, "contained.html")
        p = self.run_tool("report", "-o", html, FIXTURE)
        self.assertEqual((p.returncode, p.stdout), (0, html + "\n"), p.stderr)
        text = open(html, encoding="utf-8").read()
        self.assertEqual(re.findall(r'(?:src|href)\s*=\s*["\']?(?!data:)[^"\' >]+', text), [])
        self.assertIn("default-src 'none'", text)
        self.assertIn("Chart.js v3", text)
        m = re.search(r'<script type="application/json" id="frlock-data">(.*?)</script>', text,
                      re.S)
        self.assertEqual(json.loads(m.group(1))["view"]["locks"], snapshot(FIXTURE)["locks"])


if __name__ == "__main__":
    unittest.main()
