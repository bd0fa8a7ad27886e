# SPDX-License-Identifier: GPL-2.0
"""make run's live view: follow a feed file, draw it on the terminal and
serve the same view to the page, on 127.0.0.1 only.

Each line is read once into the one View (view.py). The terminal
(--terminal) gets each completed interval of the detail lock as it comes
and the whole run's tables at the end (terminal.py); --report writes the
run's report (report.py) from the very snapshot those tables were
printed from, so the two agree line for line.

The page gets what changed, by Server-Sent Events, at most twice a second
(see page_messages): a stream's first message is the whole document (the
view's snapshot and the feed's status), each later one the ops that turn
the previous document into the new one: "append" to a list that only
grew (the intervals' rows, heatmap columns, chart points), "set" for any
other value that changed. Each message has a sequence number and the one
it applies to; a page that sees a gap opens a new stream (a new whole
document), and one that reconnects resumes from its last event id while
the server still holds the messages since. The page merges and draws
(dashboards/js/live.js); it computes no figure.

The run ends when the guest says so: after {"type":"feed_end"} the
server reads no more into the view (lines after it are counted, not
read), prints the final tables, tells the open pages, writes --report
and exits. SIGUSR1 says the feed's writer is gone (make run sends it when
the guest has exited): read the file to its end, then end the same way;
without a feed_end the terminal, the page and the report all say "the
feed ended without feed_end: the run is incomplete". Both name what was
skipped, and a feed that stops (no line for 1.5 intervals) is reported on
both within two intervals, naming the console log (--console-log). The
page's URL goes to stdout or --url-file; the last stderr line is
"dashboards/server: N lines, N malformed, N of unknown type, N of a newer
schema".
"""

import argparse
import collections
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
# Messages kept for pages that reconnect (about two minutes at PUSH_S); a
# page further behind gets the whole document again.
KEEP_MESSAGES = 256
INCOMPLETE_STATUS = 3

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


def diff(old, new, path, ops):
    """Append to ops what turns old into new: ["append", path, items] for
    a list that only grew, ["set", path, value] for anything else that
    changed; dicts with the same keys are compared key by key."""
    if old == new:
        return ops
    if isinstance(old, dict) and isinstance(new, dict) and old.keys() == new.keys():
        for k in new:
            diff(old[k], new[k], path + [k], ops)
    elif (isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and
          new[:len(old)] == old):
        ops.append(["append", path, new[len(old):]])
    else:
        ops.append(["set", path, new])
    return ops


# make run CMD=...: the workload's output, which frlock-watch keeps out of
# the feed and sends on a port of its own, lies beside the feed's file.
WORKLOAD_OUTPUT = "workload-output.txt"
OUTPUT_LINES = 20       # of it, shown
OUTPUT_WAIT_S = 5       # for the port's last bytes, which left the guest first


def workload_output(path, kept):
    """The last lines of the workload's output in PATH, which should hold
    KEPT bytes (the guest's count), and a note when it does not: (lines,
    note). Control characters are shown as U+FFFD, never sent to a
    terminal."""
    deadline = time.monotonic() + OUTPUT_WAIT_S
    while True:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = None
        if (size is not None and size >= kept) or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if size is None:
        return [], "its output is missing (%s)" % path
    with open(path, "rb") as f:
        f.seek(max(0, size - 64 * 1024))
        text = f.read().decode("utf-8", errors="replace")
    lines = ["".join(c if c == "\t" or (c >= " " and c != "\x7f") else "\ufffd" for c in ln)
             for ln in text.splitlines()[-OUTPUT_LINES:]]
    note = None if size >= kept else (
        "its output holds %d of the %d bytes the guest kept" % (size, kept))
    return lines, note


