# SPDX-License-Identifier: GPL-2.0
"""make run's live view: follow a feed file, draw it on the terminal and
serve the same view to the page, on 127.0.0.1 only.

Each line is read once into the one View (view.py). The terminal
(--terminal) gets each completed interval of the detail lock as it comes
and the whole run's tables at the end (terminal.py); the page gets the
view's snapshot by Server-Sent Events, at most twice a second while it
changes, and draws it (dashboards/js). Both name what was skipped, and a
feed that stops (no line for 1.5 intervals) is reported on both within
two intervals, naming the console log (--console-log). The page's URL
goes to stdout or --url-file; the last stderr line is "dashboards/server:
N lines, N records, N skipped".
"""

import argparse
import http.server
import ipaddress
import json
import os
import signal
import sys
import threading
import time
import uuid

from . import TOP, feed, terminal, view

PROG = "dashboards/server"
CHARTJS = "/usr/share/javascript/chart.js/chart.min.js"
DASH = os.path.join(TOP, "dashboards")
ALLOWED_BINDS = ("127.0.0.1", "localhost")
KEEPALIVE_S = 15
PUSH_S = 0.5

STATIC = {
    "/": ("live.html", "text/html; charset=utf-8"),
    "/live.html": ("live.html", "text/html; charset=utf-8"),
    "/css/dashboard.css": ("css/dashboard.css", "text/css; charset=utf-8"),
    "/js/charts.js": ("js/charts.js", "text/javascript; charset=utf-8"),
    "/js/live.js": ("js/live.js", "text/javascript; charset=utf-8"),
}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; "
       "connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")


def log(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)


def is_loopback(host):
    """True if the peer address host (a string) is a loopback address."""
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    if getattr(ip, "ipv4_mapped", None):
        ip = ip.ipv4_mapped
    return ip.is_loopback


