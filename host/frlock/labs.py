# SPDX-License-Identifier: GPL-2.0
"""The labs' host side: their questions, and what a run measured.

usage: host/lab-analyse list               the labs, one a line
       host/lab-analyse question NAME      the lab's question (labs/lab prints it first)
       host/lab-analyse analyse NAME DIR   read the guest's raw results in DIR, print
                                           the result and its explanation, write
                                           DIR/result.json and DIR/report.html

A feed's figures are the view's (View.run_summary: the lock gettimeofday
reads, over the intervals the load ran in), the frlock_bench lines are
read by bench/report's parser (benchreport.py), and the report is inlined
as the run report is (report.py): one source of truth for every format.
Every figure printed comes from DIR.

Exit status: 0 when the result was written (also when the run does not
show what the lab teaches: the explanation says so), 1 on an error, 2 on
bad usage.
"""

import json
import argparse
import os
import re
import statistics
import sys
import textwrap

from . import benchreport, feed, view, workloads
from . import report as dash_report
from . import TOP

PROG = "labs/lab"
LABS_DIR = os.path.join(TOP, "labs")

# name -> (order, title, question, prediction prompt)
LABS = {
    "vdso-vs-syscall": dict(
        n=1, title="Who retries, and where",
        question="Two programs read the time as fast as they can while an adjtimex "
        "writer changes the clock 200 times a second. One calls gettimeofday(2) "
        "through the system call, the other through the vDSO (libc's "
        "gettimeofday, in user space). Which of them makes the kernel's "
        "tk_core.lock readers retry, and in which kernel function?",
        predict="Predict: how many gettimeofday system calls will the kernel count "
        "in each run, and how many retries at ktime_get_real_ts64?"),
    "writer-rate": dict(
        n=2, title="Retries against writer rate",
        question="gettimeofday(2) readers on both vCPUs, and an adjtimex writer at 0, "
        "100, 1,000 and 10,000 writes a second (the timer tick writes too, up to "
        "250 times a second). How does the share of reads that retry grow with the rate of "
        "write sections?",
        predict="Predict: doubling the writes, what happens to the retry share? "
        "Which matters more, the write section's length or the read's?"),
    "lockout": dict(
        n=3, title="The 2003 problem: can readers lock the writer out?",
        question="A 1 kHz hard-irq timer on CPU 0 takes a write lock, as the timer "
        "tick took xtime_lock in 2003, while 0, 1 or 2 reader threads hammer the "
        "read side. With rwlock_t, with frlock_t and with seqlock_t (a seqcount "
        "plus a spinlock for the writers), how long does the writer wait for its "
        "lock?",
        predict="Predict: for which lock does the writer's wait grow with the "
        "readers, and why does one reader make no difference?"),
    "write-window": dict(
        n=4, title="Why the shadow timekeeper exists",
        question="Each tick, timekeeping computes the new time (timekeeping_advance()) "
        "on a shadow copy, and holds its write section only to copy the result in. "
        "What if the whole computation ran inside the write section? A benchmark "
        "writer takes a lock 250 times a second, in hard interrupt context as the tick "
        "does, and holds it either just for the copy or as long as this guest's "
        "timekeeping_advance() takes, while a reader on the other vCPU reads a gettimeofday-shaped "
        "section (copy the data, read the clocksource) as fast as they can. With frlock "
        "and with 6.1's seqcount, what do the readers lose in each case?",
        predict="Predict: does the longer section make more reads retry, or make them "
        "wait? By how much does a read that meets a write lose more?"),
    "reader-starvation": dict(
        n=5, title="The other side of the bargain: reader starvation",
        question="frlock never makes a writer wait; readers wait for an open write "
        "section and run again when one begins under them. An adjtimex writer at 0, "
        "1,000, 3,000 and 10,000 writes a second against gettimeofday(2) readers on both "
        "vCPUs: how often are reads held back, and what does each time cost them?",
        predict="Predict: from the tick alone to the fastest writer, how much more often "
        "is a read held back? Is anything bounding how often one read is?"),
    "path-walk": dict(
        n=6, title="A rename storm against path lookups",
        question="Two threads stat() eight files, each by its path and through '..', "
        "and call getcwd(), as fast as they can. A third thread renames files back and "
        "forth: either the very files being looked up, or files of a directory no "
        "lookup walks. Path lookup reads two kinds of sequence lock: rename_lock, one "
        "for the whole system, and d_seq, one in every dentry. Which of them make the "
        "lookups retry in each case, and what does a stat() pay for it?",
        predict="Predict: do renames in a directory nobody looks at slow the lookups "
        "down? Which lock's retries appear only when the renamed files are the ones "
        "being looked up?"),
    "who-pays": dict(
        n=7, title="Who pays: the lock and the writer that cost a mix the most",
        question="stress-ng runs three stressors at once in the guest, one instance each, "
        "for 8 s (5 s quick): --rename (renames files back and forth in a directory of "
        "its own), --clock (reads every clock and sets timers, and adjusts the time) and "
        "--ramfs (mounts and unmounts a ramfs), while frlockstat -c watches every "
        "sequence lock in the kernel. Which lock's readers lose the most read time, and "
        "which writer (the kernel function that opened the write sections, and the task "
        "that ran it) costs them that time?",
        predict="Predict: the lock (as frlockstat names it: rename_lock, tk_core, "
        "mount_lock, dentry.d_seq, ...), the writer's function, and if you like its task "
        "(stress-ng names its instances stress-ng-NAME, cut to 15 characters). make lab "
        "asks at a terminal; labs/lab --predict 'LOCK FUNCTION [TASK]' who-pays takes it "
        "as an argument."),
}


class LabError(Exception):
    pass


# --- reading a run ------------------------------------------------------------

def gtod_run(path):
    """One frlock-watch run as the view sums it up (View.run_summary): the
    lock gettimeofday reads, over the intervals in which the load ran."""
    if not os.path.isfile(path):
        raise LabError("%s is missing: the guest did not write it" % path)
    fd = dash_report.read_feed(path)
    v = fd.view
    if v.summary is None:
        raise LabError("%s has no load_summary: gtod-load did not finish" % path)
    run = v.run_summary()
    if run is None or not run["intervals"]:
        raise LabError("%s: no frlockstat interval of %s overlaps gtod-load's lines"
                       % (path, run["lock"] if run else "the lock gettimeofday reads"))
    run["feed"] = os.path.basename(path)
    # the view's skipped line, which analyse() prints, when it skipped any
    run["skipped"] = v.skipped_line() if any(v.skipped().values()) else None
    if fd.after_end:
        run["skipped"] = "%s%d lines after feed_end not read" % (
            run["skipped"] + "; " if run["skipped"] else "", fd.after_end)
    run["rows"] = v.snapshot()["rows"]["rows"]
    return run


