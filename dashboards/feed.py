# SPDX-License-Identifier: GPL-2.0
"""Parse and follow the frlock NDJSON feed; shared by server and report.

One JSON object per line: frlockstat -j ("frlockstat", "frlockstat_caller"),
gtod-load -j ("load", "load_summary") and bpftrace -f json ("hist", "map",
...). Blank lines (bpftrace prints them) are skipped silently. A line is
malformed when it is not UTF-8, not JSON, not an object, longer than
MAX_LINE bytes, or a known type with fields of the wrong kind. Malformed
lines are counted, never fatal. Objects of other types are passed on; the
page counts them as "ignored".
"""

import json
import os
import stat
import time

MAX_LINE = 1 << 20

HIST_KEYS = ("hold_ns", "retries_per_read", "lost_ns")


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_hist(h):
    return isinstance(h, list) and all(
        isinstance(b, dict) and _is_count(b.get("min")) and
        _is_count(b.get("max")) and _is_count(b.get("count")) and
        b["min"] <= b["max"] for b in h)


def _valid(rec):
    t = rec.get("type")
    if t == "frlockstat":
        return (_is_num(rec.get("ts")) and _is_num(rec.get("interval_s")) and
                rec["interval_s"] > 0 and (_is_num(rec.get("dt", 1)) and rec.get("dt", 1) > 0) and
                isinstance(rec.get("lock"), str) and
                all(_is_count(rec.get(k)) for k in ("writes", "retried_reads", "retries")) and
                _is_hist(rec.get("hold_ns")) and _is_hist(rec.get("retries_per_read")) and
                _is_hist(rec.get("lost_ns", [])))
    if t == "frlockstat_caller":
        return (isinstance(rec.get("lock"), str) and isinstance(rec.get("kind"), str) and
                isinstance(rec.get("caller"), str) and _is_count(rec.get("count")) and
                _is_count(rec.get("total_ns", 0)))
    if t == "load":
        return (_is_num(rec.get("t")) and _is_num(rec.get("dt")) and rec["dt"] > 0 and
                _is_num(rec.get("total")) and _is_num(rec.get("writes", 0)) and
                ("ts" not in rec or _is_num(rec["ts"])))
    if t == "hist":
        return isinstance(rec.get("data"), dict)
    return True


def _no_constant(name):
    raise ValueError(name + " is not JSON")


def parse_line(raw):
    """Return (record, None), (None, reason) for a malformed line, or
    (None, None) for a blank one. raw is bytes, without its newline."""
    if len(raw) > MAX_LINE:
        return None, "line longer than %d bytes" % MAX_LINE
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8"
    if not text.strip():
        return None, None
    try:
        rec = json.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        return None, "not JSON (%s)" % str(e).split(":")[0]
    if not isinstance(rec, dict):
        return None, "not a JSON object"
    if not _valid(rec):
        return None, "bad fields for type %r" % rec.get("type")
    return rec, None


def not_a_feed(path, limit=1 << 16):
    """Why the regular file path is no NDJSON feed, or None if it may be
    one: it has lines in its first limit bytes and none is a record (a
    binary file, a text file that is not JSON lines). An empty file, or
    any other kind of file, may be a feed still to come."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            head = f.read(limit)
    except OSError:
        return None
    lines = head.split(b"\n")
    if len(head) == limit:
        lines = lines[:-1]          # the last one may be cut short
        if not lines:
            return "not an NDJSON feed: no line ends in its first %d bytes" % limit
    first, bad = None, 0
    for raw in lines:
        rec, why = parse_line(raw[:-1] if raw.endswith(b"\r") else raw)
        if rec is not None:
            return None
        if why is not None:
            bad += 1
            first = first or why
    if bad:
        return "not an NDJSON feed: none of its first %d lines is a record (%s)" % (bad, first)
    return None


def dumps(rec):
    """Compact JSON on one line, safe to inline in HTML <script>."""
    s = json.dumps(rec, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _split(buf, chunk, emit):
    """Append chunk to buf, emit every complete line, return the rest.
    A partial line that grows past MAX_LINE is emitted (as too long) and
    the rest of it up to the next newline is dropped."""
    buf += chunk
    while True:
        nl = buf.find(b"\n")
        if nl < 0:
            break
        line, buf = buf[:nl], buf[nl + 1:]
        if line.endswith(b"\r"):
            line = line[:-1]
        emit(line)
    return buf


class LineReader:
    """Read lines from a regular file, a FIFO or stdin ("-"), like tail -f.

    follow=False: stop at the end of input (a regular file's current end,
    the first EOF of a FIFO, stdin's EOF). follow=True: a regular file is
    polled for growth (and re-read from the start if it is truncated or
    replaced); a FIFO is reopened for the next writer; stdin still ends at
    EOF. emit(bytes) gets each line; stop() makes run() return.
    """

    def __init__(self, path, follow, emit, poll=0.2):
        self.path, self.follow, self.emit, self.poll = path, follow, emit, poll
        self.stopping = False
        self.oversize = False

    def stop(self):
        self.stopping = True

    def _emit(self, line):
        if self.oversize:           # the tail of a line already counted
            self.oversize = False
            return
        self.emit(line)

    def _feed(self, buf, chunk):
        buf = _split(buf, chunk, self._emit)
        if len(buf) > MAX_LINE and not self.oversize:
            self.emit(buf)          # counted as too long
            self.oversize = True
            buf = b""
        elif self.oversize:
            buf = b""
        return buf

    def _finish(self, buf):
        if buf:
            self._emit(buf)
        self.oversize = False

    def run(self):
        if self.path == "-":
            return self._read_fd(0)
        st = os.stat(self.path)
        if stat.S_ISFIFO(st.st_mode):
            while not self.stopping:
                fd = os.open(self.path, os.O_RDONLY)   # waits for a writer
                try:
                    self._read_fd(fd)
                finally:
                    os.close(fd)
                if not self.follow:
                    return
            return
        self._read_file()

    def _read_fd(self, fd):
        buf = b""
        while not self.stopping:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf = self._feed(buf, chunk)
        self._finish(buf)

    def _read_file(self):
        f = open(self.path, "rb", buffering=0)
        ino = os.fstat(f.fileno()).st_ino
        buf = b""
        try:
            while not self.stopping:
                chunk = f.read(65536)
                if chunk:
                    buf = self._feed(buf, chunk)
                    continue
                if not self.follow:
                    break
                time.sleep(self.poll)
                try:
                    st = os.stat(self.path)
                except FileNotFoundError:
                    continue
                if st.st_ino != ino or st.st_size < f.tell():
                    # Replaced or truncated: start again from its beginning.
                    f.close()
                    f = open(self.path, "rb", buffering=0)
                    ino = os.fstat(f.fileno()).st_ino
                    buf = b""
            self._finish(buf)
        finally:
            f.close()