class Feed:
    """The one View of the feed, shared by the reader and the page streams."""

    def __init__(self, source, term=None, console_log=None, interval=1.0, lock=None):
        self.cond = threading.Condition()
        self.view = view.View(lock)
        self.term = term            # a text file for the terminal view, or None
        self.console_log = console_log
        self.interval = interval    # seconds; frlockstat's records say theirs
        self.source = source
        self.instance = uuid.uuid4().hex[:12]
        self.lines = 0
        self.last_line = None       # time.monotonic() of the last line
        self.stall = None           # the stall message, while stalled
        self.told = 0               # skipped lines already told on stderr
        self.finished = False       # the whole run's tables were printed
        self.ended = False          # the reader stopped
        self.stopped = False        # ended by a signal, not by the input
        self.error = None
        self.snap = None            # (view.version, stall, ended) -> snapshot JSON
        self.delivered = 0          # streams that were sent the end
        self.streams = 0            # page streams open now

    def add_line(self, raw):
        with self.cond:
            self.lines += 1
            now = time.monotonic()
            if self.stall is not None:
                self.say("data again after %.1f s without" % (now - self.last_line))
                self.stall = None
            self.last_line = now
            before = self.view.skipped()
            rows = self.view.add_line(raw)
            for row in rows:
                self.interval = row["dt"]
                self.print_lines(terminal.interval_text(row))
            after = self.view.skipped()
            if after != before:
                self.skipped()
            if self.view.ended:     # {"type":"feed_end"}: the guest is done
                self.finish()
            self.cond.notify_all()

    def print_lines(self, lines):
        if self.term:
            print("\n".join(lines), file=self.term, flush=True)

    def say(self, msg):
        self.print_lines([PROG + ": " + msg])

    def skipped(self):
        n = sum(self.view.skipped().values())
        if n <= 5:
            log("line %d skipped; %s" % (self.lines, self.view.skipped_line()))
        if n <= 5 or n % 100 == 0:
            self.say(self.view.skipped_line())

    def check_stall(self):
        """Report a feed that stopped for 1.5 intervals; under the lock."""
        if self.last_line is None or self.ended or self.view.ended or self.stall:
            return
        quiet = time.monotonic() - self.last_line
        if quiet >= 1.5 * self.interval:
            self.stall = ("no data from the guest for %.1f s (%g s intervals); "
                          "console log: %s" % (quiet, self.interval,
                                               self.console_log or "not given"))
            self.say(self.stall)
            self.cond.notify_all()

    def finish(self):
        """The rows left when the feed ends, then the whole run, once."""
        if self.finished:
            return
        self.finished = True
        for row in self.view.end():
            self.print_lines(terminal.interval_text(row))
        self.print_lines(terminal.final_text(self.view.snapshot()))

    def end(self, error=None):
        with self.cond:
            self.finish()
            self.ended = True
            self.error = error
            self.cond.notify_all()

    def status(self):
        return {"lines": self.lines, "stall": self.stall, "ended": self.ended,
                "stopped": self.stopped, "error": self.error, "source": self.source,
                "console_log": self.console_log, "pages": self.streams}

    def page_json(self):
        """The snapshot with the feed's status, as the page gets it; under
        the lock. Built again only when something changed."""
        key = (self.view.version, self.stall, self.ended, self.error)
        if self.snap is None or self.snap[0] != key:
            s = self.view.snapshot()
            st = self.status()
            st.pop("pages")
            s["status"] = st
            self.snap = (key, json.dumps(s, separators=(",", ":")))
        return self.snap[1]


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = PROG
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        if self.server.verbose:
            log("%s %s" % (self.client_address[0], fmt % args))

    def _refuse(self, code, why):
        log("refused %s from %s: %s" % (self.path, self.client_address[0], why))
        self._send(code, why.encode() + b"\n", "text/plain; charset=utf-8")

    def _allowed(self):
        if not is_loopback(self.client_address[0]):
            self._refuse(403, "only loopback clients are served")
            return False
        host = self.headers.get("Host")
        port = self.server.server_address[1]
        if host is not None and host.lower() not in (
                "127.0.0.1:%d" % port, "localhost:%d" % port):
            # A page on another site that resolves its name to 127.0.0.1
            # (DNS rebinding) must not read the feed.
            self._refuse(403, "unexpected Host header")
            return False
        return True

    def _send(self, code, body, ctype, head_only=False):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", CSP)
        self.end_headers()
        if not head_only:
            self.wfile.write(body)

    def do_HEAD(self):
        self.do_GET(head_only=True)

    def do_GET(self, head_only=False):
        if not self._allowed():
            return
        path = self.path.split("?", 1)[0]
        fd = self.server.feed
        if path == "/events" and not head_only:
            return self._events(fd)
        if path == "/stats.json":
            with fd.cond:
                body = json.dumps(fd.status()).encode() + b"\n"
            return self._send(200, body, "application/json", head_only)
        if path == "/view.json":
            with fd.cond:
                body = fd.page_json().encode() + b"\n"
            return self._send(200, body, "application/json", head_only)
        if path == "/vendor/chart.js":
            fname, ctype = self.server.chartjs, "text/javascript; charset=utf-8"
        elif path in STATIC:
            fname, ctype = STATIC[path]
            fname = os.path.join(DASH, fname)
        else:
            return self._send(404, b"not found\n", "text/plain", head_only)
        with open(fname, "rb") as f:
            self._send(200, f.read(), ctype, head_only)

    def _events(self, fd):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        with fd.cond:
            fd.streams += 1
            fd.cond.notify_all()
        try:
            self._stream(fd)
        except OSError:             # the page went away
            pass
        finally:
            with fd.cond:
                fd.streams -= 1
                fd.cond.notify_all()

    def _stream(self, fd):
        hello = {"instance": fd.instance, "source": fd.source}
        self.wfile.write(("retry: 2000\nevent: hello\ndata: %s\n\n" % json.dumps(hello))
                         .encode())
        sent = None
        while True:
            with fd.cond:
                deadline = time.monotonic() + KEEPALIVE_S
                while (sent == fd.page_json() and not fd.ended and
                       time.monotonic() < deadline):
                    fd.cond.wait(1)
                data, ended = fd.page_json(), fd.ended
            out = ""
            if data != sent:
                out = "event: view\ndata: %s\n\n" % data
                sent = data
            else:
                out = ": keepalive\n\n"
            if ended:
                out += "event: end\ndata: {}\n\n"
            self.wfile.write(out.encode("utf-8"))
            self.wfile.flush()
            if ended:
                with fd.cond:
                    fd.delivered += 1
                    fd.cond.notify_all()
                return
            time.sleep(PUSH_S)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def check_input(p, path):
    if not os.path.exists(path):
        p.error("%s: no such file" % path)
    if os.path.isdir(path):
        p.error("%s: is a directory" % path)
    if not feed.is_regular(path):
        p.error("%s: not a regular file (the feed is a file the guest's port writes)" % path)
    if not os.access(path, os.R_OK):
        p.error("%s: cannot be read" % path)
    why = feed.not_a_feed(path)
    if why:
        p.error("%s: %s" % (path, why))


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="dashboards/server",
        description="Serve the frlock live view on 127.0.0.1, from an NDJSON feed "
        "file followed as it grows (and draw it on the terminal with --terminal).",
        epilog="examples:\n"
        "  dashboards/server --terminal results/<run>/feed.ndjson\n"
        "  dashboards/server --once --port 8000 dashboards/fixtures/frlock-run.ndjson\n"
        "\nexit status: 0 after the input ended (--once) or on SIGINT/SIGTERM,\n"
        "1 on an error, 2 on bad usage: unknown options, out-of-range numbers,\n"
        "a missing INPUT or one that is no NDJSON feed, any non-loopback --bind.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="the NDJSON feed file")
    p.add_argument("--port", type=int, default=0,
                   help="TCP port on 127.0.0.1 (default 0: pick a free one)")
    p.add_argument("--bind", default="127.0.0.1", metavar="ADDR",
                   help="only 127.0.0.1 (or localhost) is accepted")
    p.add_argument("--once", action="store_true",
                   help="stop reading at the input's current end, and exit once a "
                   "page has been sent everything")
    p.add_argument("--linger", type=float, default=30.0, metavar="S",
                   help="with --once: exit S seconds after the input ended "
                   "even if no page has connected (default 30)")
    p.add_argument("--lock", metavar="NAME", help="the lock whose detail is shown "
                   "(default: the lock gettimeofday reads)")
    p.add_argument("--chartjs", metavar="FILE", help="Chart.js to serve (default: Debian's "
                   "libjs-chart.js, %s)" % CHARTJS)
    p.add_argument("--terminal", action="store_true",
                   help="also draw the view on stdout: each interval's "
                   "histograms and row, the whole run's tables at the end")
    p.add_argument("--url-file", metavar="FILE",
                   help="write the page's URL to FILE instead of stdout")
    p.add_argument("--console-log", metavar="FILE",
                   help="the guest's console log, named when the feed stops")
    p.add_argument("--interval", type=float, default=1.0, metavar="S",
                   help="the feed's interval until a frlockstat record says it "
                   "(default 1): 1.5 of them without a line is a stall")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log every request on stderr")
    a = p.parse_args(argv)
    if not 0 <= a.port <= 65535:
        p.error("--port must be 0 to 65535")
    if not 0 <= a.linger <= 86400:     # not NaN either
        p.error("--linger must be seconds from 0 to 86400")
    if not 0.1 <= a.interval <= 86400:
        p.error("--interval must be seconds from 0.1 to 86400")
    check_input(p, a.input)
    if a.chartjs is not None and not os.path.isfile(a.chartjs):
        p.error("--chartjs %s: no such file" % a.chartjs)
    a.chartjs = a.chartjs or os.environ.get("FRLOCK_CHARTJS", CHARTJS)
    return a