def bench_lines(path):
    """frlock_bench's lines, by bench/report's parser; a file with other
    lines is refused (labs/guest.sh writes the bench lines alone)."""
    try:
        rows, other = benchreport.parse(path)
    except benchreport.BenchError as e:
        raise LabError(str(e))
    if other:
        raise LabError("%s: %d lines that are not frlock_bench's" % (path, other))
    return rows


def syscalls(d, name):
    p = os.path.join(d, name + ".syscalls")
    try:
        return int(open(p).read().strip() or 0)
    except (OSError, ValueError):
        raise LabError("%s is missing or not a count" % p)


def run_names(d, via):
    """run-VIA-W.ndjson in DIR, by W."""
    out = []
    for f in os.listdir(d):
        if f.startswith("run-%s-" % via) and f.endswith(".ndjson"):
            out.append((int(f[len("run-%s-" % via):-len(".ndjson")]), f[:-len(".ndjson")]))
    return sorted(out)


def us(ns):
    return "-" if ns is None else ("%.1f us" % (ns / 1e3) if ns < 1e6 else "%.2f ms" % (ns / 1e6))


def pct(x, digits=3):
    return "-" if x is None else ("%.*f%%" % (digits, 100 * x))


def n_(x):
    return "{:,}".format(int(round(x)))


# --- the labs -------------------------------------------------------------------

def lab_vdso(d):
    runs = {via: gtod_run(os.path.join(d, name + ".ndjson")) for via in ("syscall", "vdso")
            for _, name in run_names(d, via)[:1]}
    if set(runs) != {"syscall", "vdso"}:
        raise LabError("%s needs run-syscall-*.ndjson and run-vdso-*.ndjson" % d)
    for via, r in runs.items():
        r["syscalls"] = syscalls(d, "run-%s-%d" % (via, r["write_rate"]))
    s, v = runs["syscall"], runs["vdso"]
    table = [["", "syscall run", "vDSO run"],
             ["gettimeofday calls by the load", n_(s["load_reads"]), n_(v["load_reads"])],
             ["gettimeofday system calls the kernel counted", n_(s["syscalls"]), n_(v["syscalls"])],
             ["write sections of %s /s" % s["lock"], "%.0f" % s["writes_s"], "%.0f" % v["writes_s"]],
             ["retries at ktime_get_real_ts64 (gettimeofday)", n_(s["gtod_retries"]),
              n_(v["gtod_retries"])],
             ["retries by the kernel's own readers", n_(s["other_retries"]),
              n_(v["other_retries"])],
             ["reads that retried", s["cells"]["retried_share"], "- (none reached the kernel)"]]
    shows = (s["syscalls"] > 0 and s["gtod_retries"] > 0 and v["syscalls"] == 0 and
             v["gtod_retries"] == 0 and v["writes"] > 0)
    text = [
        "Through the system call, the kernel counted %s gettimeofday calls (the load made %s) "
        "and %s retries in ktime_get_real_ts64 (a read may retry more than once: %s of the "
        "reads retried), while %s had %.0f write sections a second." % (
            n_(s["syscalls"]), n_(s["load_reads"]), n_(s["gtod_retries"]),
            s["cells"]["retried_share"], s["lock"], s["writes_s"]),
        "Through the vDSO, the load read the clock %s times (%.1fx the syscall run's rate), "
        "the kernel counted %s gettimeofday system calls and %s retries at "
        "ktime_get_real_ts64, although the write sections went on at %.0f a second. The vDSO "
        "reads vdso_data, which has its own sequence counter, written inside tk_core.lock's "
        "write section (update_vsyscall); a vDSO reader that overlaps it retries in user "
        "space, where no kernel tracepoint sees it." % (
            n_(v["load_reads"]), v["reads_s"] / s["reads_s"] if s["reads_s"] else 0,
            n_(v["syscalls"]), n_(v["gtod_retries"]), v["writes_s"]),
        "The %s retries left in the vDSO run are the kernel's own readers' (the timer "
        "interrupt's ktime_get_update_offsets_now and the like), which read tk_core in "
        "both runs." % n_(v["other_retries"]),
    ]
    if not shows:
        text.append("This run does NOT show what the lab teaches: " + "; ".join(
            w for w, bad in (
                ("the syscall run counted no system calls", s["syscalls"] == 0),
                ("the syscall run had no gettimeofday retry (too short, or too "
                 "few writes: run it again)", s["gtod_retries"] == 0),
                ("the vDSO run reached the kernel (%s system calls: is the clocksource one "
                 "the vDSO can read? labs/lab boots with tsc=reliable)" % n_(v["syscalls"]),
                 v["syscalls"] > 0),
                ("the vDSO run had retries at ktime_get_real_ts64", v["gtod_retries"] > 0),
                ("the vDSO run had no write sections", v["writes"] == 0)) if bad) + ".")
    charts = [
        {"id": "syscalls", "type": "bar", "title": "gettimeofday system calls the kernel counted",
         "labels": ["syscall run", "vDSO run"],
         "datasets": [{"label": "system calls", "data": [s["syscalls"], v["syscalls"]]}]},
        {"id": "retried", "type": "bar", "title": "retries of tk_core.lock's readers, by reader",
         "labels": ["syscall run", "vDSO run"], "stacked": True,
         "datasets": [{"label": "ktime_get_real_ts64 (gettimeofday)",
                       "data": [s["gtod_retries"], v["gtod_retries"]]},
                      {"label": "the kernel's own readers",
                       "data": [s["other_retries"], v["other_retries"]]}]},
        {"id": "writes", "type": "bar", "title": "write sections of tk_core.lock per second",
         "labels": ["syscall run", "vDSO run"],
         "datasets": [{"label": "writes/s", "data": [round(s["writes_s"], 1), round(v["writes_s"], 1)]}]},
    ]
    return {"runs": runs, "table": table, "shows": shows, "text": text, "charts": charts}


def lab_rates(d):
    runs = [gtod_run(os.path.join(d, name + ".ndjson")) for _, name in run_names(d, "syscall")]
    if len(runs) < 2:
        raise LabError("%s needs at least two run-syscall-*.ndjson" % d)
    # by the write sections the run made (a writer asked for more than it
    # can make under TCG may make fewer than a slower one)
    runs.sort(key=lambda r: r["writes_s"])
    for r in runs:
        # The lab's model, P(retry) = (write window + read section) * write
        # sections per second, from the view's figures
        r["model"] = ((r["hold_mean_ns"] or 0) + (r["read_ns"] or 0)) * 1e-9 * r["writes_s"]
    return runs


