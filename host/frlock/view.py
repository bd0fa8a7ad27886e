# SPDX-License-Identifier: GPL-2.0
"""THE view of a frlock feed: the only place a figure is derived.

The terminal (terminal.py), the live page and the report (dashboards/js,
which only draw), the labs and the tests all show or assert what this
module computes from the records feed.py parsed. A View takes records one
at a time; snapshot() is everything there is to show, cells formatted:

  locks      every sequence lock the feed carries, over the whole run, as
             frlockstat's own table: kind, writes/s, hold p50/p99/max,
             retries/s, waits/s, the time readers lost per second ("≥"
             where it is a lower bound; frlockstat's "lost") and its p99,
             top writer and reader; "-" for a figure the lock's records do
             not carry;
  detail     one lock, fixed for the run (detail_lock() says which and
             why): its per-interval rows, histograms (whole run and last
             interval), heatmap columns, chart series and call sites;
  lost       frlockstat's lost events (failed map updates, missed events);
  walk       frlockstat -W: the RCU path walks that fell back to ref-walk,
             whole run, by function and cause, and the redo time of those
             no lock explains (the locks' own are cells of their rows:
             fallbacks/s and the redo's p50 and p99, after retries/s);
  skipped    the lines and records skipped, by reason, naming a newer
             schema's version.

A per-interval row of the detail lock:
  reads/s     gtod-load's gettimeofday calls/s over the interval's window
              (its "load" lines, weighted by how much of each line's window
              overlaps the interval);
  no retry    the share of those reads that did not retry, a lower bound
              ("≥"): 1 - gettimeofday's retries (is_gtod_retry) / reads;
              the events count retries, not retried reads, and a read may
              retry more than once; "-" when the reads went through the
              vDSO (they never reach the kernel's lock), there were none,
              or frlockstat ran without -c;
  writes/s, retries/s, waits/s   per second of the interval;
  hold p50, p99, max   the log2 bucket of the write sections' hold time:
              "<16K" is under 16,384 ns (frlockstat's bucket bounds).
"""

import bisect
import math
import shlex

from . import feed

# The lock gettimeofday(2) reads in the kernel: timekeeping's tk_core, an
# frlock on the frlock kernel, a seqcount on a kernel with the seqcount
# events alone. The names frlockstat gives it (bpf/frlockstat.bpf.c names
# a static lock by its symbol and member).
GTOD_LOCKS = ("tk_core.lock", "tk_core.seq", "tk_core")
# The gettimeofday syscall's reader of that lock.
GTOD_READER = "ktime_get_real_ts64"

KIND_ORDER = {"write": 0, "retry": 1, "wait": 2}
MAX_CALLERS = 20

LOCK_COLUMNS = ("lock", "kind", "writes/s", "hold p50", "hold p99", "hold max",
                "retries/s", "waits/s", "lost/s", "lost p99", "writer", "reader")
# frlockstat -W: inserted after "retries/s" when the feed carries them.
WALK_COLUMNS = ("fallbacks/s", "redo p50", "redo p99")
WALK_FNS = ("path_lookupat", "path_openat", "path_parentat")
WALK_CAUSES = ("lock", "unlazy", "other", "unseen")
ROW_COLUMNS = ("time", "reads/s", "no retry", "writes/s", "retries/s", "waits/s",
               "hold p50", "hold p99", "hold max")
CALLER_COLUMNS = ("site", "caller", "from", "count", "mean ns")
# frlockstat -c's who cost whom: the lost reads per writer task and site
# and reader task and site, whole run; "lost" is a lower bound ("≥") where
# retries are in it (a retry is timed from its write's begin).
PAIR_COLUMNS = ("lock", "kind", "writer task", "writer site", "reader task", "reader site",
                "count", "lost")
MAX_PAIRS = 20
HIST_TITLES = {
    "hold_ns": "write section hold time (ns)",
    "wait_ns": "time a reader waited for a write (ns)",
    "retry_lb_ns": "time a retry lost, at least (ns)",
}


def is_gtod_lock(name):
    """Whether frlockstat's lock name is the lock gettimeofday(2) reads."""
    return name in GTOD_LOCKS


def is_gtod_retry(c):
    """Whether a frlockstat_caller record counts gettimeofday(2)'s retries:
    a "retry" site in ktime_get_real_ts64 whose caller's caller
    (frlockstat -c's "from"), when known, is the system call, not
    adjtimex's own read of the clock, nor the kernel's."""
    if c["kind"] != "retry" or c["caller"].split("+")[0] != GTOD_READER:
        return False
    return c["from"] == "?" or "gettimeofday" in func(c["from"])


# --- numbers and their cells ----------------------------------------------

