# SPDX-License-Identifier: GPL-2.0
"""Judge the bpftrace tools' and frlock-watch's runs in the guest
(tests/guest/bpf.sh), on the host, with json.

usage: host/judge-bpftrace DIR PART...   (DIR: the guest's /results/bpftrace)

PART: what must have run (the guest lists what did in DIR/parts):
  tools    frlock-retries.bt and frlock-hold.bt beside each other under
           gettimeofday(2) load and adjtimex writers (both-*), then
           frlock-hold.bt alone (alone-*);
  renames  both beside path-load --writer rename (renames-*);
  vdso     the same probes under gtod-load --via syscall, then --via vdso;
  watch    frlock-watch, make run's guest side: its feed and its output
           (and watch.runs, the runs the host made until the feed held
           WATCH_INTERVALS intervals).
One ok/not ok line per check, with the figures; exit status 1 if any
failed, 2 for an unknown PART.
"""

import json
import re

from frlock import feed
from frlock.judges import Checks, json_lines, parser, read

checks = Checks()
check, note = checks.check, checks.note


class Bt:
    """bpftrace -f json's output: each map and hist as last printed."""

    def __init__(self, d, name):
        self.text = read(d, name)
        self.maps = {}
        for r in json_lines(d, name):
            if r.get("type") in ("map", "hist") and isinstance(r.get("data"), dict):
                for m, v in r["data"].items():
                    self.maps[m] = v

    def keys(self, m):
        v = self.maps.get(m)
        return sorted(v) if isinstance(v, dict) else []

    def total(self, m, key=".*"):
        """The sum of m's values whose key matches key (a scalar map's key
        is "")."""
        v = self.maps.get(m)
        if isinstance(v, dict):
            return sum(x for k, x in v.items() if isinstance(x, int) and re.fullmatch(key, k))
        return v if isinstance(v, int) and re.fullmatch(key, "") else 0

    def hist_total(self, m, key=".*"):
        v = self.maps.get(m)
        hists = v.values() if isinstance(v, dict) else [v] if isinstance(v, list) else []
        keys = list(v) if isinstance(v, dict) else [""]
        return sum(b.get("count", 0) for k, h in zip(keys, hists) if re.fullmatch(key, k)
                   for b in (h or []) if isinstance(b, dict))


def stderr_empty(d, run):
    for t in ("retries", "hold"):
        err = read(d, "%s-%s.err" % (run, t)) or ""
        check(read(d, "%s-%s.err" % (run, t)) is not None and not err.strip(),
              "frlock-%s.bt%s: nothing on stderr" % (t, " beside path-load" if run == "renames" else ""))
        note(err.strip())