def lab_writer_rate(d):
    runs = lab_rates(d)
    table = [["adjtimex writes/s asked", "made", "write sections/s", "mean hold",
              "time in writes", "time per read", "reads", "retries", "reads that retried",
              "model"]]
    for r in runs:
        table.append([n_(r["write_rate"]), "%.0f" % r["adjtimex_s"], "%.0f" % r["writes_s"],
                      us(r["hold_mean_ns"]), pct(r["in_write"], 2), us(r["read_ns"]),
                      n_(r["reads"]), n_(r["gtod_retries"]), r["cells"]["retried_share"],
                      pct(r["model"])])
    shares = [r["retried_share"] or 0 for r in runs]
    cells = " -> ".join(r["cells"]["retried_share"] for r in runs)
    lo, hi = runs[0], runs[-1]
    # the most write sections' share above twice the fewest's, and at least
    # half the largest of any run
    grows = shares[-1] > 2 * shares[0] and shares[-1] >= max(shares) / 2
    ratio = [r["retried_share"] / r["model"] for r in runs if r["model"] and r["retried_share"]]
    text = [
        "With the tick alone (%.0f write sections/s) gettimeofday's reads retried %s times in "
        "%s reads; with the writer at %s adjtimex calls/s (%.0f write sections/s) %s times in "
        "%s. A read may retry more than once, so the share of reads that retried is at most "
        "retries / reads: %s." % (
            lo["writes_s"], n_(lo["gtod_retries"]), n_(lo["reads"]), n_(hi["adjtimex_s"]),
            hi["writes_s"], n_(hi["gtod_retries"]), n_(hi["reads"]), cells),
        "The model: a read retries when a write section overlaps it, so P(retry) is about "
        "(write window + read section) x write sections per second. This run measured a "
        "mean write section of %s to %s (frlockstat's hold time over its writes) and %s "
        "to %s per gettimeofday(2) call (gtod-load: threads x seconds / calls, an upper bound on the "
        "read section), which predicts %s." % (
            us(min(r["hold_mean_ns"] or 0 for r in runs)), us(max(r["hold_mean_ns"] or 0 for r in runs)),
            us(min(r["read_ns"] for r in runs)), us(max(r["read_ns"] for r in runs)),
            " -> ".join(pct(r["model"]) for r in runs)) +
        (" The measured bound is %.3f to %.3f of the model's." % (min(ratio), max(ratio))
         if ratio else "") +
        " The model is an upper bound: frlock's readers wait for an open write section to "
        "close before they read (fr_read_begin spins), so a write that is already open "
        "when a read begins costs a wait, not a retry; only a write that begins during "
        "the read section makes it retry, and the read section is a small part of a "
        "system call.",
    ]
    falls = [(a, b) for a, b in zip(runs, runs[1:])
             if (b["retried_share"] or 0) <= (a["retried_share"] or 0)]
    if falls:
        text.append("The share did not rise at every step: " + "; ".join(
            "from %.0f to %.0f write sections/s it went %s -> %s, while the time inside write "
            "sections went %s -> %s" % (
                a["writes_s"], b["writes_s"], a["cells"]["retried_share"],
                b["cells"]["retried_share"], pct(a["in_write"], 2), pct(b["in_write"], 2))
            for a, b in falls) +
            ". The tick's write sections are long (timekeeping_advance under TCG) and the "
            "adjtimex ones short, so a few more short writes need not add retries.")
    if grows:
        text.append("From the fewest write sections to the most the share grew %s: each "
                    "write section is one more chance to overlap a read." % (
                        "%.1fx" % (shares[-1] / shares[0]) if shares[0] else
                        "from none to %s" % pct(shares[-1])))
    else:
        text.append("This run does NOT show the share growing with the writer rate (%s; "
                    "wanted the most write sections' share above twice the fewest's and at least "
                    "half the largest): the counts "
                    "are small and TCG's scheduling noise can hide it; run it again, or "
                    "without QUICK." % cells)
    charts = [
        {"id": "share", "type": "scatter", "title": "reads that retried against write sections/s",
         "xlog": True, "ylog": True, "xtitle": "write sections of tk_core.lock per second",
         "ytitle": "gettimeofday reads that retried, at most (%)",
         "datasets": [
             {"label": "measured: retries / reads", "showLine": True,
              "data": [{"x": round(r["writes_s"], 1), "y": 100 * r["retried_share"]}
                       for r in runs if r["retried_share"]]},
             {"label": "model: (hold + read) x writes/s", "showLine": True, "dash": True,
              "data": [{"x": round(r["writes_s"], 1), "y": 100 * r["model"]}
                       for r in runs if r["model"]]}]},
    ]
    return {"runs": runs, "table": table, "shows": grows, "text": text, "charts": charts}


def lab_starvation(d):
    runs = lab_rates(d)
    table = [["adjtimex writes/s asked", "made", "write sections/s", "mean hold",
              "retries", "waits", "held back, per million reads", "one loss (ns), p50", "p99",
              "max"]]
    for r in runs:
        table.append([n_(r["write_rate"]), "%.0f" % r["adjtimex_s"], "%.0f" % r["writes_s"],
                      us(r["hold_mean_ns"]), n_(r["retries"]), n_(r["waits"] or 0),
                      "%.0f" % (r["held_per_million"] or 0)] + r["cells"]["lost"])
    lo, hi = runs[0], runs[-1]
    held = [r["held_per_million"] or 0 for r in runs]
    # the most write sections' rate above twice the fewest's, and at least
    # half the largest of any run
    grows = held[-1] > 2 * held[0] and held[-1] >= max(held) / 2 and hi["retries"] > 0
    text = [
        "With the tick alone (%.0f write sections/s) the readers of tk_core.lock were held "
        "back %.0f times per million gettimeofday reads (%s retries, %s waits); with the "
        "writer at %.0f adjtimex calls/s (%.0f write sections/s, %s asked), %.0f times "
        "(%s retries, %s waits). Per million reads: %s. (Retries and waits are every "
        "reader's of tk_core.lock, the kernel's own included; the reads they are divided "
        "by are gtod-load's.)" % (
            lo["writes_s"], held[0], n_(lo["retries"]), n_(lo["waits"] or 0),
            hi["adjtimex_s"], hi["writes_s"], n_(hi["write_rate"]), held[-1],
            n_(hi["retries"]), n_(hi["waits"] or 0), " -> ".join("%.0f" % x for x in held)),
        "frlock promises the writer that it never waits; the readers pay. A reader that "
        "finds a write section open waits until it closes (frlock_read_wait), and a "
        "reader under way when a write begins runs again (frlock_read_retry). Nothing "
        "bounds how often either happens to one read: each write that begins during it "
        "holds it back once more.",
        "One loss (a wait, to the end of its write, exact; a retry, from its write's begin, "
        "a lower bound, hence '≥'; log2 buckets of ns, K = 1024) took at the median %s and "
        "at p99 %s, from the fewest write sections to the most: the tick's sections are "
        "long under TCG (mean hold %s), the adjtimex writer's short (%s). Under TCG a vCPU "
        "can lose its host CPU inside a write section or a read, which puts milliseconds "
        "into the tail." % (
            " -> ".join(r["cells"]["lost"][0] for r in runs),
            " -> ".join(r["cells"]["lost"][1] for r in runs),
            us(lo["hold_mean_ns"]), us(hi["hold_mean_ns"])),
        "Where readers cannot afford that, the kernel has read_seqbegin_or_lock(): a "
        "seqlock_t reader makes one lockless pass and, if it must retry, takes the writers' "
        "spinlock for its second pass, so it finishes in two passes at most (at the cost "
        "of holding writers off while it reads). frlock_t keeps raw-spinlock writers and "
        "has no such fallback: its documentation sends those users to seqlock_t.",
        "(Series v3 counted the passes of each read, from an event at its end; v4 has no "
        "such event, so this lab counts the times reads were held back and what each cost.)",
    ]
    if grows:
        text.append("From the fewest write sections to the most, reads were held back more "
                    "often (%s per million)." % " -> ".join("%.0f" % x for x in held))
    else:
        text.append("This run does NOT show reads held back more often as the write rate "
                    "grows (%s per million; wanted the most write sections' above twice the "
                    "fewest's and at least half the largest): run it again, or without "
                    "QUICK." % " -> ".join("%.0f" % x for x in held))
    slots = [s for r in runs for s in r["lost_slots"]]
    slots = range(min(slots), max(slots) + 1) if slots else []
    charts = [
        {"id": "lost", "type": "bar", "title": "what one loss (a wait or a retry) took, over "
         "the intervals the load ran in", "ylog": True, "xtitle": "time lost (ns, log2 bucket)",
         "ytitle": "losses", "labels": [view.slot_label(s) for s in slots],
         "datasets": [{"label": "%.0f writes/s" % r["writes_s"],
                       "data": [r["lost_slots"].get(s, 0) for s in slots]} for r in runs]},
        {"id": "held", "type": "scatter", "title": "reads held back (waits and retries)",
         "xlog": True, "xtitle": "write sections per second", "ytitle": "per million reads",
         "datasets": [{"label": "measured", "showLine": True,
                       "data": [{"x": round(r["writes_s"], 1), "y": round(h, 1)}
                                for r, h in zip(runs, held)]}]},
    ]
    return {"runs": runs, "table": table, "shows": grows, "text": text, "charts": charts}


