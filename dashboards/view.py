# SPDX-License-Identifier: GPL-2.0
"""The one view of a frlock feed, for the terminal and for the page.

Both renderers of make run read the same records (parsed once, by feed.py)
and draw the figures of this module: one row per frlockstat interval of
the lock on show, with the cells already formatted. The terminal prints the
cells, the page puts the same strings in its table, so the two cannot
disagree (dashboards/tests/run.sh checks that they do not).

A row's figures:
  reads/s     gtod-load's gettimeofday calls/s over the interval's window
              (its "load" lines, weighted by how much of each line's window
              overlaps the interval);
  no retry    the share of those reads that did not retry: 1 - retried
              reads at the gettimeofday syscall's reader site
              (READ_SITE, from frlockstat -c's "read" call sites) / reads;
              without -c, the lock's retried reads of every reader, so a
              lower bound; "-" when the reads went through the vDSO (they
              never reach the kernel's lock) or there were none;
  retried/s   the lock's retried reads per second (every reader);
  writes/s    write sections per second;
  hold p50, p99, max
              the log2 bucket of the write sections' hold time: "<16K" is
              under 16,384 ns (frlockstat's bucket upper bounds).
Records of a type this view does not know are skipped and counted, like
the lines feed.py rejects.
"""

KNOWN = ("frlockstat", "frlockstat_caller", "frlockstat_drops", "frlockstat_missed",
         "load", "load_summary", "feed_end")
READ_SITE = "ktime_get_real_ts64+"
COLUMNS = ("time", "reads/s", "no retry", "retried/s", "writes/s",
           "hold p50", "p99", "max")
WIDTHS = (8, 9, 9, 9, 8, 8, 6, 6)
HISTS = (("hold_ns", "write section hold time, this interval (ns)"),
         ("retries_per_read", "retries per retried read, this interval"))


def size(v):
    """bpftrace's bucket labels: powers of 1024 as K, M, G."""
    units = ("", "K", "M", "G", "T")
    u = 0
    while v >= 1024 and v % 1024 == 0 and u < len(units) - 1:
        v //= 1024
        u += 1
    return "%d%s" % (v, units[u])


def slot_of(lo):
    """log2 slot of a bucket from its lower bound: 0, 1, [2^(s-1), 2^s)."""
    return lo.bit_length()