def tools(d):
    load = next((r for r in json_lines(d, "both-load.json") if r.get("type") == "load_summary"), {})
    calls = load.get("total_count")
    note("load: %s gettimeofday calls; %s adjtimex writes" % (calls, load.get("write_count")))
    R, H = Bt(d, "both-retries.json"), Bt(d, "both-hold.json")
    reads = R.total("@reads")
    rt = R.total("@retries", "tk_core,ktime_get_real_ts64")
    waits = R.total("@waits", "tk_core,.*")
    note("retries: reads=%d retries(ktime_get_real_ts64)=%d retries(all readers)=%d waits=%d"
         % (reads, rt, R.total("@retries", "tk_core,.*"), waits))
    check(reads > 0, "retries: gettimeofday reads of tk_core were counted (%d)" % reads)
    check(rt > 0, "retries: gettimeofday reads retried (%d in ktime_get_real_ts64)" % rt)
    check(rt <= reads, "retries: retries <= reads (%d <= %d)" % (rt, reads))
    check(waits > 0, "retries: tk_core's readers waited for open write sections (%d)" % waits)
    # the tool counts what gtod-load did, give or take the kernel's own
    # reads (do_adjtimex reads the time too) and the edges of the run
    check(isinstance(calls, int) and reads >= calls, "retries: reads >= gtod-load's calls (%d >= %s)" % (reads, calls))
    # The reader's caller, from the stack taken at the event (-f json
    # writes a stack's frames joined by "\n").
    check(any(re.search(r"ktime_get_real_ts64\+\d*\n *__x64_sys_gettimeofday\+", k) for k in R.keys("@retry_paths")),
          "retries: @retry_paths names the reader's caller (ktime_get_real_ts64 from the gettimeofday syscall)")

    samples = H.hist_total("@hold_ns")
    tk_samples = H.hist_total("@hold_ns", "tk_core,.*")
    writes = H.total("@writes")
    first, last = H.total("@seq_first", "tk_core"), H.total("@seq_last", "tk_core")
    note("hold: samples=%d (tk_core %d), write_end events=%d, tk_core sections opened at counts %d..%d"
         % (samples, tk_samples, writes, first, last))
    for k in H.keys("@hold_ns"):
        note("hold key: " + k)
    check(samples > 0, "hold: the hold-time histogram is not empty (%d)" % samples)
    check("tk_core,timekeeping_advance" in H.keys("@hold_ns"), "hold: the tick writes (timekeeping_advance)")
    check("tk_core,do_adjtimex" in H.keys("@hold_ns"), "hold: adjtimex writes (do_adjtimex)")
    paths = H.keys("@write_paths")
    check(any(re.search(r"timekeeping_advance\+\d*\n *update_wall_time\+", k) for k in paths),
          "hold: @write_paths names the writer's caller (timekeeping_advance from the tick's update_wall_time)")
    check(any(re.search(r"do_adjtimex\+\d*\n *__[a-z0-9_]*adjtime[a-z0-9_]*\+", k) for k in paths),
          "hold: @write_paths names the writer's caller (do_adjtimex from the adjtime syscall)")
    for k in H.keys("@seqcount_hold_ns"):
        note("seqcount hold key: " + k)
    check("jiffies_seq,tick_do_update_jiffies64" in H.keys("@seqcount_hold_ns"),
          "hold: seqcount write sections too: jiffies_seq, written by the tick's tick_do_update_jiffies64")
    # The kernel numbers write sections (seq, the even count each opened
    # at: two apart). Beside the syscall-counting tools, the kernel skips a
    # tracepoint's BPF programs when they interrupt another BPF program on
    # that CPU: the tick's sections that land in one are not seen (begin
    # and end both, so no wrong sample). Alone, frlock-hold.bt must see
    # every section (below).
    sections = (last - first) // 2 + 1
    note("hold: beside the syscall-counting tools, %d of %d write sections unseen" % (sections - tk_samples, sections))
    check(tk_samples * 100 >= sections * 95 and tk_samples <= sections,
          "hold: >= 95%% of the kernel's write sections seen beside the other tools (%d of %d)" % (tk_samples, sections))
    # write_end counted on its own: more only by the sections that ended
    # while bpftrace attached or detached its probes one by one (a few ticks).
    check(samples * 95 <= writes * 100 <= samples * 105,
          "hold: write_end events counted apart, within 5%% of the samples (%d vs %d)" % (writes, samples))
    stderr_empty(d, "both")

    # frlock-hold.bt alone: the write sections from the first sampled to
    # the last give one sample each, but for the rare tick that lands while
    # an adjtimex section's probe runs on that CPU: the kernel then skips
    # the nested BPF program, and that section is unseen (one in 6198, seen
    # once).
    A = Bt(d, "alone-hold.json")
    n = A.hist_total("@hold_ns", "tk_core,.*")
    first, last = A.total("@seq_first", "tk_core"), A.total("@seq_last", "tk_core")
    sections = (last - first) // 2 + 1
    check(0 < n <= sections and n * 100 >= sections * 99,
          "hold alone: samples are >= 99%% of write sections by the kernel's seq (%d of (%d - %d) / 2 + 1)"
          % (n, last, first))


def renames(d):
    """path-load renames entries of a tree while threads look them up: the
    rename_lock and d_seq readers retry, which frlock-retries.bt must show
    by lock name (every dentry's d_seq is "": no symbol) and reader;
    frlock-hold.bt times d_move's sections."""
    load = json_lines(d, "renames-load.json")
    note("path-load: %s" % (json.dumps(load[-1]) if load else "no summary"))
    R, H = Bt(d, "renames-retries.json"), Bt(d, "renames-hold.json")
    for k in R.keys("@seqcount_retries"):
        note("seqcount retry key: " + k)
    for k in R.keys("@seqcount_waits"):
        note("seqcount wait key: " + k)
    n = R.total("@seqcount_retries", r"(rename_lock|),[a-z_0-9.]+")
    check(n > 0, "retries: rename_lock and d_seq readers retried under renames, counted by lock and reader "
          "function (%d)" % n)
    check(H.hist_total("@seqcount_hold_ns", "rename_lock,d_move") > 0,
          "hold: rename_lock's write sections timed, written by d_move")
    stderr_empty(d, "renames")


def vdso(d):
    """Counted by comm, so that nothing else in the guest interferes; the
    same probes must see the syscall load, or they prove nothing."""
    S, V = Bt(d, "vdso-syscall.json"), Bt(d, "vdso-vdso.json")
    sc, rd = S.total("@syscalls"), S.total("@reads")
    note("--via syscall: %d gettimeofday syscalls, %d reads" % (sc, rd))
    check(sc > 0 and rd > 0, "--via syscall: the probes see gettimeofday syscalls and reads")
    vs = V.total("@syscalls")
    ev = V.total("@read_events", "ktime_get_real_ts64")
    # timer interrupts read the time while gtod-load runs (ktime_get, ...)
    note("frlock read events in gtod-load's context, by reader: %s" % json.dumps(V.maps.get("@read_events", {})))
    load = read(d, "vdso-vdso.load") or ""
    note(load)
    check(V.text is not None and vs == 0, "--via vdso: no gettimeofday syscall (%d)" % vs)
    check(V.text is not None and ev == 0, "--via vdso: no frlock read event from ktime_get_real_ts64 (%d)" % ev)
    check("vdso" in load.lower(), "--via vdso: gtod-load says the kernel sees no reads")