class Feed:
    """The one View of the feed, shared by the reader and the page streams."""

    def __init__(self, source, term=None, console_log=None, interval=1.0, lock=None,
                 tell=log, output=None):
        self.cond = threading.Condition()
        self.tell = tell            # one line on stderr; the report's reading passes none
        self.view = view.View(lock)
        self.term = term            # a text file for the terminal view, or None
        self.console_log = console_log
        self.interval = interval    # seconds; frlockstat's records say theirs
        self.source = source
        self.output = output        # the workload's output file (WORKLOAD_OUTPUT)
        self.instance = uuid.uuid4().hex[:12]
        self.reader = None          # the LineReader, told to stop following at feed_end
        self.lines = 0
        self.after_end = 0          # lines after feed_end: counted, not read
        self.last_line = None       # time.monotonic() of the last line
        self.stall = None           # the stall message, while stalled
        self.told = 0               # skipped lines already told on stderr
        self.final = None           # the snapshot the whole run's tables came from
        self.ended = False          # the reader stopped
        self.stopped = False        # ended by a signal, not by the input
        self.error = None
        self.doc = None             # the page's document: the snapshot and status
        self.doc_key = None         # what it was built from
        self.seq = 0                # the document's sequence number
        self.messages = collections.deque(maxlen=KEEP_MESSAGES)  # (seq, JSON)
        self.whole = None           # (seq, JSON of the whole document)
        self.delivered = 0          # streams that were sent the end
        self.streams = 0            # page streams open now

    def add_line(self, raw):
        with self.cond:
            self.lines += 1
            if self.view.ended:
                # The guest said it was done: nothing after feed_end is
                # part of the run the tables and the report show.
                self.after_end += 1
                if self.after_end == 1:
                    self.say("line %d comes after feed_end: not read (counted)" % self.lines)
                self.cond.notify_all()
                return
            now = time.monotonic()
            if self.stall is not None:
                self.say("data again after %.1f s without" % (now - self.last_line))
                self.stall = None
            self.last_line = now
            before = self.view.skipped()
            had_end = self.view.workload and self.view.workload["end"]
            rows = self.view.add_line(raw)
            w = self.view.workload
            if w and w["end"] and not had_end and self.output:
                self.view.set_workload_output(*workload_output(
                    self.output, w["end"]["kept_bytes"]))
            for row in rows:
                self.interval = row["dt"]
                self.print_lines(terminal.interval_text(row))
            after = self.view.skipped()
            if after != before:
                self.skipped()
            if self.view.ended:     # {"type":"feed_end"}: the guest is done
                self.finish()
                if self.reader:
                    self.reader.follow = False  # read to the file's end, then stop
            self.cond.notify_all()

    def print_lines(self, lines):
        if self.term:
            print("\n".join(lines), file=self.term, flush=True)

    def say(self, msg):
        self.print_lines([PROG + ": " + msg])

    def skipped(self):
        n = sum(self.view.skipped().values())
        if n <= 5:
            self.tell("line %d skipped; %s" % (self.lines, self.view.skipped_line()))
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
        """The rows left when the feed ends, then the whole run, once:
        from self.final, which the page's last document and the report
        show too."""
        if self.final is not None:
            return
        for row in self.view.end():
            self.print_lines(terminal.interval_text(row))
        self.final = self.view.snapshot()
        self.print_lines(terminal.final_text(self.final))

    def end(self, error=None):
        with self.cond:
            self.finish()
            self.ended = True
            self.error = error
            if self.after_end:
                self.tell("%d lines after feed_end not read" % self.after_end)
            self.cond.notify_all()

    def status(self):
        return {"lines": self.lines, "stall": self.stall, "ended": self.ended,
                "stopped": self.stopped, "error": self.error, "source": self.source,
                "console_log": self.console_log, "pages": self.streams}

    def _key(self):
        return (self.view.version, self.lines, self.stall, self.ended, self.error)

    def changed_since(self, seq):
        """Whether a page that has document seq has something to get; under
        the lock, and cheap: nothing is built."""
        return seq != self.seq or self._key() != self.doc_key

    def _refresh(self):
        """Build the document again if the view or the status changed, and
        keep the message that turns the last one into it."""
        key = self._key()
        if key == self.doc_key:
            return
        doc = self.final if self.final is not None else self.view.snapshot()
        st = self.status()
        st.pop("pages")
        doc = dict(doc, status=st)
        if self.doc is not None:
            ops = diff(self.doc, doc, [], [])
            if ops:
                self.seq += 1
                self.messages.append((self.seq, json.dumps(
                    {"seq": self.seq, "base": self.seq - 1, "ops": ops},
                    separators=(",", ":"))))
        else:
            self.seq += 1
        self.doc, self.doc_key = doc, key

    def whole_json(self):
        """The whole document as JSON; under the lock."""
        self._refresh()
        if self.whole is None or self.whole[0] != self.seq:
            self.whole = (self.seq, json.dumps({"seq": self.seq, "full": self.doc},
                                               separators=(",", ":")))
        return self.whole[1]

    def page_messages(self, seq):
        """([(seq, message JSON)], seq now) for a page that has document
        seq (None: it has none): the kept messages after seq, or the whole
        document when they are not all kept; under the lock."""
        self._refresh()
        if seq == self.seq:
            return [], seq
        if seq is not None and self.messages and self.messages[0][0] <= seq + 1 <= self.seq:
            return [(n, m) for n, m in self.messages if n > seq], self.seq
        return [(self.seq, self.whole_json())], self.seq

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
                body = fd.whole_json().encode() + b"\n"
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

    def _resume_from(self, fd):
        """The document a reconnecting page has: its Last-Event-ID,
        "instance:seq", if this server sent it; else None."""
        last = self.headers.get("Last-Event-ID", "")
        inst, _, seq = last.partition(":")
        return int(seq) if inst == fd.instance and seq.isdigit() else None

    def _stream(self, fd):
        hello = {"instance": fd.instance, "source": fd.source}
        self.wfile.write(("retry: 2000\nevent: hello\ndata: %s\n\n" % json.dumps(hello))
                         .encode())
        seq = self._resume_from(fd)
        while True:
            with fd.cond:
                deadline = time.monotonic() + KEEPALIVE_S
                while (not fd.changed_since(seq) and not fd.ended and
                       time.monotonic() < deadline):
                    fd.cond.wait(1)
                msgs, seq = fd.page_messages(seq)
                ended = fd.ended
            out = "".join("id: %s:%d\nevent: view\ndata: %s\n\n" % (fd.instance, n, m)
                          for n, m in msgs) or ": keepalive\n\n"
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
        "\nThe server ends by itself after the feed's feed_end (with --once, once a\n"
        "page was sent the end); SIGUSR1: the writer is gone, read INPUT to its\n"
        "end and end; SIGINT/SIGTERM: stop now.\n"
        "\nexit status: 0 when the feed ended with feed_end, 3 when it ended without\n"
        "(the writer died, or a signal stopped the server: the run is incomplete),\n"
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
    p.add_argument("--report", metavar="FILE",
                   help="when the feed ends, write the run's report (as dashboards/"
                   "report does) to FILE, from the view the final tables came from")
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
              a.interval, a.lock, output=os.path.join(os.path.dirname(os.path.abspath(
                  a.input)), WORKLOAD_OUTPUT))
    try:
        srv = Server(("127.0.0.1", a.port), Handler)
    except OSError as e:
        log("cannot listen on 127.0.0.1:%d: %s" % (a.port, e.strerror))
        return 1
    srv.feed, srv.chartjs, srv.verbose = fd, a.chartjs, a.verbose
    port = srv.server_address[1]
    reader = feed.LineReader(a.input, not a.once, fd.add_line)
    fd.reader = reader

    def read():
        try:
            reader.run()
            fd.end()
        except OSError as e:
            log("reading %s: %s" % (a.input, e))
            fd.end(str(e))

    gone = threading.Event()

    def writer_gone(signum, frame):
        reader.follow = False       # read to the file's end, then stop
        gone.set()

    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda s, f: stop.set())
    signal.signal(signal.SIGTERM, lambda s, f: stop.set())
    signal.signal(signal.SIGUSR1, writer_gone)
    threading.Thread(target=srv.serve_forever, name="http", daemon=True).start()
    url = "http://127.0.0.1:%d/" % port
    if a.url_file:
        with open(a.url_file, "w") as f:
            f.write(url + "\n")
    else:
        print(url, flush=True)
    log("serving %s on %s (%s)" % (a.input, url, "until the input ends" if a.once
                                   else "following it until feed_end; Ctrl-C to stop"))
    threading.Thread(target=read, name="reader", daemon=True).start()

    ended_at = None
    told = False
    with fd.cond:
        while not stop.is_set():
            if gone.is_set() and not told:
                told = True
                log("the feed's writer is gone (SIGUSR1)%s" % (
                    "" if fd.ended else ": reading the file to its end"))
            if fd.ended and ended_at is None:
                ended_at = time.monotonic()
                log("input ended after %d lines%s" % (
                    fd.lines, "" if fd.view.feed_end else ", without feed_end"))
            if ended_at is not None:
                if not a.once or fd.delivered > 0:
                    break
                if time.monotonic() - ended_at >= a.linger:
                    log("no page connected within %g s of the end" % a.linger)
                    break
            fd.check_stall()
            fd.cond.wait(0.1)
    # The input has ended: a late "writer gone" is moot, and must not kill
    # the process while it exits (Python restores SIG_DFL then; not SIG_IGN).
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    reader.stop()
    if not fd.ended:
        fd.stopped = True           # by a signal
        fd.end()
    # The open pages are sent the end before the server goes.
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
    if a.report:
        from . import report        # not at the top: report.py imports this module
        src = os.path.basename(a.input)
        try:
            report.write(a.report, report.build(fd.final, src, a.chartjs,
                                                "frlock report: " + src))
        except (OSError, report.ReportError) as e:
            log("writing the report %s: %s" % (a.report, e))
            fd.error = fd.error or "no report"
    if fd.final["incomplete"]:
        log(fd.final["incomplete"])
    print("%s: %d lines, %d malformed, %d of unknown type, %d of a newer schema" % (
        PROG, fd.lines, sk["malformed"], sk["unknown"], sk["newer"]),
        file=sys.stderr, flush=True)
    if fd.error:
        return 1
    return INCOMPLETE_STATUS if fd.final["incomplete"] else 0