def lab_lockout(d):
    path = os.path.join(d, "lockout.txt")
    if not os.path.isfile(path):
        raise LabError("%s is missing: the guest did not write it" % path)
    res = benchreport.lockout(bench_lines(path))
    locks = ("rwlock", "seqlock", "frlock")
    readers = sorted({r for lk in res.values() for r in lk})
    if any(set(res.get(lk, {})) != set(readers) for lk in locks) or 0 not in readers or len(readers) < 2:
        raise LabError("%s: not every lock was measured with 0 and more readers: %s" % (
            path, {lk: sorted(res.get(lk, {})) for lk in locks}))
    top = max(readers)
    table = [["lock", "readers", "writer wait p50", "p99", "max", "hold p50", "samples", "reads"]]
    for lk in locks:
        for r in readers:
            x = res[lk][r]
            table.append([lk, str(r), us(x["wait_p50"]), us(x["wait_p99"]), us(x["wait_max"]),
                          us(x["hold_p50"]), n_(x["samples"]), n_(x["reads"])])

    def growth(lk):
        return res[lk][top]["wait_p99"] / max(res[lk][0]["wait_p99"], 1)
    rw, fr, sq = growth("rwlock"), growth("frlock"), growth("seqlock")
    # The no-reader p99, a microsecond or a few from a few hundred samples,
    # moved 10x between this project's runs (0.9 to 9.2 us for frlock), and a
    # loaded host once took frlock's from 6 to 31 us with readers. In eleven
    # quick runs of make test (2026-12-06) rwlock's p99 with two readers was
    # 2.9x to 1,359x its no-reader p99 (that p99 ran above the one-reader
    # one in all eleven), and frlock's stayed 6.9x to 310x below rwlock's:
    # rwlock's readers must push its p99 up 2x or more, and frlock's with the
    # same readers must stay 3x or more below rwlock's.
    fr_vs_rw = res["rwlock"][top]["wait_p99"] / max(res["frlock"][top]["wait_p99"], 1)
    shows = rw >= 2 and fr_vs_rw >= 3
    text = [
        "With %d readers, rwlock's writer waited %s at p99 (%s at worst) against %s with "
        "none: %.1fx. frlock's p99 went from %s to %s (%.2fx), seqlock_t's from %s to %s "
        "(%.2fx)." % (top, us(res["rwlock"][top]["wait_p99"]), us(res["rwlock"][top]["wait_max"]),
                      us(res["rwlock"][0]["wait_p99"]), rw, us(res["frlock"][0]["wait_p99"]),
                      us(res["frlock"][top]["wait_p99"]), fr, us(res["seqlock"][0]["wait_p99"]),
                      us(res["seqlock"][top]["wait_p99"]), sq),
        "An rwlock writer must wait until no reader holds the lock, and busy readers on "
        "another CPU almost always hold it: the timer fires, and waits for them. frlock_t's "
        "and seqlock_t's writers (seqlock_t is a seqcount plus a spinlock that serializes "
        "the writers) take only the writers' lock: readers never hold anything, they check "
        "the sequence afterwards and retry, so the writer's wait stays at the scale of a "
        "lock with no reader at all. That wait is a microsecond or a few under TCG, and "
        "its p99, taken from a few hundred ticks, moves several-fold from run to run: "
        "the lab calls rwlock's grown at 2x, and frlock's unaffected while it stays 3x "
        "below rwlock's with the same readers.",
        "One reader makes no writer wait: it runs on CPU 0, where the timer fires, and "
        "its rwlock read side disables interrupts (read_lock_irqsave, as gettimeofday took "
        "xtime_lock in 2003), so the timer only ever interrupts it outside its read section. "
        "With 1 reader rwlock's p99 was %s." % us(res["rwlock"][1]["wait_p99"])
        if 1 in readers else "",
        "The timer's own latency (milliseconds under TCG) is QEMU's interrupt delivery, the "
        "same for every lock, and is kept out of the wait.",
    ]
    text = [t for t in text if t]
    if shows:
        text.append("The 2003 problem, measured: readers lock an rwlock writer out, and cannot "
                    "lock out frlock's.")
    else:
        text.append("This run does NOT show it clearly (rwlock's p99 grew %.1fx, wanted 2x or "
                    "more; with %d readers rwlock's p99 was %.1fx frlock's, wanted 3x or more): "
                    "a run this short has few samples and TCG's interrupt delivery is noisy; "
                    "run it again, or without QUICK." % (rw, top, fr_vs_rw))
    charts = [
        {"id": "wait99", "type": "bar", "title": "writer wait for the lock, p99 (us)", "ylog": True,
         "labels": ["%d readers" % r for r in readers], "ytitle": "us",
         "datasets": [{"label": lk, "data": [round(res[lk][r]["wait_p99"] / 1e3, 3) for r in readers]}
                      for lk in locks]},
        {"id": "wait50", "type": "bar", "title": "writer wait for the lock, p50 (us)", "ylog": True,
         "labels": ["%d readers" % r for r in readers], "ytitle": "us",
         "datasets": [{"label": lk, "data": [round(res[lk][r]["wait_p50"] / 1e3, 3) for r in readers]}
                      for lk in locks]},
    ]
    return {"lockout": {lk: {str(r): v for r, v in res[lk].items()} for lk in locks},
            "growth_p99": {"rwlock": rw, "frlock": fr, "seqlock": sq},
            "table": table, "shows": shows, "text": text, "charts": charts}


