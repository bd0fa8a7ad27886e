# SPDX-License-Identifier: GPL-2.0
"""The frlock feed: NDJSON records from the guest, and their schema.

One JSON object per line, written in the guest by frlockstat -j
("frlockstat", "frlockstat_caller", "frlockstat_pair",
"frlockstat_drops", "frlockstat_missed", "frlockstat_self",
"frlockstat_walk"), gtod-load -j ("load", "load_summary") or, in its
place, frlock-watch for the user's own workload ("workload_start",
"workload_end"), ended by frlock-watch's {"type":"feed_end"}. Every
record but feed_end carries the schema version "v" (an integer); this reader knows SCHEMA alone
(frlockstat v4's records). A line is:

  a record     a JSON object of a known type, of a version this reader
               knows, whose fields have the right kinds (extra fields are
               tolerated: a producer may add some within a version);
  newer        a record of a newer schema version: skipped and counted,
               and named by the views ("schema v3, this reader knows v2");
  unknown      a record of a type no producer of this schema writes;
  malformed    not UTF-8, not JSON, not an object, longer than MAX_LINE,
               a "v" that is not an integer, an older schema's record, or
               a known type with fields of the wrong kind;
  blank        skipped silently.

Nothing here is fatal: the views count what they skipped.
"""

import json
import os
import stat
import time

MAX_LINE = 1 << 20
SCHEMA = 2

# frlock-watch's last line, {"type":"feed_end"}, carries no "v" (it is
# the guest script's, not a producer's of this schema): it is read as a
# record of every version.
UNVERSIONED = ("feed_end",)

TYPES = ("frlockstat", "frlockstat_caller", "frlockstat_pair", "frlockstat_drops",
         "frlockstat_missed", "frlockstat_self", "frlockstat_walk",
         "load", "load_summary", "workload_start", "workload_end", "feed_end")
HISTS = ("hold_ns", "wait_ns", "retry_lb_ns")


def _num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _str(v):
    return isinstance(v, str)


def _hist(h):
    return isinstance(h, list) and all(
        isinstance(b, dict) and _count(b.get("min")) and _count(b.get("max")) and
        _count(b.get("count")) and b["min"] <= b["max"] for b in h)


def _counts(d):
    return isinstance(d, dict) and all(_str(k) and _count(n) for k, n in d.items())


def _lost(d):
    return isinstance(d, dict) and _count(d.get("ns")) and isinstance(d.get("bound"), bool)


def _addr(a):
    return a is None or _str(a)


def _by_function(d):
    """frlockstat_walk's {function: {cause: count}}."""
    return isinstance(d, dict) and all(_str(f) and _counts(c) for f, c in d.items())


