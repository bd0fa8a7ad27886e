# SPDX-License-Identifier: GPL-2.0
"""Judge tests/guest/waits.sh on the host: frlockstat's waits against a
writer whose hold is known, and frlockstat -S, its own cost.

usage: host/judge-waits DIR   (DIR: the guest's /results/waits)

DIR holds hold_us, rc (NAME STATUS lines), the benchmark module's result
lines (NAME.dmesg), frlockstat's NDJSON (NAME.json) for each run, and
-S's table (text.txt) and Prometheus page (self.prom). One ok/not ok
line per check, with the figures; exit status 1 if any failed.

The probe's dispatch is measured, not assumed: frlock_bench's write
sections (two tracepoint hits each: begin and end) with nothing attached,
with empty programs (the dispatch alone), with frlockstat and with
frlockstat -S give the price of a hit; -S's statistics give its programs'
own run time.
"""

import os
import re
import statistics

from frlock.judges import Checks, json_lines, parser, read

checks = Checks("waits: ")
check, note = checks.check, checks.note

# The time from the write's begin (its program's clock read) to the wait's
# program's clock read is three probe hits' worth at most (a hit: the
# tracepoint's dispatch and the program): the begin program's rest and
# return before the count turns odd, the reader's notice (its read
# section, and a retry's hit when the write began inside it), and the
# wait event's own dispatch.
HITS_BEFORE_WAIT = 3


def ns_per_write(d, name):
    """frlock's ns per write section in each of NAME.dmesg's test=write lines."""
    return [float(m.group(1)) for m in
            re.finditer(r"write lock=frlock round=\d+ loops=\d+ ns_per_write=([0-9.]+)", read(d, name) or "")]


def selfs(recs):
    return [r for r in recs if r.get("type") == "frlockstat_self"]


def bench_row(recs):
    """The last record of the benchmark module's frlock (bench_fr)."""
    rows = [r for r in recs if r.get("type") == "frlockstat" and str(r.get("lock", "")).startswith("bench_fr")]
    return rows[-1] if rows else None


def prog_totals(rec, suffix):
    """The total runs and run time of the programs whose name ends in suffix."""
    ps = [p for name, p in rec.get("by_prog", {}).items() if name.endswith(suffix)]
    return (sum(p.get("total", {}).get("run_cnt", 0) for p in ps),
            sum(p.get("total", {}).get("run_time_ns", 0) for p in ps))


def dispatch(d, rc):
    """The price of a hit, from the interleaved write runs: an empty
    program's (the tracepoint's dispatch), frlockstat -S's (the dispatch
    and its program), and -S's own figure for its programs; None if not
    measured. Returns frlockstat -S's hit in ns."""
    runs = {n: ns_per_write(d, "write-%s.dmesg" % n) for n in ("off", "empty", "on", "self")}
    note("frlock ns per write section (two hits): nothing attached %(off)s; empty programs %(empty)s; "
         "frlockstat %(on)s; frlockstat -S %(self)s" % runs)
    progs = []
    for name in sorted(f[:-5] for f in os.listdir(d) if re.fullmatch(r"write-self\.\d+\.json", f)):
        recs = selfs(json_lines(d, name + ".json"))
        last = recs[-1] if recs else {}
        runs_b, ns_b = prog_totals(last, "_fr_wbegin")
        runs_e, ns_e = prog_totals(last, "_fr_wend")
        ok = last.get("bpf_stats") == "on" and runs_b >= 200000 and runs_e >= 200000 and rc.get(name) == 0
        check(ok, "frlockstat -S counted every write section the module ran (%s: write_begin %d runs, %d ns; "
              "write_end %d runs, %d ns; 200000 sections; exit %s)" % (name, runs_b, ns_b, runs_e, ns_e, rc.get(name)))
        if ok:
            progs.append((ns_b / runs_b + ns_e / runs_e) / 2)
    n = len(runs["off"])
    if not (n and all(len(v) == n for v in runs.values()) and progs):
        check(False, "the write sections were measured with nothing, empty programs, frlockstat and frlockstat -S "
              "attached, as many times each")
        return None
    med = {k: statistics.median(v) for k, v in runs.items()}
    empty = (med["empty"] - med["off"]) / 2
    hit = (med["self"] - med["off"]) / 2
    note("per hit (medians of %d runs): an empty program %.0f ns, the tracepoint's dispatch; frlockstat %.0f ns; "
         "frlockstat -S %.0f ns, of which its programs ran %.0f ns by the kernel's statistics; turning the "
         "statistics on: %.0f ns a hit" % (n, empty, (med["on"] - med["off"]) / 2, hit, statistics.median(progs),
                                           (med["self"] - med["on"]) / 2))
    check(empty > 0 and hit > empty,
          "the probe's dispatch measured: an empty program's hit %.0f ns, frlockstat -S's %.0f ns" % (empty, hit))
    return hit