def read_instances(path):
    """labs/guest.sh's per-instance counts: "INSTANCE HITS" lines."""
    counts = {}
    with open(path) as f:
        for line in f:
            name, _, hits = line.rpartition(" ")
            if not name or not hits.strip().isdigit():
                raise LabError("%s: not an 'INSTANCE HITS' line: %r" % (path, line))
            counts[name] = counts.get(name, 0) + int(hits)
    return counts


def lab_write_window(d):
    adv_path = os.path.join(d, "advance.txt")
    try:
        adv = sorted(int(x) for x in open(adv_path).read().split())
    except (OSError, ValueError) as e:
        raise LabError("%s: no timekeeping_advance() durations (%s)" % (adv_path, e))
    if not adv:
        raise LabError("%s is empty" % adv_path)
    rows = bench_lines(os.path.join(d, "window.txt"))
    reps = sorted({r.get("rep") for r in rows})
    if not rows or None in reps:
        raise LabError("%s: want window lines, each with its rep=N" % d)
    locks = ("frlock", "seqcount")
    runs = []
    for rep in reps:
        win = benchreport.window([r for r in rows if r["rep"] == rep]).get("clocksource", {})
        holds = sorted(win)
        if len(holds) != 2 or any(set(win[h]) != set(locks) for h in holds):
            raise LabError("%s: run %s: want frlock and seqcount with two hold times, "
                           "writer off and on" % (d, rep))
        for lk in locks:
            for h in holds:
                f = win[h][lk]
                if f["lost_p50_ns"] is None or not f["lost_reads"]:
                    raise LabError("%s: run %s: %s, hold %d us: no read lost time with the "
                                   "writer on (or a module without lost_p50)" % (d, rep, lk, h))
                if f["lost_dropped"]:
                    raise LabError("%s: run %s: %s, hold %d us: %d losses had no room in the "
                                   "module's buffer" % (d, rep, lk, h, f["lost_dropped"]))
        runs.append(win)
    holds = sorted(runs[0])
    if any(sorted(w) != holds for w in runs):
        raise LabError("%s: the runs held the long section for different times" % d)
    short, long_ = holds
    # The loss is the least of the runs' medians: the host only ever adds
    # to a loss (a vCPU that waits for its core), so the least disturbed
    # run is the closest to the lock's own cost, for both sections alike.
    # The rest are medians over the runs, the writes summed.
    fig = {}
    for lk in locks:
        for h in holds:
            per = [w[h][lk] for w in runs]
            f = {k: statistics.median(x[k] for x in per)
                 for k in ("hold_p50", "retry_share", "retries_per_write",
                           "lost_per_write_ns", "ns_per_read_off")}
            f["lost_p50_ns"] = min(x["lost_p50_ns"] for x in per)
            f["writes"] = sum(x["writes"] for x in per)
            f["lost_p50_runs_ns"] = [x["lost_p50_ns"] for x in per]
            fig.setdefault(lk, {})[h] = f
    table = [["lock", "section", "held (p50)", "writes (%d runs)" % len(runs), "reads that retried",
              "clock reads wasted per write", "median loss of a read that lost time (least of the runs)",
              "mean reader time lost per write", "ns per read (no writer)"]]
    for lk in locks:
        for h in holds:
            f = fig[lk][h]
            table.append([lk, "copy only" if h == short else "%d us longer" % h,
                          us(f["hold_p50"]), n_(f["writes"]), pct(f["retry_share"]),
                          "%.2f" % f["retries_per_write"], us(f["lost_p50_ns"]),
                          us(f["lost_per_write_ns"]), "%.0f" % f["ns_per_read_off"]])
    grow = {lk: fig[lk][long_]["lost_p50_ns"] / max(fig[lk][short]["lost_p50_ns"], 1)
            for lk in locks}
    # What the long section adds to the loss of a read that meets it,
    # against what it adds to the section: such a reader waits for the part
    # of the section left, or runs it again, so its loss grows by about the
    # extra hold (0.9x of it on an idle host), between half of it and twice.
    # A host that runs the two vCPUs in turn on one core adds its own wait
    # to both sections' losses alike (53 to 58 us in every copy-only run of
    # one loaded make test, where the ratio fell to 1.5x while the long
    # section still added 1.1x its extra hold); a ratio cannot tell that
    # from the lock's cost, a difference can. A host that stalls the
    # vCPUs for milliseconds swamps both, and the run fails.
    added = {lk: fig[lk][long_]["lost_p50_ns"] - fig[lk][short]["lost_p50_ns"] for lk in locks}
    extra = {lk: fig[lk][long_]["hold_p50"] - fig[lk][short]["hold_p50"] for lk in locks}
    shows = all(0 < extra[lk] / 2 <= added[lk] <= 2 * extra[lk] for lk in locks)
    fr_s, fr_l = fig["frlock"][short], fig["frlock"][long_]
    sc_s, sc_l = fig["seqcount"][short], fig["seqcount"][long_]
    text = [
        "timekeeping_advance() took %s at p50 in this guest (%d ticks, %s to %s): the long "
        "section held %s, the short one %s, the copy alone." % (
            us(adv[len(adv) // 2]), len(adv), us(adv[0]), us(adv[-1]),
            us(fr_l["hold_p50"]), us(fr_s["hold_p50"])),
        "With frlock, a read that met a write lost %s at the median with the short section "
        "and %s with the long one (%.1fx); %.2f and %.2f clock reads were wasted per write. "
        "seqcount (6.1's timekeeping lock): %s and %s (%.1fx), %.2f and %.2f wasted clock "
        "reads." % (
            us(fr_s["lost_p50_ns"]), us(fr_l["lost_p50_ns"]), grow["frlock"],
            fr_s["retries_per_write"], fr_l["retries_per_write"],
            us(sc_s["lost_p50_ns"]), us(sc_l["lost_p50_ns"]), grow["seqcount"],
            sc_s["retries_per_write"], sc_l["retries_per_write"]),
        "The lab ran %d times, the order of the two sections swapped from one run to the "
        "next. The median loss of a read that met a write, in each run: %s (frlock, copy), "
        "%s (frlock, long), %s (seqcount, copy) and %s (seqcount, long). The figures above "
        "take the least of them: the host only ever adds to a loss (a vCPU that waits for "
        "a host core the other vCPU or another program holds loses that wait too), so the "
        "least disturbed run is the closest to the lock's own cost; the other figures are "
        "the median over the runs." % (
            len(runs), *("/".join(us(x) for x in f["lost_p50_runs_ns"])
                         for f in (fr_s, fr_l, sc_s, sc_l))),
        "Both locks make a reader that finds a write open wait for it before it reads, so "
        "a long section costs waiting, not retries: only the reads already under way when "
        "the write begins run again, about the same few per write whatever the section's "
        "length, while a reader that arrives during the section waits until it ends. "
        "Holding the section for the whole computation makes every such reader wait for "
        "the computation; the shadow timekeeper keeps the section to a copy.",
        "The median, not the mean: the mean loss per write (%s and %s with frlock) carries "
        "the few writes whose vCPU the host preempted inside the section, during which the "
        "reader waits milliseconds; that is the emulator's, not the lock's." % (
            us(fr_s["lost_per_write_ns"]), us(fr_l["lost_per_write_ns"])),
    ]
    measured = ("a read that met a write lost %s more at the median with the long section "
                "than with the copy alone, which the long section held %s longer (frlock), "
                "and %s more for %s longer (seqcount)" % (
                    us(added["frlock"]), us(extra["frlock"]), us(added["seqcount"]),
                    us(extra["seqcount"])))
    if shows:
        text.append("Measured: %s: about what the section's extra length costs a reader "
                    "that meets it, waiting for it or running it again. As a "
                    "ratio: %.1fx and %.1fx the copy's loss, which a busy host, adding its own "
                    "wait to both, shrinks." % (measured, grow["frlock"], grow["seqcount"]))
    else:
        text.append("These runs do NOT show it: %s; wanted between half and twice the "
                    "longer hold for both. A host that stalls the reader's vCPU for longer than "
                    "the section, around most writes, hides the lock's cost; run it again on an "
                    "idle host." % measured)
    labels = ["copy only", "%d us longer" % long_]
    charts = [
        {"id": "lost", "type": "bar", "title": "median loss of a read that met a write (us)",
         "ylog": True, "labels": labels, "ytitle": "us",
         "datasets": [{"label": lk, "data": [round(fig[lk][h]["lost_p50_ns"] / 1e3, 3)
                                              for h in holds]} for lk in locks]},
        {"id": "wasted", "type": "bar", "title": "clock reads wasted per write",
         "labels": labels,
         "datasets": [{"label": lk, "data": [round(fig[lk][h]["retries_per_write"], 3)
                                              for h in holds]} for lk in locks]},
    ]
    return {"window": {lk: {str(h): v for h, v in fig[lk].items()} for lk in locks},
            "advance_ns_p50": adv[len(adv) // 2], "holds_us": holds,
            "table": table, "shows": shows, "text": text, "charts": charts}


PATH_WRITERS = ("none", "rename-elsewhere", "rename")


def lab_path_walk(d):
    runs = {}
    for w in PATH_WRITERS:
        base = os.path.join(d, "paths-" + w)
        try:
            with open(base + ".json") as f:
                r = json.loads(f.read())
        except (OSError, ValueError) as e:
            raise LabError("%s.json: no path-load summary (%s)" % (base, e))
        for kind in ("retry", "wait"):
            r[kind] = read_instances("%s.%s" % (base, kind))
            # The events name a lock by address: those outside the kernel
            # image are "heap", and under path-load's renames those are the
            # dentries' d_seq (tests/guest/seqcount.sh checks that dcache
            # is their only writer).
            if "heap" in r[kind]:
                r[kind]["d_seq"] = r[kind].pop("heap") + r[kind].get("d_seq", 0)
        # Each lookup thread's time per lookup (stat or getcwd), in ns.
        r["ns_per_lookup"] = r["threads"] * 1e9 / r["lookups_per_s"] if r["lookups_per_s"] else 0
        runs[w] = r

    def per_k(r, kind, lock):
        return 1000.0 * r[kind].get(lock, 0) / max(r["lookups"], 1)
    table = [["writer", "lookups/s", "ns per lookup", "renames/s", "rename_lock retries",
              "d_seq retries", "rename_lock waits", "retries per 1000 lookups"]]
    for w in PATH_WRITERS:
        r = runs[w]
        table.append([w, n_(r["lookups_per_s"]), "%.0f" % r["ns_per_lookup"],
                      n_(r["writes_per_s"]), n_(r["retry"].get("rename_lock", 0)),
                      n_(r["retry"].get("d_seq", 0)), n_(r["wait"].get("rename_lock", 0)),
                      "%.2f" % (per_k(r, "retry", "rename_lock") + per_k(r, "retry", "d_seq"))])
    none, away, here = (runs[w] for w in PATH_WRITERS)
    d_here, d_away = here["retry"].get("d_seq", 0), away["retry"].get("d_seq", 0)
    rl_here, rl_away = here["retry"].get("rename_lock", 0), away["retry"].get("rename_lock", 0)
    shows = (rl_away > 0 and rl_here > 0 and d_here > 0 and d_away * 10 <= d_here and
             none["retry"].get("rename_lock", 0) * 10 <= rl_away)
    cost_here = here["ns_per_lookup"] - away["ns_per_lookup"]
    cost_away = away["ns_per_lookup"] - none["ns_per_lookup"]
    text = [
        "Renames in a directory no lookup walks made %s retries of rename_lock (%.2f per 1000 "
        "lookups) and %s of d_seq; renames of the looked-up files made %s of rename_lock and "
        "%s of d_seq (%.2f per 1000 lookups). With no writer: %s and %s." % (
            n_(rl_away), per_k(away, "retry", "rename_lock"), n_(d_away), n_(rl_here), n_(d_here),
            per_k(here, "retry", "d_seq"), n_(none["retry"].get("rename_lock", 0)),
            n_(none["retry"].get("d_seq", 0))),
        "rename_lock is one sequence lock for the whole system: every rename writes it, "
        "wherever it happens. Every lookup reads it when it starts (path_init) and waits "
        "while a rename is in its write section (%s waits with renames elsewhere, %s with "
        "renames here), and every getcwd() (d_path) checks it at the end, so renames "
        "anywhere make d_path retry and walk the path again. d_seq is "
        "one counter per dentry: a rename writes only the moved dentry's, so only lookups "
        "that pass through that very dentry fail their check. A failed check in RCU path "
        "walk does not loop: the lookup drops out of RCU mode and walks again taking "
        "references, which is slower." % (n_(away["wait"].get("rename_lock", 0)),
                                          n_(here["wait"].get("rename_lock", 0))),
        "What a lookup paid: %.0f ns with no writer, %.0f ns with renames elsewhere "
        "(%+.0f ns: the renaming thread shares the 2 vCPUs, and rename_lock's retries), "
        "%.0f ns with renames of the looked-up files (%+.0f ns more: the d_seq retries "
        "and the ref-walk they force, and %s lookups that found their file moved away)." % (
            none["ns_per_lookup"], away["ns_per_lookup"], cost_away, here["ns_per_lookup"],
            cost_here, n_(here["missed"])),
    ]
    if shows:
        text.append("The lesson, measured: the global rename_lock retries on every rename in "
                    "the system, the per-dentry d_seq only where the lookups and the renames "
                    "meet.")
    else:
        text.append("This run does NOT show it clearly: " + "; ".join(
            w for w, bad in (
                ("renames elsewhere made no rename_lock retry", rl_away == 0),
                ("renames of the looked-up files made no d_seq retry", d_here == 0),
                ("renames elsewhere made d_seq retries (%s, more than a tenth of the %s "
                 "with renames here)" % (n_(d_away), n_(d_here)), d_away * 10 > d_here),
                ("the run without a writer had rename_lock retries", none["retry"].get(
                    "rename_lock", 0) * 10 > rl_away)) if bad) + "; run it again.")
    charts = [
        {"id": "retries", "type": "bar", "title": "retries per 1000 lookups, by lock",
         "labels": list(PATH_WRITERS), "stacked": True,
         "datasets": [{"label": lock, "data": [round(per_k(runs[w], "retry", lock), 3)
                                                for w in PATH_WRITERS]}
                      for lock in ("rename_lock", "d_seq")]},
        {"id": "cost", "type": "bar", "title": "ns per lookup, per lookup thread",
         "labels": list(PATH_WRITERS), "ytitle": "ns",
         "datasets": [{"label": "ns per lookup", "data": [round(runs[w]["ns_per_lookup"])
                                                         for w in PATH_WRITERS]}]},
    ]
    return {"paths": {w: {k: v for k, v in r.items()} for w, r in runs.items()},
            "table": table, "shows": shows, "text": text, "charts": charts}


# --- who-pays: a prediction graded against the run's who-cost-whom table

# The mix (labs/lab runs it through host/frlock-run): three stressors
# whose locks differ, one instance each.
MIX = ["stress-ng", "--rename", "1", "--clock", "1", "--ramfs", "1"]
MIX_S = {"full": 8, "quick": 5}
SITE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*(\+0x[0-9a-f]+)?")


class BadPrediction(Exception):
    pass


def known_locks():
    """The locks frlockstat named in docs/workloads/'s recorded runs: the
    names a prediction may use."""
    names = set()
    try:
        for name, _, _ in workloads.ROWS:
            names.update(workloads.read(name).locks)
    except workloads.Bad as e:
        raise LabError("the recorded runs that name the locks: %s" % e)
    return names


def prediction(text):
    """'LOCK FUNCTION [TASK]' as {"lock", "writer", "task"}; BadPrediction
    (one line) when it is not one."""
    words = text.split()
    if not 2 <= len(words) <= 3:
        raise BadPrediction("a prediction is LOCK FUNCTION [TASK], not '%s'" % text.strip())
    lock, writer, task = words + [None] * (3 - len(words))
    known = known_locks()
    if lock not in known:
        raise BadPrediction("no lock '%s' in frlockstat's names; the locks it named in "
                            "docs/workloads/'s runs: %s" % (lock, ", ".join(sorted(known))))
    if not SITE.fullmatch(writer):
        raise BadPrediction("'%s' is not a kernel function (d_move, or a site d_move+0x4e)"
                            % writer)
    return {"lock": lock, "writer": writer, "task": task}


def culprits(v):
    """Every lock's writers by the read time they cost its readers, the
    costliest first: [(lock, task, site, {kind: lost reads}, ns, bound)]."""
    out = [(lock,) + w for lock in v.locks for w in workloads.writers(v, lock)]
    return sorted(out, key=lambda c: (-c[4], -sum(c[3].values()), c[:3]))


def grade(pred, top):
    """Which parts of the prediction the run's costliest writer bears out:
    the lock, the writer (its function, or the very site when one was
    given), the task (None when not predicted; a comm is 15 characters)."""
    lock, task, site = top[:3]
    w = pred["writer"]
    return {"lock": pred["lock"] == lock,
            "writer": w == site if "+" in w else w == view.func(site),
            "task": None if pred["task"] is None else pred["task"][:15] == task}


def lab_who_pays(d):
    path = os.path.join(d, "run-mix.ndjson")
    if not os.path.isfile(path):
        raise LabError("%s is missing: the run did not write it" % path)
    try:
        with open(os.path.join(d, "prediction.json")) as f:
            pred = json.load(f)
    except (OSError, ValueError) as e:
        raise LabError("%s/prediction.json: no prediction (%s)" % (d, e))
    try:
        v = workloads.view_of(path)
    except workloads.Bad as e:
        raise LabError(str(e))
    ranked = culprits(v)
    run = {"feed": os.path.basename(path),
           "skipped": v.skipped_line() if any(v.skipped().values()) else None}
    said = "lock %s, writer %s%s" % (pred["lock"], pred["writer"],
                                     ", task " + pred["task"] if pred["task"] else "")
    table = [["", "lock", "writer task", "writer site", "lost reads", "read time lost"]]
    for i, (lock, task, site, kinds, ns, b) in enumerate(ranked[:5]):
        table.append(["%d" % (i + 1), lock, task, site, workloads.lost_cell(kinds),
                      view.duration_rate(ns, b)])
    if not ranked:
        return {"prediction": pred, "graded": None, "runs": [run], "table": table,
                "shows": False, "charts": [],
                "text": ["You predicted %s. This run's who-cost-whom table is empty: no "
                         "reader lost a read to a writer frlockstat saw, so there is nothing "
                         "to grade; run it again." % said]}
    top = ranked[0]
    g = grade(pred, top)
    right = g["lock"] and g["writer"] and g["task"] is not False
    mark = {True: "right", False: "wrong", None: "not predicted"}
    text = [
        "You predicted %s. In this run the writer that cost readers the most read time was "
        "%s in task %s, on %s: %s. Lock %s, writer %s, task %s." % (
            said, top[2], top[1], top[0], table[1][5], mark[g["lock"]], mark[g["writer"]],
            mark[g["task"]]),
        "The ranking is by the read time each writer's sections cost their readers (who "
        "cost whom, summed over the readers): a wait is timed exactly, a retry only from "
        "its read's start to its check (the lower bound, marked ≥), so a lock whose "
        "readers retry can have cost more than its figure says. A lock written most often "
        "is not always the one that costs most: what counts is how many reads meet a "
        "write section, and how long each then loses.",
        "Your prediction is %s." % ("RIGHT" if right else "WRONG: see the table above"),
    ]
    charts = [{"id": "culprits", "type": "bar", "title": "read time lost per writer (ms; "
               "retries: at least)", "ytitle": "ms",
               "labels": ["%s %s" % (c[0], view.func(c[2])) for c in ranked[:5]],
               "datasets": [{"label": "read time lost (ms)",
                             "data": [round(c[4] / 1e6, 3) for c in ranked[:5]]}]}]
    return {"prediction": pred, "graded": dict(g, right=right),
            "top": {"lock": top[0], "task": top[1], "site": top[2], "ns": top[4],
                    "bound": top[5]},
            "runs": [run], "table": table, "shows": True, "text": text, "charts": charts}


ANALYSE = {"vdso-vs-syscall": lab_vdso, "writer-rate": lab_writer_rate,
           "lockout": lab_lockout, "reader-starvation": lab_starvation,
           "path-walk": lab_path_walk, "write-window": lab_write_window,
           "who-pays": lab_who_pays}


# --- output -------------------------------------------------------------------

def text_table(rows):
    w = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.rjust(w[i]) if i else c.ljust(w[i]) for i, c in enumerate(r))
            for r in rows]


def esc(s):
    return dash_report.escape(str(s))


CSS = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
.question { background: #eef4fb; border-left: 4px solid #3b78c2; padding: .6em 1em; }
.predict { font-style: italic; }
.verdict.no { background: #fdecea; border-left: 4px solid #c0392b; padding: .4em 1em; }
.verdict.yes { background: #eaf7ee; border-left: 4px solid #2e8b57; padding: .4em 1em; }
table { border-collapse: collapse; margin: .5em 0; font-variant-numeric: tabular-nums; }
td, th { border: 1px solid #ccc; padding: .2em .6em; text-align: right; }
td:first-child, th:first-child { text-align: left; }
.chart { position: relative; height: 340px; margin: 1em 0 2em; }
.small { color: #666; font-size: .9em; }
"""


def write_report(name, d, res, meta):
    lab = LABS[name]
    data = feed.dumps({"charts": res["charts"]})
    head = "".join("<th>%s</th>" % esc(c) for c in res["table"][0])
    body = "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % esc(c) for c in r) for r in res["table"][1:])
    charts = "".join('<h2>%s</h2><div class="chart"><canvas id="chart-%s"></canvas></div>'
                     % (esc(c["title"]), esc(c["id"])) for c in res["charts"])
    runs = ""
    if res.get("runs"):
        rl = res["runs"].values() if isinstance(res["runs"], dict) else res["runs"]
        runs = ("<h2>Each run</h2><p class=\"small\">Each run's own frlock report, drawn by "
                "dashboards/report from its feed, is beside this file: %s.</p>"
                % ", ".join("<code>%s</code>" % esc(r["feed"].replace(".ndjson", ".html")) for r in rl))
    page = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="%(csp)s">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>frlock lab %(n)d: %(name)s</title><link rel="icon" href="data:,">
<style>%(css)s</style></head><body>
<h1>frlock lab %(n)d: %(title)s <span class="small">(%(name)s)</span></h1>
<p class="question">%(question)s</p>
<p class="predict">%(predict)s</p>
<h2>What this run measured</h2>
<table><thead><tr>%(head)s</tr></thead><tbody>%(body)s</tbody></table>
<div class="verdict %(cls)s">%(text)s</div>
%(charts)s
%(runs)s
<p class="small">%(meta)s</p>
<script type="application/json" id="lab-data">%(data)s</script>
%(chartjs)s
%(labjs)s
</body></html>
""" % {"csp": dash_report.CSP, "css": CSS, "n": lab["n"], "name": esc(name), "title": esc(lab["title"]),
       "question": esc(lab["question"]), "predict": esc(lab["predict"]), "head": head,
       "body": body, "cls": "yes" if res["shows"] else "no",
       "text": "".join("<p>%s</p>" % esc(t) for t in res["text"]), "charts": charts,
       "runs": runs, "meta": esc(meta), "data": data,
       "chartjs": dash_report.inline_script(
           os.environ.get("FRLOCK_CHARTJS", dash_report.CHARTJS), "Chart.js"),
       "labjs": dash_report.inline_script(os.path.join(LABS_DIR, "js", "lab.js"), "labs/js/lab.js")}
    out = os.path.join(d, "report.html")
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(page)
    os.replace(out + ".tmp", out)
    return out


def analyse(name, d):
    res = ANALYSE[name](d)
    meta = ""
    try:
        meta = open(os.path.join(d, "lab.txt")).read().strip().replace("\n", "; ")
    except OSError:
        pass
    lab = LABS[name]
    print("lab %d, %s: the result" % (lab["n"], name))
    for line in text_table(res["table"]):
        print(line)
    print()
    for t in res["text"]:
        print(textwrap.fill(t, 78))
        print()
    runs = res.get("runs") or []
    for r in runs.values() if isinstance(runs, dict) else runs:
        if r.get("skipped"):
            print("lab %s: %s: %s" % (name, r["feed"], r["skipped"]))
    print("lab %s: %s" % (name, "the run shows what the lab teaches" if res["shows"]
                          else "the run does NOT show what the lab teaches (see above)"))
    with open(os.path.join(d, "result.json"), "w") as f:
        json.dump({"lab": name, "shows": res["shows"], "text": res["text"],
                   **{k: v for k, v in res.items() if k not in ("text", "charts", "table")}},
                  f, indent=1, default=str)
    return write_report(name, d, res, meta)


def parser():
    p = argparse.ArgumentParser(
        prog="host/lab-analyse", description="The teaching labs' questions and analyses (labs/lab runs "
        "them; labs/README.md).", epilog="Exit status: 0; 1 if a run's results cannot be "
        "analysed; 2 on bad usage or a folder that does not exist.")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="list | question NAME | "
                           "analyse NAME DIR")
    sub.add_parser("list", help="the labs, numbered")
    q = sub.add_parser("question", help="a lab's question and what to predict")
    q.add_argument("name", choices=ANALYSE, metavar="NAME")
    an = sub.add_parser("analyse", help="a lab's analysis of the results in DIR")
    an.add_argument("name", choices=ANALYSE, metavar="NAME")
    an.add_argument("dir", metavar="DIR")
    return p


def main(argv, out=None):
    p = parser()
    a = p.parse_args(argv)
    if a.cmd == "list":
        for name, lab in sorted(LABS.items(), key=lambda x: x[1]["n"]):
            print("  %d %-18s %s" % (lab["n"], name, lab["title"]), file=out or sys.stdout)
        return 0
    if a.cmd == "question":
        lab = LABS[a.name]
        print("lab %d, %s: %s\n" % (lab["n"], a.name, lab["title"]))
        print(textwrap.fill(lab["question"], 78))
        print()
        print(textwrap.fill(lab["predict"], 78))
        return 0
    if not os.path.isdir(a.dir):
        p.error("%s: no such folder" % a.dir)
    try:
        print(analyse(a.name, a.dir))
    except (LabError, dash_report.ReportError) as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    except OSError as e:
        print("%s: %s: %s" % (PROG, e.filename, e.strerror), file=sys.stderr)
        return 1
    return 0