# Per type: the fields every record of it has, and their kinds; then the
# optional ones, checked when present. frlockstat leaves out a field a
# lock kind's events cannot tell (its per-kind capabilities: waits, and
# the retries joined to their write).
FIELDS = {
    "frlockstat": ({"ts": _num, "interval_s": _num, "dt": _num, "lock": _str,
                    "kind": lambda k: k in ("frlock", "seqcount"),
                    "writes": _count, "retries": _count, "hold_ns": _hist,
                    "hold_ns_sum": _count, "lost": _lost},
                   {"waits": _count, "wait_ns": _hist, "retry_lb_ns": _hist,
                    "time": _str, "top_writer": _str, "top_reader": _str, "addr": _addr,
                    # frlockstat -W (present only then): the RCU path walks
                    # that fell back to ref-walk after a retry of this lock
                    # in the same walk, this interval; the redos of those
                    # timed (the ref-walk call's entry to exit), their time
                    # in ns and histogram; the fallbacks since attach
                    "walk_fallbacks": _count, "walk_redos": _count,
                    "walk_redo_ns_sum": _count, "walk_redo_ns": _hist,
                    "walk_fallbacks_total": _count}),
    # "from": the caller's caller (frlockstat -c), "?" where not known
    "frlockstat_caller": ({"lock": _str, "lock_kind": lambda k: k in ("frlock", "seqcount"),
                           "kind": _str, "caller": _str, "count": _count,
                           "total_ns": _count, "from": _str}, {}),
    # frlockstat -c: who cost whom, per (writer task and site, reader task
    # and site); a retry's time is a lower bound ("bound": true)
    "frlockstat_pair": ({"lock": _str, "lock_kind": lambda k: k in ("frlock", "seqcount"),
                         "kind": lambda k: k in ("retry", "wait"), "writer_comm": _str,
                         "writer": _str, "reader_comm": _str, "reader": _str,
                         "count": _count, "ns": _count, "bound": lambda b: isinstance(b, bool)},
                        {"count_total": _count, "ns_total": _count}),
    "frlockstat_drops": ({"drops": _count},
                         {"full": _count, "busy": _count, "other": _count,
                          # {map: {"full": n, "busy": n, "other": n}}
                          "by_map": lambda d: isinstance(d, dict) and all(
                              _str(m) and _counts(n) for m, n in d.items())}),
    "frlockstat_missed": ({"missed": _count}, {"by_event": _counts}),
    # frlockstat -S: its own cost, running totals in "total"; "run_cnt" and
    # "run_time_ns" are absent where the kernel's BPF statistics are not on
    "frlockstat_self": ({"bpf_stats": lambda v: v in ("on", "unavailable"),
                         "total": lambda d: isinstance(d, dict) and _count(
                             d.get("poller_cpu_ns")) and all(
                                 _count(d[k]) for k in ("run_cnt", "run_time_ns") if k in d)},
                        {"bpf_stats_why": _str, "by_prog": lambda d: isinstance(d, dict)}),
    # frlockstat -W, per interval after the rows: every RCU path walk that
    # fell back ("fallbacks"), per function (path_lookupat, path_openat,
    # path_parentat) and cause ("lock": charged to a row; "unlazy": no
    # retry, a reference could not be taken; "other": no retry, the walk
    # asked for ref-walk; "unseen": its task note was lost); the redos of
    # those no lock explains, their time (ns) and histogram; running totals
    # in "total" ({"fallbacks", "by_function", "nolock_redos"})
    "frlockstat_walk": ({"fallbacks": _count, "by_function": _by_function},
                        {"dt": _num, "nolock_redos": _count, "nolock_redo_ns_sum": _count,
                         "nolock_redo_ns": _hist,
                         "total": lambda d: isinstance(d, dict) and _count(
                             d.get("fallbacks")) and _by_function(d.get("by_function"))}),
    "load": ({"t": _num, "dt": _num, "ts": _num, "total": _num},
             {"writes": _num, "via": lambda v: v in ("syscall", "vdso")}),
    "load_summary": ({"via": lambda v: v in ("syscall", "vdso"), "total_count": _count,
                      "duration_s": _num, "threads": _count}, {}),
    # make run CMD=...: the argument vector as the host gave it (null if
    # none was given), and how it ended; its output is not in the feed
    # (frlock-watch keeps its last bytes apart: makerun.py)
    "workload_start": ({"argv": lambda a: a is None or (
        isinstance(a, list) and all(_str(w) for w in a)), "cap_s": _count}, {}),
    "workload_end": ({"status": _count, "capped": lambda c: c in (0, 1), "seconds": _count,
                      "output_bytes": _count, "kept_bytes": _count}, {}),
    "feed_end": ({}, {"status": _count}),
}


def _valid(rec):
    need, opt = FIELDS[rec["type"]]
    if any(k not in rec or not ok(rec[k]) for k, ok in need.items()):
        return False
    if any(k in rec and not ok(rec[k]) for k, ok in opt.items()):
        return False
    if rec["type"] == "frlockstat":
        return rec["interval_s"] > 0 and rec["dt"] > 0
    if rec["type"] == "load":
        return rec["dt"] > 0
    return True


def _no_constant(name):
    raise ValueError(name + " is not JSON")