def size(v):
    """bpftrace's bucket labels: powers of 1024 as K, M, G, T."""
    units = ("", "K", "M", "G", "T", "P")
    u = 0
    while v >= 1024 and v % 1024 == 0 and u < len(units) - 1:
        v //= 1024
        u += 1
    return "%d%s" % (v, units[u])


def slot_of(lo):
    """log2 slot of a bucket from its lower bound: 0, 1, [2^(s-1), 2^s)."""
    return lo.bit_length()


def slot_min(s):
    return 0 if s == 0 else 1 << (s - 1)


def slot_label(s):
    return str(slot_min(s)) if s < 2 else "[%s, %s)" % (size(slot_min(s)), size(1 << s))


def merge(into, hist):
    """Add a [{"min","max","count"}] histogram into {slot: count}."""
    for b in hist:
        if b["count"]:
            s = slot_of(b["min"])
            into[s] = into.get(s, 0) + b["count"]
    return into


def percentile_slots(slots):
    """p50, p99 and max of {slot: count}, as slots; None if empty."""
    total = sum(slots.values())
    if not total:
        return None
    order = sorted(s for s, c in slots.items() if c)
    out = []
    for pct in (50, 99):
        rank, seen = -(-total * pct // 100), 0
        for s in order:
            seen += slots[s]
            if seen >= rank:
                out.append(s)
                break
    out.append(order[-1])
    return out


def slots_hist(slots):
    """{slot: count} as the labels and counts of its slots lo..hi."""
    if not slots:
        return {"labels": [], "counts": []}
    r = range(min(slots), max(slots) + 1)
    return {"labels": [slot_label(s) for s in r], "counts": [slots.get(s, 0) for s in r]}


def bound(slot):
    """A bucket as a table cell, as frlockstat prints it: "=0", "=1",
    "<16K" (under 16,384), "-" for none."""
    if slot is None:
        return "-"
    return "=%d" % slot if slot < 2 else "<" + size(1 << slot)


def duration_rate(ns, bound):
    """A duration per second as a cell, as frlockstat prints it: "≥1.2ms"."""
    ge = "≥" if bound else ""
    if ns < 1e3:
        return "%s%.0fns" % (ge, ns)
    if ns < 1e6:
        return "%s%.*fus" % (ge, 1 if ns < 1e5 else 0, ns / 1e3)
    if ns < 1e9:
        return "%s%.*fms" % (ge, 1 if ns < 1e8 else 0, ns / 1e6)
    return "%s%.2fs" % (ge, ns / 1e9)


def lost_slots(hists):
    """The time readers lost, as frlockstat counts it: waits (exact) and
    retries' lower bounds together, {slot: count}; and whether any of it
    is a bound."""
    lost = {}
    for k in ("wait_ns", "retry_lb_ns"):
        for s, c in hists[k].items():
            lost[s] = lost.get(s, 0) + c
    return lost, bool(hists["retry_lb_ns"])


def lost_cells(hists):
    """p50, p99 and max of the time readers lost as cells, as frlockstat
    prints its p99: "≥32K" (the bucket's floor) when any of it is a bound,
    "<32K" when it is all waits, "-" if none."""
    lost, is_bound = lost_slots(hists)
    p = percentile_slots(lost)
    if not p:
        return ["-", "-", "-"]
    return ["≥" + size(slot_min(s)) if is_bound else bound(s) for s in p]


def pct_cells(slots):
    p = percentile_slots(slots)
    return [bound(s) for s in p] if p else ["-", "-", "-"]


def rate(v, digits=0):
    return "-" if v is None else "%.*f" % (digits, v)


def count(n):
    return "{:,}".format(int(n))


def share(x):
    return "-" if x is None else "%.3f%%" % (100 * x)


def func(site):
    return site.split("+")[0]


# --- the view ---------------------------------------------------------------

class Lock:
    """One lock's records: its intervals and whole-run sums."""

    def __init__(self, name, kind):
        self.name, self.kind = name, kind
        self.intervals = []         # frlockstat records, in order
        self.rows = []              # the completed intervals' rows
        self.done = 0               # intervals turned into rows
        self.sums = {"writes": 0, "retries": 0, "waits": 0}
        self.has_waits = False      # some record of it counted waits
        self.lost_total_ns = 0      # frlockstat's "lost": reader time lost
        self.lost_bound = False     # ... of which some is a lower bound
        self.hists = {k: {} for k in feed.HISTS}
        self.callers = {}           # (kind, caller, from) -> [count, total_ns]
        self.top = {"writer": {}, "reader": {}}  # frlockstat's per-interval tops
        self.walk_fallbacks = 0     # frlockstat -W: walks that fell back on it
        self.walk_redo = {}         # ... their redo's histogram, {slot: count}


class View:
    def __init__(self, lock=None):
        self.forced = lock          # the detail lock asked for, if any
        self.detail = lock          # fixed once chosen
        self.why = "asked for" if lock else None
        self.locks = {}             # name -> Lock, in arrival order
        self.pending_callers = {}   # lock -> caller records before its line
        self.with_callers = False   # frlockstat ran with -c
        self.load_end = []          # gtod-load lines: window end (ts), sorted
        self.loads = []             # (ts, dt, total reads/s, adjtimex writes/s)
        self.via = None
        self.summary = None
        self.drops = None
        self.missed = None
        self.malformed = {}         # reason -> lines
        self.unknown = {}           # type -> records
        self.newer = {}             # version -> records
        self.ended = False
        self.feed_end = False       # the guest's {"type":"feed_end"} was read
        self.self_cost = None       # frlockstat -S's last record (running totals)
        self.pairs = {}             # (lock, kind, wcomm, writer, rcomm, reader) -> [n, ns, bound]
        self.workload = None        # make run CMD=...: workload_start, then its end
        self.workload_out = None    # (its output's last lines, a note), from the host
        self.last_ts = None         # the newest frlockstat interval's end
        self.with_walk = False      # frlockstat ran with -W
        self.walk_fallbacks = {}    # (function, cause) -> fallbacks, whole run
        self.walk_nolock_redo = {}  # the redos no lock explains, {slot: count}
        self.version = 0            # bumped by every change

    # --- input ------------------------------------------------------------

    def add_line(self, raw):
        """Take one line of the feed; return the detail rows it completed."""
        what, rec, why = feed.classify(raw)
        if what == "blank":
            return []
        self.version += 1
        if what == "malformed":
            self.malformed[why] = self.malformed.get(why, 0) + 1
            return []
        if what == "newer":
            v = rec["v"]
            self.newer[v] = self.newer.get(v, 0) + 1
            return []
        if what == "unknown":
            t = str(rec.get("type"))
            self.unknown[t] = self.unknown.get(t, 0) + 1
            return []
        return self.add(rec)

    def add(self, rec):
        """Take one valid record; return the detail rows it completed."""
        self.version += 1
        t = rec["type"]
        if t == "frlockstat_caller":
            # frlockstat -j prints a lock's call sites before its line.
            self.with_callers = True
            self.pending_callers.setdefault(rec["lock"], []).append(rec)
            return []
        if t == "frlockstat_pair":
            key = (rec["lock"], rec["kind"], rec["writer_comm"], rec["writer"],
                   rec["reader_comm"], rec["reader"])
            p = self.pairs.setdefault(key, [0, 0, False])
            p[0] += rec["count"]
            p[1] += rec["ns"]
            p[2] = p[2] or rec["bound"]
            return []
        if t == "frlockstat":
            return self._stat(rec)
        if t == "load":
            return self._load(rec)
        if t == "load_summary":
            self.summary = rec
            self.via = rec["via"]
            return []
        if t == "frlockstat_drops":
            self.drops = rec
            return []
        if t == "frlockstat_missed":
            self.missed = rec
            return []
        if t == "frlockstat_self":
            self.self_cost = rec
            return []
        if t == "frlockstat_walk":
            self.with_walk = True
            for fn, causes in rec["by_function"].items():
                for cause, n in causes.items():
                    self.walk_fallbacks[fn, cause] = self.walk_fallbacks.get((fn, cause), 0) + n
            merge(self.walk_nolock_redo, rec.get("nolock_redo_ns", []))
            return []
        if t == "workload_start":
            self.workload = {"argv": rec["argv"], "cap_s": rec["cap_s"], "end": None}
            return []
        if t == "workload_end":
            if self.workload is None:
                self.workload = {"argv": None, "cap_s": None, "end": None}
            self.workload["end"] = rec
            return []
        self.feed_end = True
        return self.end()           # feed_end: the guest says it is done

    def end(self):
        """The feed ended: every interval becomes a row."""
        self.ended = True
        if self.detail is None and self.locks:
            # No lock gettimeofday reads in the whole feed: the one whose
            # readers retried most, then the busiest writer.
            self.detail = max(self.locks.values(), key=lambda lk: (
                lk.sums["retries"], lk.sums["writes"])).name
            self.why = ("the lock whose readers retried most (none retried or waited "
                        "under the workload)" if self.workload else
                        "the lock whose readers retried most (no lock gettimeofday reads)")
        return self._complete()

    def _stat(self, rec):
        name = rec["lock"]
        lk = self.locks.get(name)
        if lk is None:
            lk = self.locks[name] = Lock(name, rec["kind"])
            if self.detail is None and self.workload is None and is_gtod_lock(name):
                self.detail = name
                self.why = "the lock gettimeofday(2) reads"
        if self.detail is None and self.workload is not None and (
                rec["retries"] or rec.get("waits", 0)):
            # The user's workload: no lock is known to matter beforehand.
            self.detail = name
            self.why = "the first lock whose readers retried or waited under the workload"
        iv = dict(rec)
        iv["callers"] = self.pending_callers.pop(name, [])
        lk.intervals.append(iv)
        for k in lk.sums:
            lk.sums[k] += rec.get(k, 0)
        lk.has_waits = lk.has_waits or "waits" in rec
        lk.lost_total_ns += rec["lost"]["ns"]
        lk.lost_bound = lk.lost_bound or rec["lost"]["bound"]
        for k in feed.HISTS:
            merge(lk.hists[k], rec.get(k, []))
        if "walk_fallbacks" in rec:
            self.with_walk = True
            lk.walk_fallbacks += rec["walk_fallbacks"]
            merge(lk.walk_redo, rec.get("walk_redo_ns", []))
        for c in iv["callers"]:
            key = (c["kind"], c["caller"], c["from"])
            s = lk.callers.setdefault(key, [0, 0])
            s[0] += c["count"]
            s[1] += c["total_ns"]
        for top in ("writer", "reader"):
            f = rec.get("top_" + top)
            if f and f != "-":
                lk.top[top][f] = lk.top[top].get(f, 0) + 1
        self.last_ts = max(self.last_ts or rec["ts"], rec["ts"])
        return self._complete()

    def _load(self, rec):
        i = bisect.bisect_right(self.load_end, rec["ts"])
        self.load_end.insert(i, rec["ts"])
        self.loads.insert(i, (rec["ts"], rec["dt"], rec["total"], rec.get("writes", 0)))
        self.via = rec.get("via", self.via)
        return self._complete()

    # --- rows -------------------------------------------------------------

    def _is_complete(self, iv):
        """An interval gets no more reads once a load line reaches past its
        end, or frlockstat's next interval came, or the feed ended."""
        if self.ended:
            return True
        if self.load_end and self.load_end[-1] >= iv["ts"]:
            return True
        return self.last_ts is not None and self.last_ts >= iv["ts"] + iv["dt"] / 2

    def _complete(self):
        """Turn every lock's completed intervals into rows; return the
        detail lock's new rows."""
        out = []
        for lk in self.locks.values():
            while lk.done < len(lk.intervals) and self._is_complete(lk.intervals[lk.done]):
                row = self._row(lk, lk.intervals[lk.done])
                lk.rows.append(row)
                lk.done += 1
                if lk.name == self.detail:
                    out.append(row)
        if out or self.ended:
            self.version += 1
        return out

    def reads(self, t0, t1):
        """gtod-load's reads in (t0, t1]: each load line's rate times the
        part of its window in there; and the seconds those windows cover."""
        reads = covered = 0.0
        i = bisect.bisect_right(self.load_end, t0)
        while i < len(self.loads):
            end, dt, total, _ = self.loads[i]
            if end - dt >= t1:
                break
            o = min(t1, end) - max(t0, end - dt)
            if o > 0:
                reads += total * o
                covered += o
            i += 1
        return reads, covered

    def _row(self, lk, iv):
        dt = iv["dt"]
        reads, covered = self.reads(iv["ts"] - dt, iv["ts"])
        reads_s = reads / covered if covered > 0 else None
        # gettimeofday's retries: at least as many as its reads that
        # retried, so the share that did not retry is a lower bound.
        gtod_retries = sum(c["count"] for c in iv["callers"] if is_gtod_retry(c))
        no_retry = None
        if reads and self.via != "vdso" and self.with_callers:
            no_retry = max(0.0, 1.0 - gtod_retries / reads)
        hold = merge({}, iv["hold_ns"])
        keys = [k for k in feed.HISTS if iv.get(k)]
        row = {
            "lock": lk.name, "kind": lk.kind,
            "hists": {k: slots_hist(merge({}, iv[k])) for k in keys or ["hold_ns"]},
            "ts": iv["ts"], "dt": dt, "reads": reads, "reads_s": reads_s,
            "gtod_retries": gtod_retries, "no_retry": no_retry,
            "writes_s": iv["writes"] / dt, "retries_s": iv["retries"] / dt,
            "waits_s": iv["waits"] / dt if "waits" in iv else None,
        }
        row["cells"] = [iv.get("time") or "%.0f" % iv["ts"], rate(reads_s),
                        ("" if no_retry is None else "≥") + share(no_retry),
                        rate(row["writes_s"]), rate(row["retries_s"]),
                        rate(row["waits_s"])] + pct_cells(hold)
        return row

    # --- what to show -----------------------------------------------------

    def detail_lock(self):
        """(name, why) of the lock whose detail is shown, or (None, why):
        the lock asked for, else the lock gettimeofday(2) reads, the first
        time the feed names it, else (at the end of a feed without one) the
        lock whose readers retried most. Once chosen it never changes."""
        if self.detail is None:
            return None, "waiting for the lock gettimeofday(2) reads (%s)" % ", ".join(GTOD_LOCKS)
        return self.detail, self.why

    def span(self):
        """The seconds frlockstat's intervals cover, first start to last end."""
        ivs = [iv for lk in self.locks.values() for iv in lk.intervals]
        if not ivs:
            return 0.0
        return max(iv["ts"] for iv in ivs) - min(iv["ts"] - iv["dt"] for iv in ivs)

    def lock_rows(self):
        """Every lock over the whole run, sorted as frlockstat sorts them:
        retries, then writes, then name."""
        secs = self.span()
        out = []
        order = sorted(self.locks.values(),
                       key=lambda lk: (-lk.sums["retries"], -lk.sums["writes"], lk.name))
        for lk in order:
            per = (lambda n: n / secs) if secs > 0 else (lambda n: None)
            writer = self._top(lk, ("write",), "writer")
            # where reads retried, else where they waited
            reader = self._top(lk, ("retry",), "reader")
            if reader == "-":
                reader = self._top(lk, ("wait",), None)
            walk = [rate(per(lk.walk_fallbacks), 1)] + pct_cells(lk.walk_redo)[:2] \
                if self.with_walk else []
            out.append({"lock": lk.name, "kind": lk.kind, "cells": [
                lk.name, lk.kind, rate(per(lk.sums["writes"]), 1)] +
                pct_cells(lk.hists["hold_ns"]) + [
                rate(per(lk.sums["retries"]), 1)] + walk + [
                rate(per(lk.sums["waits"]), 1) if lk.has_waits else "-",
                duration_rate(lk.lost_total_ns / secs, lk.lost_bound) if secs > 0 else "-",
                lost_cells(lk.hists)[1], writer, reader]})
        return out

    def lock_columns(self):
        """The table of every lock's columns: frlockstat -W's after retries/s."""
        if not self.with_walk:
            return list(LOCK_COLUMNS)
        at = LOCK_COLUMNS.index("retries/s") + 1
        return list(LOCK_COLUMNS[:at] + WALK_COLUMNS + LOCK_COLUMNS[at:])

    def walk_line(self):
        """frlockstat -W, whole run: the path walks that fell back, by
        function and cause, and the redo of those no lock explains; None
        without -W."""
        if not self.with_walk:
            return None
        n = self.walk_fallbacks
        total = sum(n.values())
        fns = ", ".join("%s %s" % (f, count(sum(c for (g, _), c in n.items() if g == f)))
                        for f in WALK_FNS)
        causes = ", ".join("%s %s" % (c, count(sum(k for (_, d), k in n.items() if d == c)))
                           for c in WALK_CAUSES)
        p50, p99, _ = pct_cells(self.walk_nolock_redo)
        return ("path walks fallen back to ref-walk, whole run: %s (%s); by cause: %s "
                "(lock: charged to its row; the others' redo p50 %s, p99 %s ns)"
                % (count(total), fns, causes, p50, p99))

    def _top(self, lk, kinds, field):
        """The function of the lock's busiest site of these kinds over the
        run (frlockstat -c), else the one frlockstat named top most often."""
        by = {}
        for (kind, caller, _), (n, _) in lk.callers.items():
            if kind in kinds:
                by[func(caller)] = by.get(func(caller), 0) + n
        if not by and field:
            by = lk.top[field]
        if not by:
            return "-"
        return min(by, key=lambda f: (-by[f], f))

    def caller_rows(self, lk):
        rows = sorted(lk.callers.items(), key=lambda kv: (
            KIND_ORDER.get(kv[0][0], 9), -kv[1][0], kv[0][1], kv[0][2]))
        out = []
        for (kind, caller, frm), (n, ns) in rows[:MAX_CALLERS]:
            mean = "%d" % (ns // n) if n and kind == "write" else "-"
            out.append([kind, caller, frm, count(n), mean])
        return out, len(rows) - len(out)

    def pair_rows(self):
        """Who cost whom, whole run: the pairs that cost readers the most
        time, then the most lost reads; and how many more there are."""
        rows = sorted(self.pairs.items(), key=lambda kv: (-kv[1][1], -kv[1][0], kv[0]))
        out = [list(k) + [count(n), duration_rate(ns, b)]
               for k, (n, ns, b) in rows[:MAX_PAIRS]]
        return out, len(rows) - len(out)

    def self_cost_line(self):
        """frlockstat -S: what the instrument itself cost, whole run (its
        running totals); None without -S."""
        r = self.self_cost
        if r is None:
            return None
        t = r["total"]
        poller = "its poller %.1f ms of CPU" % (t["poller_cpu_ns"] / 1e6)
        if r["bpf_stats"] != "on" or "run_cnt" not in t:
            return "frlockstat's own cost: BPF statistics unavailable (%s); %s" % (
                r.get("bpf_stats_why", "no reason given"), poller)
        per = " (%s a run)" % duration_rate(t["run_time_ns"] / t["run_cnt"], False) \
            if t["run_cnt"] else ""
        return ("frlockstat's own cost, whole run: %s BPF program runs, %s in them%s; %s "
                "(the kernel's BPF statistics, on for the run: they cost each program run "
                "too)" % (count(t["run_cnt"]), duration_rate(t["run_time_ns"], False), per,
                          poller))

    def lost_line(self):
        """frlockstat's lost events, running totals: one line."""
        parts = []
        if self.missed and self.missed["missed"]:
            by = self.missed.get("by_event", {})
            parts.append("%s missed (fired while the same program ran on that CPU%s)" % (
                count(self.missed["missed"]),
                ": " + ", ".join("%s %s" % (e, count(n)) for e, n in sorted(by.items()))
                if by else ""))
        if self.drops and self.drops["drops"]:
            # {map: {"full": n, "busy": n, "other": n}}
            by = {m: sum(n.values()) for m, n in self.drops.get("by_map", {}).items()}
            parts.append("%s dropped (a map update failed%s)" % (
                count(self.drops["drops"]),
                ": " + ", ".join("%s %s" % (m, count(n)) for m, n in sorted(by.items()) if n)
                if by else ""))
        return "lost events: " + ("; ".join(parts) if parts else "none reported")

    def skipped_line(self):
        m = sum(self.malformed.values())
        u = sum(self.unknown.values())
        n = sum(self.newer.values())
        line = "skipped: %d malformed lines, %d records of unknown type, %d of a newer schema" % (
            m, u, n)
        if n:
            line += " (%s; this reader knows v%d)" % (
                ", ".join("v%d: %d" % kv for kv in sorted(self.newer.items())), feed.SCHEMA)
        return line

    def incomplete_line(self):
        """The note a feed that ended without the guest's feed_end gets
        (the guest died, or the run was stopped), or None."""
        if self.ended and not self.feed_end:
            return "the feed ended without feed_end: the run is incomplete"
        return None

    def skipped(self):
        return {"malformed": sum(self.malformed.values()),
                "unknown": sum(self.unknown.values()), "newer": sum(self.newer.values())}

    def set_workload_output(self, lines, note=None):
        """The workload's last lines of output, which the host reads from
        the guest's output port (frlock-watch keeps them out of the feed),
        and a note when they are not all there."""
        self.version += 1
        self.workload_out = (list(lines), note)

    def workload_cells(self):
        """The user's workload as every view shows it: its command line,
        how it ended, its last lines of output; None for gtod-load's run."""
        w = self.workload
        if w is None:
            return None
        argv = w["argv"]
        cmd = " ".join(shlex.quote(a) for a in argv) if argv else "(not named)"
        e = w["end"]
        if e is None:
            ended = ("did not end: the feed ended first" if self.ended else
                     "running (at most %s s)" % w["cap_s"])
        elif e["capped"]:
            ended = ("stopped at the %s s cap (exit status %d): it had not ended by itself"
                     % (w["cap_s"], e["status"]))
        else:
            ended = "exited %d after %d s%s" % (e["status"], e["seconds"],
                                                "" if e["status"] == 0 else ": it FAILED")
        out = {"command": cmd, "ended": ended, "failed": bool(e and e["status"] and
                                                              not e["capped"]),
               "output": [], "output_note": None}
        if e is not None:
            if e["output_bytes"] > e["kept_bytes"]:
                out["output_note"] = ("it printed %s bytes; the last %s were kept"
                                      % (count(e["output_bytes"]), count(e["kept_bytes"])))
            if self.workload_out is not None:
                lines, note = self.workload_out
                out["output"] = lines
                if note:
                    out["output_note"] = note
        return out

    def snapshot(self):
        """Everything the page, the report and the tests show: JSON-ready,
        every cell a string already formatted."""
        name, why = self.detail_lock()
        lk = self.locks.get(name) if name else None
        snap = {
            "schema": feed.SCHEMA, "ended": self.ended,
            "locks": {"columns": self.lock_columns(),
                      "rows": [r["cells"] for r in self.lock_rows()],
                      "seconds": round(self.span(), 3)},
            "detail": {"lock": name, "why": why, "kind": lk.kind if lk else None},
            "rows": {"columns": list(ROW_COLUMNS), "rows": [r["cells"] for r in lk.rows] if lk else []},
            "lost": self.lost_line(), "skipped": self.skipped_line(),
            "incomplete": self.incomplete_line(),
            "skipped_counts": self.skipped(),
            "workload": self.workload_cells(),
            "self_cost": self.self_cost_line(),
            "walk": self.walk_line(),
        }
        callers, more = self.caller_rows(lk) if lk else ([], 0)
        snap["callers"] = {"columns": list(CALLER_COLUMNS), "rows": callers, "more": more,
                           "note": None if self.with_callers else
                           "no call sites: frlockstat ran without -c"}
        pairs, more = self.pair_rows()
        snap["pairs"] = {"columns": list(PAIR_COLUMNS), "rows": pairs, "more": more,
                         "note": None if self.with_callers else
                         "no victims and culprits: frlockstat ran without -c"}
        done = lk.intervals[:lk.done] if lk else []
        t0 = self._t0()
        snap["hists"] = {k: self._hist(done, k) for k in feed.HISTS}
        snap["heat"] = {k: self._heat(done, k, t0) for k in feed.HISTS}
        snap["series"] = self._series(lk, done, t0)
        snap["numbers"] = self._numbers(lk, done)
        return snap

    def run_summary(self):
        """The run as the labs print it, or None before the detail
        lock is known: that lock over the intervals gtod-load ran in (its
        rows with reads), each figure over those same windows, gtod-load's
        own totals (load_summary) beside them. Numbers, and "cells": the
        figures as the view formats them, a bound marked as one ("≤", "≥")."""
        lk = self.locks.get(self.detail) if self.detail else None
        if lk is None:
            return None
        loaded = [(iv, r) for iv, r in zip(lk.intervals, lk.rows) if r["reads"]]
        ivs = [iv for iv, _ in loaded]
        secs = sum(iv["dt"] for iv in ivs)
        reads = sum(r["reads"] for _, r in loaded)
        writes = sum(iv["writes"] for iv in ivs)
        retries = sum(iv["retries"] for iv in ivs)
        waits = sum(iv.get("waits", 0) for iv in ivs) if lk.has_waits else None
        hists = {k: {} for k in feed.HISTS}
        for iv in ivs:
            for k in feed.HISTS:
                merge(hists[k], iv.get(k, []))
        lost, _ = lost_slots(hists)
        gtod = sum(r["gtod_retries"] for _, r in loaded)
        # The other readers' retries: the kernel's own, adjtimex's read.
        other = sum(c["count"] for iv in ivs for c in iv["callers"]
                    if c["kind"] == "retry" and not is_gtod_retry(c))
        # A read may retry more than once: retries / reads is at least the
        # share of reads that retried.
        measured = reads and self.via != "vdso" and self.with_callers
        retried_share = gtod / reads if measured else None
        hold_sum = sum(iv["hold_ns_sum"] for iv in ivs)
        ls = self.summary or {}
        load_reads = ls.get("total_count")
        out = {
            "lock": lk.name, "kind": lk.kind, "via": self.via, "callers": self.with_callers,
            "intervals": len(ivs), "seconds": secs, "reads": reads,
            "reads_s": reads / secs if secs else None,
            "writes": writes, "writes_s": writes / secs if secs else None,
            "retries": retries, "waits": waits,
            "gtod_retries": gtod, "other_retries": other,
            "retried_share": retried_share,
            # every time a reader was held back (a wait, or a pass run
            # again), per million of gtod-load's reads in the same windows
            "held_per_million": 1e6 * (retries + (waits or 0)) / reads if reads else None,
            "hold_mean_ns": hold_sum / writes if writes else None,
            # the share of the time inside a write section
            "in_write": hold_sum / (secs * 1e9) if secs else None,
            "lost_total_ns": sum(iv["lost"]["ns"] for iv in ivs),
            "lost_bound": any(iv["lost"]["bound"] for iv in ivs),
            # the losses by log2 slot (slot_label names them)
            "lost_slots": lost,
            # gtod-load's own: its calls over its whole run, and each
            # thread's time per call (it reads back to back)
            "load_reads": load_reads, "load_seconds": ls.get("duration_s"),
            "threads": ls.get("threads"),
            "read_ns": ls["threads"] * ls["duration_s"] / load_reads * 1e9
            if load_reads else None,
            "adjtimex_s": ls.get("writes"), "write_rate": ls.get("write_rate"),
        }
        out["cells"] = {
            "retried_share": "-" if retried_share is None else "≤" + share(retried_share),
            "hold": pct_cells(hists["hold_ns"]), "lost": lost_cells(hists),
            "lost_s": duration_rate(out["lost_total_ns"] / secs, out["lost_bound"]) if secs else "-",
        }
        return out

    def program_runs(self, t0, t1):
        """The events frlockstat ran a BPF program for, per second, over its
        intervals wholly inside [t0, t1], every lock's: a write section is
        two (begin, end), a retry and a wait one each; and the readers'
        alone (retries and waits: where -c walks the stack). None if no
        interval lies inside."""
        by_ts = {}
        for lk in self.locks.values():
            for iv in lk.intervals:
                if iv["ts"] - iv["dt"] < t0 or iv["ts"] > t1:
                    continue
                e = by_ts.setdefault(iv["ts"], [iv["dt"], 0, 0])
                readers = iv["retries"] + iv.get("waits", 0)
                e[1] += 2 * iv["writes"] + readers
                e[2] += readers
        secs = sum(e[0] for e in by_ts.values())
        if secs <= 0:
            return None
        return {"events_per_s": sum(e[1] for e in by_ts.values()) / secs,
                "reader_events_per_s": sum(e[2] for e in by_ts.values()) / secs,
                "seconds": secs}

    def _t0(self):
        starts = [iv["ts"] - iv["dt"] for lk in self.locks.values() for iv in lk.intervals[:1]]
        starts += [end - dt for end, dt, _, _ in self.loads[:1]]
        return min(starts) if starts else 0.0

    def _hist(self, done, key):
        run = {}
        for iv in done:
            merge(run, iv.get(key, []))
        last = merge({}, done[-1].get(key, [])) if done else {}
        if not run:
            return {"title": HIST_TITLES[key], "labels": [], "mins": [], "run": [], "last": []}
        slots = range(min(run), max(run) + 1)
        return {"title": HIST_TITLES[key], "labels": [slot_label(s) for s in slots],
                "mins": [slot_min(s) for s in slots],
                "run": [run.get(s, 0) for s in slots], "last": [last.get(s, 0) for s in slots]}

    def _heat(self, done, key, t0):
        """One column per interval, one row per log2 slot; a cell's shade is
        its count on a log scale, 1 -> 0, the largest count -> 1."""
        cols = [(iv, merge({}, iv.get(key, []))) for iv in done]
        counts = [c for _, m in cols for c in m.values()]
        if not counts:
            return {"cols": [], "lo": None, "hi": None, "labels": [], "max": 0, "sum": 0,
                    "cells": 0}
        top = max(counts)
        lo = min(s for _, m in cols for s in m)
        hi = max(s for _, m in cols for s in m)
        out = []
        for iv, m in cols:
            out.append({"x0": round(iv["ts"] - iv["dt"] - t0, 3), "x1": round(iv["ts"] - t0, 3),
                        "time": iv.get("time", ""),
                        "cells": [[s, math.log(c) / math.log(top) if top > 1 else 1.0, count(c)]
                                  for s, c in sorted(m.items())]})
        return {"cols": out, "lo": lo, "hi": hi, "max": top, "max_label": count(top),
                "mid_label": count(round(math.sqrt(top))) if 1 < round(math.sqrt(top)) < top
                else None,
                "labels": {s: size(slot_min(s)) for s in range(lo, hi + 1)},
                "ranges": {s: slot_label(s) for s in range(lo, hi + 1)},
                "sum": sum(counts), "cells": len(counts)}

    def _series(self, lk, done, t0):
        reads = [[round(end - t0, 3), total] for end, _, total, _ in self.loads]
        adj = [[round(end - t0, 3), w] for end, _, _, w in self.loads]
        writes = [[round(iv["ts"] - t0, 3), iv["writes"] / iv["dt"]] for iv in done]
        retries = [[round(iv["ts"] - t0, 3), iv["retries"] / iv["dt"]] for iv in done]
        xs = [p[0] for p in reads + writes]
        return {"reads": reads, "adjtimex": adj, "writes": writes, "retried": retries,
                "xmax": math.ceil(max(xs)) if xs else 1}

    def _numbers(self, lk, done):
        rows = lk.rows if lk else []
        rs = [r["reads_s"] for r in rows if r["reads_s"] is not None]
        n = [["lock", "%s (%s)" % (lk.name, lk.kind) if lk else "-"],
             ["intervals", count(len(done))],
             ["write sections", count(sum(iv["writes"] for iv in done))],
             ["retries", count(sum(iv["retries"] for iv in done))]]
        if lk and lk.has_waits:
            n.append(["waits", count(sum(iv.get("waits", 0) for iv in done))])
        n.append(["mean reads/s", rate(sum(rs) / len(rs)) if rs else "-"])
        n.append(["locks", count(len(self.locks))])
        return n