def percentiles(hist):
    """p50, p99 and max of a [{"min","max","count"}] histogram, as the
    upper bounds (inclusive) of their buckets; None if it is empty."""
    buckets = sorted((b["min"], b["max"], b["count"]) for b in hist if b["count"] > 0)
    total = sum(c for _, _, c in buckets)
    if not total:
        return None
    out = {}
    for name, pct in (("p50", 50), ("p99", 99)):
        rank, seen = -(-total * pct // 100), 0
        for _, hi, c in buckets:
            seen += c
            if seen >= rank:
                out[name] = hi
                break
    out["max"] = buckets[-1][1]
    return out


def bound(hi):
    """A bucket's upper bound as a cell: 16383 -> "<16K"."""
    return "-" if hi is None else "<" + size(hi + 1)


def rate(v):
    return "-" if v is None else "%.0f" % v


class View:
    def __init__(self, lock=None):
        self.lock = lock            # None: the lock with the most writes
        self.counts = {t: 0 for t in KNOWN}
        self.unknown = 0            # records of another type, skipped
        self.malformed = 0          # lines feed.py rejected, skipped
        self.reasons = {}
        self.loads = []             # {"ts" or None, "t", "dt", "total", "via"}
        self.load_offset = None     # ts = t + load_offset for lines without ts
        self.last_fs_ts = None
        self.via = None
        self.pending = []           # frlockstat intervals not yet in a row
        self.callers = {}           # lock -> call sites of its next interval
        self.rows = []
        self.writes_by_lock = {}
        self.retries_by_lock = {}
        self.ended = False
        self.summary = None         # gtod-load's load_summary
        self.lost = {}              # frlockstat's drops and missed events, running totals

    # --- input ------------------------------------------------------------

    def skip(self, why):
        """A line feed.py rejected."""
        self.malformed += 1
        self.reasons[why] = self.reasons.get(why, 0) + 1

    def add(self, rec):
        """Take one record; return the rows it completed (maybe none)."""
        t = rec.get("type")
        if t not in KNOWN:
            self.unknown += 1
            return []
        self.counts[t] += 1
        if t == "load":
            return self._load(rec)
        if t == "frlockstat":
            return self._stat(rec)
        if t == "frlockstat_caller":
            # frlockstat -j prints a lock's call sites before its line.
            self.callers.setdefault(rec["lock"], []).append(rec)
            return []
        if t in ("frlockstat_drops", "frlockstat_missed"):
            key = "drops" if t == "frlockstat_drops" else "missed"
            self.lost[key] = rec.get(key, 0)
            return []
        if t == "load_summary":
            self.summary = rec
            self.via = rec.get("via", self.via)
            return []
        return self.end()           # feed_end: the guest says it is done

    def end(self):
        """The feed ended: every pending interval becomes a row."""
        self.ended = True
        return self._flush(len(self.pending))

    def _load(self, rec):
        self.via = rec.get("via", self.via)
        p = {"ts": rec.get("ts"), "t": rec["t"], "dt": rec["dt"],
             "total": rec["total"]}
        if p["ts"] is None and self.load_offset is None and self.last_fs_ts is not None:
            self.load_offset = self.last_fs_ts - p["t"]
        self.loads.append(p)
        # An interval is done when a load line reaches past its end.
        ts = self._load_ts(p)
        n = 0
        while n < len(self.pending) and ts is not None and ts >= self.pending[n]["ts"]:
            n += 1
        return self._flush(n)

    def _stat(self, rec):
        lock = rec["lock"]
        self.writes_by_lock[lock] = self.writes_by_lock.get(lock, 0) + rec["writes"]
        self.retries_by_lock[lock] = self.retries_by_lock.get(lock, 0) + rec["retries"]
        if self.last_fs_ts is None and self.load_offset is None and self.loads:
            self.load_offset = rec["ts"] - self.loads[-1]["t"]
        self.last_fs_ts = rec["ts"]
        # A lock's next interval: its last one will get no more reads.
        n = 0
        for i, iv in enumerate(self.pending):
            if iv["lock"] == lock:
                n = i + 1
        done = self._flush(n)
        self.pending.append({"lock": lock, "ts": rec["ts"], "rec": rec,
                             "callers": self.callers.pop(lock, [])})
        return done

    def _load_ts(self, p):
        if p["ts"] is not None:
            return p["ts"]
        return None if self.load_offset is None else p["t"] + self.load_offset

    # --- rows -------------------------------------------------------------

    def shown_lock(self):
        if self.lock:
            return self.lock
        if not self.writes_by_lock:
            return None
        # The lock whose readers retried most, then the busiest writer, as
        # the page's defaultLock(): the busiest writer among every sequence
        # lock need not be the one the load reads.
        return max(self.writes_by_lock, key=lambda k: (self.retries_by_lock.get(k, 0),
                                                       self.writes_by_lock[k]))

    def _flush(self, n):
        done, self.pending = self.pending[:n], self.pending[n:]
        rows = []
        for iv in done:
            if iv["lock"] != self.shown_lock():
                continue
            row = self._row(iv)
            self.rows.append(row)
            rows.append(row)
        return rows

    def _reads(self, t0, t1):
        """gtod-load's reads in (t0, t1]: each load line's rate times the
        part of its window in there; and the seconds those windows cover."""
        reads = covered = 0.0
        for p in self.loads:
            end = self._load_ts(p)
            if end is None:
                continue
            o = min(t1, end) - max(t0, end - p["dt"])
            if o > 0:
                reads += p["total"] * o
                covered += o
        return reads, covered

    def _row(self, iv):
        rec = iv["rec"]
        dt = rec.get("dt") or rec["interval_s"]     # what it really covered
        reads, covered = self._reads(rec["ts"] - dt, rec["ts"])
        reads_s = reads / covered if covered > 0 else None
        site = [c for c in iv["callers"]
                if c["kind"] == "read" and c["caller"].startswith(READ_SITE)]
        retried = sum(c["count"] for c in site) if iv["callers"] else rec["retried_reads"]
        # seqcount readers keep no per-read state: which reads retried is
        # not known, only how many sections were run again.
        seqcount = rec.get("kind") == "seqcount"
        share = None
        if reads and self.via != "vdso" and not seqcount:
            share = max(0.0, 1.0 - retried / reads)
        pct = rec.get("hold_ns_pct") or percentiles(rec["hold_ns"]) or {}
        row = {
            "lock": iv["lock"], "time": rec.get("time", ""), "ts": rec["ts"],
            "interval_s": round(dt, 3), "reads_s": reads_s, "no_retry": share,
            "retried_site": retried, "site": "site" if iv["callers"] else "lock",
            "retried_s": rec["retried_reads"] / dt, "writes_s": rec["writes"] / dt,
            "hold_p50": pct.get("p50"), "hold_p99": pct.get("p99"),
            "hold_max": pct.get("max"),
        }
        row["cells"] = [
            row["time"] or "%.0f" % rec["ts"], rate(reads_s),
            "-" if share is None else "%.2f%%" % (100 * share),
            "-" if seqcount else rate(row["retried_s"]), rate(row["writes_s"]),
            bound(row["hold_p50"]), bound(row["hold_p99"]), bound(row["hold_max"]),
        ]
        row["hists"] = {k: rec.get(k, []) for k, _ in HISTS}
        row["kind"] = rec.get("kind", "frlock")
        row["retries_s"] = rec.get("retries", 0) / dt
        row["waits_s"] = rec.get("waits", 0) / dt
        return row

    def skipped(self):
        return {"malformed": self.malformed, "unknown": self.unknown}

    def skipped_line(self):
        return "skipped: %d malformed lines, %d records of unknown type" % (
            self.malformed, self.unknown)


# --- the terminal -----------------------------------------------------------

def table_line(cells):
    return " ".join(c.rjust(w) for c, w in zip(cells, WIDTHS))


def table_header():
    return table_line(COLUMNS)


def hist_lines(hist, width=40):
    """A histogram as bpftrace draws one, filled buckets and those between."""
    by_slot = {slot_of(b["min"]): b["count"] for b in hist if b["count"] > 0}
    if not by_slot:
        return ["  (none)"]
    top = max(by_slot.values())
    out = []
    for s in range(min(by_slot), max(by_slot) + 1):
        lo = 0 if s == 0 else 1 << (s - 1)
        label = "[%s]" % lo if s < 2 else "[%s, %s)" % (size(lo), size(1 << s))
        c = by_slot.get(s, 0)
        bar = "@" * (c * width // top)
        out.append("  %-14s %8d |%-*s|" % (label, c, width, bar))
    return out


def interval_text(row):
    """What the terminal prints for one interval: its histograms, then
    the table row."""
    out = ["%s %s, %g s interval" % (row["time"], row["lock"], row["interval_s"])]
    if row.get("kind") == "seqcount":
        out[0] += (" (seqcount: %.0f retries/s, %.0f waits/s; which reads retried is not"
                   " known)" % (row["retries_s"], row["waits_s"]))
    for key, title in HISTS:
        out.append(" " + title)
        if key == "retries_per_read" and row.get("kind") == "seqcount":
            out.append("  (not known for a seqcount: its readers keep no per-read state)")
            continue
        out.extend(hist_lines(row["hists"][key]))
    out.append(table_header())
    out.append(table_line(row["cells"]))
    return out


def final_text(view):
    """The table of every interval, after the run."""
    out = ["per interval, %s (%d intervals):" % (view.shown_lock() or "no lock",
                                                  len(view.rows)),
           table_header()]
    out.extend(table_line(r["cells"]) for r in view.rows)
    if view.lost:
        out.append("frlockstat lost events: %s (see bpf/README.md)" % ", ".join(
            "%s %d" % kv for kv in sorted(view.lost.items())))
    out.append(view.skipped_line())
    return out