def classify(raw):
    """(what, record, why) for one line, raw bytes without its newline:
    what is "record", "newer", "unknown", "malformed" or "blank"; record
    is the object (for "record", "newer" and "unknown"); why says what was
    wrong (for "malformed" and "newer")."""
    if len(raw) > MAX_LINE:
        return "malformed", None, "line longer than %d bytes" % MAX_LINE
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return "malformed", None, "not UTF-8"
    if not text.strip():
        return "blank", None, None
    try:
        rec = json.loads(text, parse_constant=_no_constant)
    except ValueError as e:
        return "malformed", None, "not JSON (%s)" % str(e).split(":")[0]
    if not isinstance(rec, dict):
        return "malformed", None, "not a JSON object"
    v = rec.get("v", SCHEMA if rec.get("type") in UNVERSIONED else None)
    if v is None:
        return "malformed", None, "no schema version (\"v\") in a %r record" % rec.get("type")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        return "malformed", None, "schema version %r is not a positive integer" % (v,)
    if v > SCHEMA:
        return "newer", rec, "schema v%d (this reader knows v%d)" % (v, SCHEMA)
    if v < SCHEMA:
        return "malformed", None, "schema v%d, older than this reader's v%d" % (v, SCHEMA)
    if rec.get("type") not in TYPES:
        return "unknown", rec, "unknown record type %r" % rec.get("type")
    if not _valid(rec):
        return "malformed", None, "bad fields for type %r" % rec.get("type")
    return "record", rec, None


def parse_line(raw):
    """(record, None), (None, why) for a line that is no record of this
    schema, or (None, None) for a blank one."""
    what, rec, why = classify(raw)
    return (rec, None) if what == "record" else (None, why)


def not_a_feed(path, limit=1 << 16):
    """Why the regular file path is no NDJSON feed, or None if it may be
    one: it has lines in its first limit bytes and none is a JSON object
    (a binary file, a text file that is not JSON lines). An empty file
    may be a feed still to come."""
    try:
        with open(path, "rb") as f:
            head = f.read(limit)
    except OSError as e:
        return e.strerror
    lines = head.split(b"\n")
    if len(head) == limit:
        lines = lines[:-1]          # the last one may be cut short
        if not lines:
            return "not an NDJSON feed: no line ends in its first %d bytes" % limit
    first, bad = None, 0
    for raw in lines:
        what, _, why = classify(raw.rstrip(b"\r"))
        if what in ("record", "newer", "unknown"):
            return None
        if what == "malformed":
            bad += 1
            first = first or why
    if bad:
        return "not an NDJSON feed: none of its first %d lines is a record (%s)" % (bad, first)
    return None


def dumps(obj):
    """Compact JSON on one line, safe to inline in HTML <script>."""
    s = json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
    return s.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026") \
        .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


class LineReader:
    """The lines of a regular file, like tail -f with follow=True (polled;
    read again from its start if it is truncated or replaced), or up to
    its current end. emit(bytes) gets each line without its newline (and
    a CR before it); a line longer than MAX_LINE is emitted once, cut,
    and the rest of it dropped. stop() makes run() return."""

    def __init__(self, path, follow, emit, poll=0.2):
        self.path, self.follow, self.emit, self.poll = path, follow, emit, poll
        self.stopping = False
        self.oversize = False

    def stop(self):
        self.stopping = True

    def _take(self, buf):
        while True:
            nl = buf.find(b"\n")
            if nl < 0:
                break
            line, buf = buf[:nl], buf[nl + 1:]
            if self.oversize:       # the tail of a line already counted
                self.oversize = False
                continue
            self.emit(line[:-1] if line.endswith(b"\r") else line)
        if len(buf) > MAX_LINE:
            if not self.oversize:
                self.emit(buf)      # counted as too long
            self.oversize = True
            buf = b""
        return buf

    def run(self):
        f = open(self.path, "rb", buffering=0)
        ino = os.fstat(f.fileno()).st_ino
        buf = b""
        try:
            while not self.stopping:
                chunk = f.read(65536)
                if chunk:
                    buf = self._take(buf + chunk)
                    continue
                if not self.follow:
                    break
                time.sleep(self.poll)
                try:
                    st = os.stat(self.path)
                except FileNotFoundError:
                    continue
                if st.st_ino != ino or st.st_size < f.tell():
                    f.close()
                    f = open(self.path, "rb", buffering=0)
                    ino = os.fstat(f.fileno()).st_ino
                    buf = b""
            if buf and not self.oversize:
                self.emit(buf.rstrip(b"\r"))
        finally:
            f.close()


def is_regular(path):
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False