def hist_count(h, pred):
    return sum(b["count"] for b in h or [] if pred(b))


def no_exact_zero(row, what):
    """Every wait of the row (a run's last record) timed above 0 ns,
    counted as a bound, or open when frlockstat detached."""
    waits, timed, bounded, open_ = (row.get(k) for k in ("waits", "waits_joined", "waits_bounded", "waits_open"))
    zeros = hist_count(row.get("wait_ns"), lambda b: b["min"] == 0)
    note("%s: %s waits: %s timed (%s ns in all), %s bounds (their writes' holds: %s ns in all), %s open at the "
         "detach; %d timed 0 ns" % (what, waits, timed, row.get("wait_ns_sum"), bounded, row.get("wait_ub_ns"),
                                    open_, zeros))
    return (isinstance(waits, int) and waits > 0 and all(isinstance(x, int) for x in (timed, bounded, open_))
            and timed + bounded + open_ == waits and zeros == 0)


def runs(d, phase):
    """The phase's runs (waits.sh runs it again, longer, until ftrace
    counted a wait of the module's reader): a note, and a failure when the
    bound was reached without one."""
    lines = [ln.split() for ln in (read(d, phase + ".runs") or "").splitlines() if ln.strip()]
    bound = (read(d, phase + ".bound") or "?").strip()
    note("%s: %d of at most %s runs (ms, ftrace's count of the reader's waits): %s" % (
        phase, len(lines), bound, ", ".join("%s %s" % tuple(ln[:2]) for ln in lines)))
    check(bool(lines) and lines[-1][1:2] != ["0"],
          "%s: ftrace counted a wait of the module's reader within %s runs of the writer, each "
          "twice as long as the one before (%s)" % (
              phase, bound, "; ".join("%s ms: %s" % tuple(ln[:2]) for ln in lines) or "no run"))


