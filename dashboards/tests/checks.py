#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The Python side of dashboards/tests/run.sh: one small check per
subcommand, each with its arguments as the shell passes them.

usage: checks.py NAME ARGS...
"""

import http.client
import importlib.machinery
import importlib.util
import json
import os
import re
import signal
import struct
import sys
import time
import urllib.parse
import urllib.request



def console_errors(argv):
    r = json.load(open(argv[1]))
    for e in r["errors"]:
        print("error:", e)
    for w in r["warnings"]:
        print("warning:", w)
    print("%d console errors, %d warnings" % (len(r["errors"]), len(r["warnings"])))
    sys.exit(1 if r["errors"] else 0)


def http_status(argv):
    port, path = int(argv[1]), argv[2]
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.putrequest("GET", path, skip_host=len(argv) > 3)
    if len(argv) > 3:
        c.putheader("Host", argv[3])
    c.endheaders()
    print(c.getresponse().status)


def png_ok(argv):
    d = open(argv[1], "rb").read()
    assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    w, h = struct.unpack(">II", d[16:24])
    print("%s: %dx%d, %d bytes" % (argv[1], w, h, len(d)))
    assert w >= 1000 and h >= 800 and len(d) > 50000, "too small"


def fixture_ok(argv):
    types = {}
    for line in open(argv[1]):
        r = json.loads(line)
        types[r["type"]] = types.get(r["type"], 0) + 1
    print(types)
    assert types.get("frlockstat", 0) >= 10 and types.get("load", 0) >= 10
    assert types.get("frlockstat_caller", 0) > 0 and types.get("feed_end") == 1


def is_loopback(argv):
    loader = importlib.machinery.SourceFileLoader("server", argv[1])
    spec = importlib.util.spec_from_loader("server", loader)
    srv = importlib.util.module_from_spec(spec)
    loader.exec_module(srv)
    want = {"127.0.0.1": True, "127.8.9.10": True, "::1": True,
            "::ffff:127.0.0.1": True, "10.0.0.2": False, "192.168.1.5": False,
            "::ffff:10.0.0.1": False, "2001:db8::1": False, "0.0.0.0": False,
            "bogus": False}
    bad = {a: srv.is_loopback(a) for a, w in want.items() if srv.is_loopback(a) != w}
    print("is_loopback mismatches:", bad)
    sys.exit(1 if bad else 0)


def append_when_connected(argv):
    url, fixture, feed = argv[1:]
    for _ in range(300):
        with urllib.request.urlopen(url + "stats.json") as r:
            if json.load(r)["pages"] > 0:
                break
        time.sleep(0.1)
    else:
        sys.exit("the page did not connect")
    lines = open(fixture, "rb").read().splitlines(keepends=True)
    step = len(lines) // 4 + 1
    for i in range(0, len(lines), step):
        with open(feed, "ab") as f:
            f.write(b"".join(lines[i:i + step]))
        print("appended lines %d to %d" % (i + 1, min(i + step, len(lines))))
        time.sleep(1.5)


def updates_redrew(argv):
    r = json.load(open(argv[1]))
    print("status:", r["status"])
    print("[renders, records, intervals] seen:", r["samples"])
    shown = sorted({s[2] for s in r["samples"]})
    assert r["status"].startswith("server stopped"), "no end event"
    assert len(shown) >= 4, "the page did not redraw as the feed grew"
    assert r["summary"]["renders"] >= 5
    assert not r["errors"], r["errors"]


def make_bad_feed(argv):
    lines = open(argv[1], "rb").read().splitlines()
    bad = [b"this is not json", b'{"type":"frlockstat","ts":', b"[1,2,3]",
           b"\xff\xfe not utf-8 \xc3", b'{"type":"load","t":NaN,"dt":1,"total":5}',
           b'{"type":"frlockstat","time":"x","ts":1,"interval_s":1,"lock":"tk_core.lock",'
           b'"writes":"many","retried_reads":0,"retries":0,"hold_ns":[],"retries_per_read":[]}',
           b'{"type":"load","t":"1","dt":1,"total":9}', b"x" * ((1 << 20) + 10)]
    bpftrace = [b'{"type": "attached_probes", "data": {"probes": 2}}',
                b'{"type": "hist", "data": {"@hold_ns": [{"min": 1024, "max": 2047, "count": 3}]}}']
    with open(argv[2], "wb") as b, open(argv[3], "wb") as g:
        for i, line in enumerate(lines):
            if i % 11 == 3 and bad:
                b.write(bad.pop() + b"\n")
            if i == 20:
                b.write(b"\n   \n")
                b.write(bpftrace[0] + b"\n\n")
                g.write(bpftrace[0] + b"\n")
            if i == 40:
                b.write(bpftrace[1] + b"\n")
                g.write(bpftrace[1] + b"\n")
            b.write(line + (b"\r\n" if i == 30 else b"" if i == len(lines) - 1 else b"\n"))
            g.write(line + b"\n")
        assert not bad


def feed_slowly(argv):
    data = open(argv[1], "rb").read()
    with open(argv[2], "wb", buffering=0) as f:
        step = len(data) // 7 + 1
        for i in range(0, len(data), step):
            f.write(data[i:i + step])
            time.sleep(0.3)


class SSE:
    """The tests' one Server-Sent Events client: GET /events on the server
    of url, then one (event, data) at a time, data parsed as JSON."""

    def __init__(self, url, headers=None):
        u = urllib.parse.urlsplit(url)
        self.conn = http.client.HTTPConnection(u.hostname, u.port, timeout=20)
        self.conn.request("GET", "/events", headers=headers or {})
        self.resp = self.conn.getresponse()
        self.last_id = None

    def next(self):
        """The next event, or (None, None) when the stream ends."""
        event, data = "message", None
        for raw in iter(self.resp.readline, b""):
            line = raw.decode().rstrip("\n")
            if not line:
                if data is not None:
                    return event, json.loads(data)
                event = "message"
            elif line.startswith("event: "):
                event = line[7:]
            elif line.startswith("id: "):
                self.last_id = line[4:]
            elif line.startswith("data: "):
                data = line[6:]
        return None, None

    def until(self, want):
        """Events up to and including the first of type want."""
        while True:
            ev, d = self.next()
            if ev is None:
                sys.exit("the stream ended before a %r event" % want)
            if ev == want:
                return d


def follow_sse(argv):
    url, fixture, feed, pid = argv[1:]
    lines = open(fixture, "rb").read().splitlines(keepends=True)
    sse = SSE(url)
    assert sse.resp.status == 200, sse.resp.status
    assert sse.resp.getheader("Content-Type").startswith("text/event-stream")
    instance = sse.until("hello")["instance"]
    got = 0

    def read_until(n):
        nonlocal got
        while got < n:
            got += len(sse.until("records"))

    def append(data):
        with open(feed, "ab") as f:
            f.write(data)

    append(b"".join(lines[:30]))
    read_until(30)
    print("after 30 lines appended: %d records streamed" % got)
    # Half a line: nothing may be sent until its newline arrives.
    append(lines[30][:50])
    time.sleep(1)
    append(lines[30][50:] + b"".join(lines[31:]))
    read_until(len(lines))
    print("after the rest appended: %d records streamed" % got)
    assert got == len(lines), got
    # A reconnect with Last-Event-ID resumes after that record.
    hello = SSE(url, {"Last-Event-ID": "%s.49" % instance}).until("hello")
    print("reconnect after record 49 resumes at", hello["from"])
    assert hello["from"] == 50, hello
    # SIGTERM: the open page streams get an end event, then the server exits.
    os.kill(int(pid), signal.SIGTERM)
    end = sse.until("end")
    print("end event after SIGTERM:", end)
    assert end["stopped"] and end["records"] == got


def self_contained(argv):
    html = open(argv[1], encoding="utf-8").read()
    refs = re.findall(r'(?:src|href)\s*=\s*["\']?(?!data:)[^"\' >]+', html)
    print("%d bytes; external references: %s" % (len(html), refs or "none"))
    assert not refs
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert 'id="frlock-data"' in html
    assert "Chart.js v3" in html, "Chart.js not inlined"
    assert "FrlockDashboard" in html and "FrlockModel" in html


def report_data(argv):
    html = open(argv[1], encoding="utf-8").read()
    m = re.search(r'<script type="application/json" id="frlock-data">(.*?)</script>', html, re.S)
    d = json.loads(m.group(1))
    print("inlined: %d records, %d malformed: %s" % (len(d["records"]), d["malformed"], d["reasons"]))
    assert d["malformed"] == int(argv[2]) and len(d["records"]) == int(argv[3])


CHECKS = {f.__name__: f for f in (console_errors, http_status, png_ok, fixture_ok, is_loopback, append_when_connected, updates_redrew, make_bad_feed, feed_slowly, follow_sse, self_contained, report_data)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in CHECKS:
        sys.exit("usage: checks.py %s ARGS..." % "|".join(CHECKS))
    sys.exit(CHECKS[sys.argv[1]](sys.argv[1:]))