def main(argv):
    a = parse_args(argv)
    if a.bind not in ALLOWED_BINDS:
        print("%s: refusing to bind to %r: the dashboard serves loopback "
              "only, use 127.0.0.1 (and an SSH tunnel to view it remotely)"
              % (PROG, a.bind), file=sys.stderr)
        return 2
    if not os.path.isfile(a.chartjs):
        log("Chart.js not found at %s (apt-get install libjs-chart.js)" % a.chartjs)
        return 1
    fd = Feed(os.path.basename(a.input), sys.stdout if a.terminal else None, a.console_log,
              a.interval, a.lock)
    try:
        srv = Server(("127.0.0.1", a.port), Handler)
    except OSError as e:
        log("cannot listen on 127.0.0.1:%d: %s" % (a.port, e.strerror))
        return 1
    srv.feed, srv.chartjs, srv.verbose = fd, a.chartjs, a.verbose
    port = srv.server_address[1]
    reader = feed.LineReader(a.input, not a.once, fd.add_line)

    def read():
        try:
            reader.run()
            fd.end()
        except OSError as e:
            log("reading %s: %s" % (a.input, e))
            fd.end(str(e))

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda s, f: stop.set())
    signal.signal(signal.SIGTERM, lambda s, f: stop.set())
    threading.Thread(target=srv.serve_forever, name="http", daemon=True).start()
    url = "http://127.0.0.1:%d/" % port
    if a.url_file:
        with open(a.url_file, "w") as f:
            f.write(url + "\n")
    else:
        print(url, flush=True)
    log("serving %s on %s (%s)" % (a.input, url, "until the input ends" if a.once
                                   else "following it; Ctrl-C to stop"))
    threading.Thread(target=read, name="reader", daemon=True).start()

    ended_at = None
    with fd.cond:
        while not stop.is_set():
            if fd.ended and ended_at is None:
                ended_at = time.monotonic()
                log("input ended after %d lines" % fd.lines)
            if ended_at is not None and a.once:
                if fd.delivered > 0:
                    break
                if time.monotonic() - ended_at >= a.linger:
                    log("no page connected within %g s of the end" % a.linger)
                    break
            fd.check_stall()
            fd.cond.wait(0.1)
    reader.stop()
    if not fd.ended:
        # Stopped by a signal: the open pages are told that the feed ended.
        fd.stopped = True
        fd.end()
        deadline = time.monotonic() + 3
        with fd.cond:
            while fd.streams and time.monotonic() < deadline:
                fd.cond.wait(0.1)
    srv.shutdown()
    srv.server_close()
    sk = fd.view.skipped()
    if fd.ended and not fd.stopped and fd.lines and not fd.view.locks and sk["malformed"]:
        log("%s held no frlock record: not an NDJSON feed?" % a.input)
        fd.error = fd.error or "no records"
    print("%s: %d lines, %d malformed, %d of unknown type, %d of a newer schema" % (
        PROG, fd.lines, sk["malformed"], sk["unknown"], sk["newer"]),
        file=sys.stderr, flush=True)
    return 1 if fd.error else 0