# frlock-watch's feed must hold this many of frlockstat's intervals of
# tk_core; the host runs it again, twice as long, until it does, up to
# WATCH_RUNS times (host/frlock/tests/guest_jobs.py: watch).
WATCH_INTERVALS, WATCH_SECONDS, WATCH_RUNS = 3, 4, 3


def watch_feed(d):
    """frlock-watch's feed: (its records, the raw lines, lines skipped,
    frlockstat's intervals of tk_core with running totals and
    percentiles)."""
    recs, skipped = [], 0
    raw = (read(d, "watch.ndjson") or "").encode().splitlines()
    for line in raw:
        r, why = feed.parse_line(line)
        if r is not None:
            recs.append(r)
        elif why:
            skipped += 1
    tk = [r for r in recs if r["type"] == "frlockstat" and r.get("lock") == "tk_core"
          and "total" in r and "hold_ns_pct" in r]
    return recs, raw, skipped, tk


def watch_runs(d):
    """The runs the host made before this feed (watch.runs: the load's
    seconds and the intervals, a line a run), as the interval check names
    them."""
    runs = [line.split() for line in (read(d, "watch.runs") or "").splitlines() if line.strip()]
    if not runs:
        return "no run listed in watch.runs"
    what = "run %d of at most %d, %s s of load" % (len(runs), WATCH_RUNS, runs[-1][0])
    if len(runs) > 1:
        what += "; the runs before it: %s" % ", ".join("%s intervals in %s s" % (r[1], r[0])
                                                       for r in runs[:-1])
    return what


def watch(d):
    rc = (read(d, "watch.rc") or "").split()
    check(rc[-1:] == ["0"], "frlock-watch ran (exit %s)" % (rc[-1] if rc else "?"))
    out = read(d, "watch.out") or ""
    note("\n".join("watch: " + line for line in out.splitlines()))
    # frlockstat's own stderr reports of events it lost (a failed map
    # update) or the kernel did not run it for (recursion) are allowed:
    # never silent.
    other = [line for line in out.splitlines() if not re.match(
        r"frlock-watch: |frlockstat: \d+ events (lost|missed) so far", line)]
    check(not other, "frlock-watch: nothing but its own notes, and frlockstat's counts of lost events, "
          "on stdout and stderr")
    recs, raw, skipped, tk = watch_feed(d)
    check(len(tk) >= WATCH_INTERVALS, "frlock-watch: frlockstat's intervals in the feed, with running "
          "totals and percentiles (%d, want %d; %d lines skipped; %s)"
          % (len(tk), WATCH_INTERVALS, skipped, watch_runs(d)))
    check(any(r["type"] == "frlockstat_caller" and r.get("kind") == "retry"
              and r.get("caller", "").startswith("ktime_get_real_ts64+") for r in recs),
          "frlock-watch: the retries of gettimeofday's reader site in the feed")
    check(any(r["type"] == "load" and r.get("via") == "syscall" and isinstance(r.get("ts"), (int, float))
              for r in recs) and any(r["type"] == "load_summary" for r in recs),
          "frlock-watch: gtod-load's lines, with the realtime clock and the path of the reads")
    last = json.loads(raw[-1]) if raw else None
    check(last == {"type": "feed_end", "status": 0}, "frlock-watch: the feed ends with feed_end")


PARTS = {"tools": tools, "renames": renames, "vdso": vdso, "watch": watch}


def main(argv):
    p = parser(__doc__, "host/judge-bpftrace")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/bpftrace")
    p.add_argument("parts", metavar="PART", nargs="+", choices=list(PARTS))
    a = p.parse_args(argv)
    argv = [a.dir] + a.parts
    checks.failed = 0
    ran = (read(argv[0], "parts") or "").split()
    # What was asked, then anything else the guest ran (--via vdso where
    # the clocksource allowed it).
    for p in argv[1:] + [p for p in PARTS if p in ran and p not in argv[1:]]:
        if p not in ran:
            check(False, "bpftrace tools: the guest ran its %s part (%s/parts lists %s)"
                  % (p, argv[0], " ".join(ran) or "none"))
            continue
        PARTS[p](argv[0])
    return 1 if checks.failed else 0