def hold(d, rc, hold_us, hit):
    runs(d, "hold")
    recs = json_lines(d, "hold.json")
    row = bench_row(recs)
    note((read(d, "hold.dmesg") or "").strip())
    check(rc.get("hold") == 0 and rc.get("hold.stat") == 0 and row is not None,
          "the writer held bench_fr %d us longer than its copy and frlockstat saw it (module exit %s, "
          "frlockstat exit %s)" % (hold_us, rc.get("hold"), rc.get("hold.stat")))
    if row is None:
        return
    check(no_exact_zero(row, "hold %d us" % hold_us),
          "held %d us: every wait timed above 0 or counted as a bound, none timed as 0 ns" % hold_us)
    if hit is None:
        check(False, "held %d us: the waits against the hold less the dispatch (the dispatch was not measured)"
              % hold_us)
        return
    floor = hold_us * 1000 - HITS_BEFORE_WAIT * hit
    # The histograms are log2 buckets: a wait is known to be at least
    # floor when its bucket starts at or above it.
    bucket = 1 << (int(floor).bit_length() - 1)
    holds, waits = row.get("hold_ns") or [], row.get("wait_ns") or []
    n_holds, n_waits = hist_count(holds, lambda b: True), hist_count(waits, lambda b: True)
    long_holds = hist_count(holds, lambda b: b["min"] >= bucket)
    long_waits = hist_count(waits, lambda b: b["min"] >= bucket)
    note("writes %d, holds of %d ns or more: %d; timed waits %d, of %d ns or more: %d; mean hold %.0f ns, "
         "mean wait %.0f ns" % (n_holds, bucket, long_holds, n_waits, bucket, long_waits,
                                row.get("hold_ns_sum", 0) / max(n_holds, 1),
                                row.get("wait_ns_sum", 0) / max(n_waits, 1)))
    check(long_holds * 2 > n_holds, "held %d us: most write sections lasted %d ns or more (the injected hold "
          "less %d hits of %.0f ns is %.0f ns; its log2 bucket starts at %d)"
          % (hold_us, bucket, HITS_BEFORE_WAIT, hit, floor, bucket))
    check(n_waits > 0 and long_waits * 2 > n_waits,
          "held %d us: the median wait is %d ns or more, the hold less %d probe hits of %.0f ns "
          "(%d of %d waits; a reader whose vCPU the host ran late waits less)"
          % (hold_us, bucket, HITS_BEFORE_WAIT, hit, long_waits, n_waits))


def short(d, rc):
    runs(d, "short")
    row = bench_row(json_lines(d, "short.json"))
    check(rc.get("short") == 0 and rc.get("short.stat") == 0 and row is not None,
          "the writer held bench_fr for its copy only and frlockstat saw it (module exit %s, frlockstat exit %s)"
          % (rc.get("short"), rc.get("short.stat")))
    if row is not None:
        check(no_exact_zero(row, "copy only"),
              "a section as short as the dispatch: every wait timed above 0 or counted as a bound, none as 0 ns")


def text_and_page(d, rc):
    text = read(d, "text.txt") or ""
    note("\n".join(text.splitlines()[-14:]))
    check(rc.get("text") == 0 and re.search(r"^  btf_fr_wend +frlock_write_end +[1-9]\d* +[1-9]\d* ", text, re.M)
          is not None and re.search(r"^  poller: [0-9.]+ ms CPU", text, re.M) is not None,
          "frlockstat -S's table: each program's runs and run time, and the poller's CPU")
    page = read(d, "self.prom") or ""
    runs = re.search(r'^frlock_prog_runs_total\{prog="btf_fr_wend",event="frlock_write_end"\} ([1-9]\d*)$',
                     page, re.M)
    secs = re.search(r'^frlock_prog_run_seconds_total\{prog="btf_fr_wend",event="frlock_write_end"\} '
                     r'([0-9.]+)$', page, re.M)
    check(runs is not None and secs is not None and float(secs.group(1)) > 0
          and re.search(r"^frlock_bpf_stats_enabled 1$", page, re.M) is not None
          and re.search(r'^frlock_poller_cpu_seconds_total\{mode="user"\} [0-9.]+$', page, re.M) is not None,
          "frlockstat -S -P: the page has each program's runs and seconds as counters, and the poller's CPU")


def main(argv):
    p = parser(__doc__, "host/judge-waits")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/waits")
    d = p.parse_args(argv).dir
    checks.failed = 0
    if read(d, "rc") is None:
        check(False, "the guest left its runs in %s" % d)
        return 1
    rc = {}
    for line in read(d, "rc").splitlines():
        name, _, st = line.partition(" ")
        rc[name] = int(st) if st.strip().lstrip("-").isdigit() else None
    hold_us = int((read(d, "hold_us") or "0").strip() or 0)
    hold(d, rc, hold_us, dispatch(d, rc))
    short(d, rc)
    text_and_page(d, rc)
    return 1 if checks.failed else 0
