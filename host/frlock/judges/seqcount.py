# SPDX-License-Identifier: GPL-2.0
"""Judge tests/guest/seqcount.sh's workloads on the host: frlockstat's
NDJSON (read with json) against ftrace's own hist triggers on the same
events.

usage: host/judge-seqcount DIR   (DIR: the guest's /results/seqcount)

DIR holds "mode" (frlock or stock-timekeeping, and the seconds each
workload ran), "workloads" (NAME STATUS lines) and per workload NAME.fs
(frlockstat -j -c), NAME.retry, NAME.write and NAME.wait (the hists of
seqcount_read_retry, _write_begin and _read_wait, per lock and caller),
NAME.load, NAME.timer_list.begin and .end (/proc/timer_list just before
the triggers start and just after they pause: jiffies and the monotonic
clock, for the tick); and plain.txt, `frlockstat 1 5` during a rename
storm; walk.fs (frlockstat -W -j), walk.bt (echild.bt's text: its count of the
path walks' -ECHILD returns), walk.load and walk.runs, for the path-walk
fallbacks of a rename storm.

frlockstat is attached first and stopped last, so that its window holds
the triggers' window. The workloads make the only retries of these locks
in between, so the retries must be equal; writes also come from elsewhere
(the tick, the shell), so frlockstat must count at least as many. One
ok/not ok line per check; exit status 1 if any failed.
"""

import json
import re

from frlock.judges import Checks, json_lines, parser, read

checks = Checks()
check, note = checks.check, checks.note


# The functions that write a dentry's d_seq: fs/dcache.c's __d_move,
# ___d_drop, __d_instantiate, __d_add and dentry_unlink_inode, or the
# d_*/dentry_* functions they are inlined into, GCC's split parts too
# (__d_drop.part.0).
DCACHE_WRITERS = re.compile(r"_*(d|dentry)_[a-z_]*(\.[a-z]*\.[0-9]*)?$|dput$|shrink_dentry_list$")
# { lock: [ffffffff82009500] rename_lock , caller: [ffffffff8120852d] d_move+0x4e/0x90 } hitcount: 251
HIST_LINE = re.compile(r"^\{ lock: \[([0-9a-f]+)\] ([^,]*), caller: \[[0-9a-f]+\] *([^ +]*)\S* *\} hitcount: *(\d+)")


class Hist:
    """A hist trigger's output, keyed by lock and caller: a lock in the
    kernel image by its symbol, every other one as "heap"."""

    def __init__(self, text):
        self.dropped = not re.search(r"^    Dropped: 0$", text, re.M)
        self.rows = []      # (address, instance, caller, hits)
        for line in text.splitlines():
            m = HIST_LINE.match(line)
            if not m:
                continue
            sym = re.sub(r"\+0x[0-9a-f]*/0x[0-9a-f]*$", "", m.group(2).strip())
            inst = sym if sym and not sym.startswith("0x") else "heap"
            self.rows.append((m.group(1), inst, m.group(3), int(m.group(4))))

    def count(self, inst):
        """The hits of one instance, -1 if the hist dropped entries."""
        return -1 if self.dropped else sum(n for _, i, _, n in self.rows if i == inst)

    def callers(self, inst, addrs=None):
        out = {}
        for a, i, c, n in self.rows:
            if i == inst and (addrs is None or a in addrs):
                out[c] = out.get(c, 0) + n
        return out

    def by_address(self, inst):
        """{address: {caller: hits}} for one instance."""
        out = {}
        for a, i, c, n in self.rows:
            if i == inst:
                out.setdefault(a, {})
                out[a][c] = out[a].get(c, 0) + n
        return out


class Workload:
    def __init__(self, d, name):
        self.name = name
        self.retry, self.write = Hist(read(d, name + ".retry") or ""), Hist(read(d, name + ".write") or "")
        self.load = read(d, name + ".load") or ""
        self.recs = json_lines(d, name + ".fs")

    def row(self, lock):
        """frlockstat's final object for the lock (no interval: one object
        per instance, the run's totals)."""
        rows = [r for r in self.recs if r.get("type") == "frlockstat" and r.get("lock") == lock]
        return rows[-1] if rows else {}

    def heap_retries(self):
        """The heap's retried locks by their writers in the write hist:
        {"dentry": {addr: retries}, "other": ..., "mixed": ..., "unwritten":
        ...}. A dentry's d_seq is written by dcache only; the heap also
        holds per-CPU hrtimer bases, whose hrtimer_active() readers may
        retry during any workload."""
        writers = self.write.by_address("heap")
        out = {"dentry": {}, "other": {}, "mixed": {}, "unwritten": {}}
        for a, callers in self.retry.by_address("heap").items():
            dcache = [bool(DCACHE_WRITERS.match(f)) for f in writers.get(a, {})]
            kind = ("unwritten" if not dcache else "dentry" if all(dcache)
                    else "other" if not any(dcache) else "mixed")
            out[kind][a] = sum(callers.values())
        return out

    def missed_retries(self):
        m = [r for r in self.recs if r.get("type") == "frlockstat_missed"]
        return (m[-1].get("by_event") or {}).get("seqcount_read_retry", 0) if m else 0


def agree(w, inst, row=None, nozero=False, ambient=False):
    """frlockstat's retries of inst (its row ROW, if frlockstat names it
    otherwise: every dentry's d_seq is dentry.d_seq, by its slab cache's
    type) equal the hist triggers' count but for the retry events it
    reported missed, and are more than 0 (unless nozero); its writes are at
    least the triggers' count."""
    n = w.name
    h_retries = w.retry.count(inst)
    h_writes = w.write.count(inst)
    if inst == "heap":
        # The heap holds other seqcounts than the dentries' (per-CPU hrtimer
        # bases, inodes, ...): its d_seq writes are dcache's, its d_seq
        # retries those of the locks no other code writes.
        h_writes = sum(c for f, c in w.write.callers("heap").items() if DCACHE_WRITERS.match(f))
        if h_retries >= 0:
            heap = w.heap_retries()
            h_retries = sum(heap["dentry"].values()) + sum(heap["unwritten"].values())
    r = w.row(row or inst)
    f_retries, f_writes = r.get("retries", 0), r.get("writes", 0)
    note("%s: %s: retries ftrace=%d frlockstat=%d, writes ftrace=%d frlockstat=%d"
         % (n, inst, h_retries, f_retries, h_writes, f_writes))
    if not nozero:
        check(h_retries > 0, "%s: %s retried (%d retries counted by ftrace's hist trigger)" % (n, inst, h_retries))
    # A retry in an interrupt that lands while frlockstat's retry program
    # runs in the task it interrupted is not run (the kernel's recursion
    # guard): frlockstat counts those misses and says so, for every lock.
    missed = w.missed_retries()
    if ambient:
        # The kernel's own readers retry this lock too (the timer interrupt
        # reads tk_core), also in frlockstat's wider window, so it may count
        # more; it must still have lost none that ftrace counted.
        check(h_retries >= 0 and f_retries + missed >= h_retries,
              "%s: frlockstat saw every retry of %s that ftrace counted (%d + %d missed >= %d)"
              % (n, inst, f_retries, missed, h_retries))
    else:
        check(0 <= f_retries <= h_retries <= f_retries + missed,
              "%s: frlockstat reports %s's retries as ftrace counts them (%d, %d; %d missed retry events reported)"
              % (n, inst, f_retries, h_retries, missed))
    # Writes also come from outside the workload (the tick, the shell's own
    # files), and frlockstat's window holds the triggers': it must have
    # seen every write they counted.
    check(f_writes >= h_writes > 0, "%s: frlockstat saw every write of %s that ftrace counted (%d >= %d)"
          % (n, inst, f_writes, h_writes))


def path_load_ran(w):
    last = None
    for line in w.load.splitlines():
        try:
            last = json.loads(line)
        except ValueError:
            continue
    check(isinstance(last, dict) and last.get("write_errors") == 0,
          "%s: path-load ran (%s)" % (w.name, (w.load.strip().splitlines() or ["no output"])[-1]))


def rename(d):
    w = Workload(d, "rename")
    # seqcount.sh runs the storm again, twice as long, until ftrace counted
    # retries of rename_lock and of a dentry (RENAME_RUNS at most): the
    # checks below judge its last run.
    runs = [ln.split() for ln in (read(d, "rename.runs") or "").splitlines() if ln.strip()]
    note("rename: the storm ran %d of at most %s times (s: rename_lock, heap retries): %s" % (
        len(runs), (read(d, "rename.bound") or "?").strip(),
        "; ".join("%s s: %s, %s" % tuple(r[:3]) for r in runs if len(r) >= 3) or "none"))
    plain_runs = [ln.split() for ln in (read(d, "plain.runs") or "").splitlines() if ln.strip()]
    note("rename: frlockstat 1 N ran %d times (N, both locks retried): %s" % (
        len(plain_runs), "; ".join(" ".join(r) for r in plain_runs) or "none"))
    path_load_ran(w)
    agree(w, "rename_lock")
    # The storm's heap retries are the dentries' d_seq: locks written by
    # dcache only. No retried lock is written both by dcache and by other
    # code (the per-CPU hrtimer bases may retry too, under their own
    # writer, and frlockstat names them apart).
    heap = w.heap_retries()
    for kind in ("dentry", "other", "mixed", "unwritten"):
        if heap[kind]:
            writers = w.write.callers("heap", set(heap[kind]))
            top = sorted(writers.items(), key=lambda x: -x[1])[:4]
            note("retried heap locks, %s: %d locks, %d retries; writers: %s"
                 % (kind, len(heap[kind]), sum(heap[kind].values()),
                    ", ".join("%s %d" % x for x in top) or "none in the write hist"))
    dentry = sum(heap["dentry"].values())
    check(dentry > 0 and not heap["mixed"],
          "rename: the heap's retries are dentries' d_seq, locks written by dcache only (%d retries; %d locks written by dcache and others)"
          % (dentry, len(heap["mixed"])))
    agree(w, "heap", "dentry.d_seq")
    # Who caused the retries: every rename_lock write is d_move()'s, so
    # every rename_lock retry that frlockstat joined to its write names
    # d_move.
    caused = {}
    for r in w.recs:
        if r.get("type") == "frlockstat_caller" and r.get("lock") == "rename_lock" and r.get("kind") == "caused":
            f = r.get("caller", "").split("+", 1)[0]
            caused[f] = caused.get(f, 0) + r.get("count_total", 0)
    for f, c in caused.items():
        note("caused rename_lock retries: %s %d" % (f, c))
    joined = w.row("rename_lock").get("retries_joined", 0)
    check(joined > 0 and set(caused) == {"d_move"} and sum(caused.values()) == joined,
          "rename: frlockstat joined rename_lock's retries to their writes (%d joined), all to d_move" % joined)
    # The plain command: `frlockstat 1 5` during a rename storm lists
    # rename_lock and the dentries' d_seq, each with retries in some
    # interval (RETRY/s is the 7th column of the table).
    plain = read(d, "plain.txt") or ""
    rows = [line.split() for line in plain.splitlines() if re.match(r"(LOCK|rename_lock|dentry\.d_seq) ", line)]
    note("\n".join(" ".join(x) for x in rows[:12]))

    def retried_in_some(lock):
        for x in rows:
            try:
                if x[0] == lock and float(x[6]) > 0:
                    return True
            except (IndexError, ValueError):
                pass
        return False
    check(retried_in_some("rename_lock") and retried_in_some("dentry.d_seq"),
          "rename: frlockstat 1 5 lists rename_lock and dentry.d_seq, each with retries in some interval")


WALK_FNS = ("path_lookupat", "path_openat", "path_parentat")


def walk(d):
    """frlockstat -W during a rename storm (walk.fs, its one print at the
    end: the run's totals) against echild.bt's count in the same run
    (walk.bt: per function, the returns of -ECHILD of calls made with
    LOOKUP_RCU). bpftrace's window lies inside frlockstat's and the storm
    inside bpftrace's; only the storm renames, so no walk falls back
    outside it: the counts are equal, per function. frlockstat may miss a
    fallback only when the kernel skipped one of its walk programs
    (recursion, reported per program in frlockstat_missed), and then by
    at most that many."""
    runs = [ln.split() for ln in (read(d, "walk.runs") or "").splitlines() if ln.strip()]
    note("walk: the storm ran %d times (s: fallbacks echild.bt counted): %s"
         % (len(runs), "; ".join("%s s: %s" % tuple(r[:2]) for r in runs if len(r) >= 2) or "none"))
    if not check(runs, "walk: frlockstat -W and echild.bt ran a rename storm (walk.runs)"):
        return
    w = Workload(d, "walk")
    path_load_ran(w)
    totals = [r for r in w.recs if r.get("type") == "frlockstat_walk"]
    if not check(totals, "walk: frlockstat -W printed its frlockstat_walk record"):
        return
    by_fn = totals[-1].get("by_function") or {}
    counted = {m.group(1): int(m.group(2)) for m in re.finditer(
        r"^@echild\[(\w+)\]: (\d+)$", read(d, "walk.bt") or "", re.M)}
    missed = 0
    for r in w.recs:
        if r.get("type") == "frlockstat_missed":
            missed = sum(n for e, n in (r.get("by_event") or {}).items()
                         if e.split("/", 1)[-1] in WALK_FNS + ("try_to_unlazy", "try_to_unlazy_next"))
    for fn in WALK_FNS:
        causes = by_fn.get(fn) or {}
        mine, theirs = sum(causes.values()), counted.get(fn, 0)
        note("walk: %s: frlockstat %d (%s), echild.bt %d" % (
            fn, mine, ", ".join("%s %d" % c for c in sorted(causes.items())), theirs))
        check(mine <= theirs <= mine + missed,
              "walk: frlockstat -W counts %s's fallbacks as echild.bt's kretprobe counts its "
              "-ECHILD returns under LOOKUP_RCU (%d, %d; %d walk program runs missed)"
              % (fn, mine, theirs, missed))
    rows = [r for r in w.recs if r.get("type") == "frlockstat" and r.get("walk_fallbacks")]
    for r in rows:
        pct = r.get("walk_redo_ns_pct") or {}
        note("walk: %s: %d fallbacks, %d redos timed, %d ns in all, p50 <%s p99 <%s ns"
             % (r["lock"], r["walk_fallbacks"], r.get("walk_redos", 0), r.get("walk_redo_ns_sum", 0),
                pct.get("p50"), pct.get("p99")))
    charged = sum(r["walk_fallbacks"] for r in rows)
    by_lock = sum((by_fn.get(fn) or {}).get("lock", 0) for fn in WALK_FNS)
    check(charged == by_lock, "walk: the fallbacks charged to locks add up to those whose cause "
          "is a lock (%d, %d)" % (charged, by_lock))
    vfs = sum(r["walk_fallbacks"] for r in rows if r["lock"] in ("rename_lock", "dentry.d_seq"))
    check(vfs > 0, "walk: in a rename storm, frlockstat -W charged path-walk fallbacks to "
          "rename_lock or dentry.d_seq (%d)" % vfs)
    # The storm ended before frlockstat stopped: every redo it began has
    # ended, and each was timed (a note lost, cause "unseen", has none).
    unseen = sum((by_fn.get(fn) or {}).get("unseen", 0) for fn in WALK_FNS)
    redos = sum(r.get("walk_redos", 0) for r in rows) + totals[-1].get("nolock_redos", 0)
    total = totals[-1].get("fallbacks", 0)
    check(redos == total - unseen, "walk: every fallback's ref-walk redo was timed (%d redos, "
          "%d fallbacks, %d unseen)" % (redos, total, unseen))


def mount(d):
    w = Workload(d, "mount")
    path_load_ran(w)
    agree(w, "mount_lock")


HZ = 250      # CONFIG_HZ_250 in kernel/guest.config


def timer_list(text):
    """(jiffies, monotonic ns) from a /proc/timer_list: its "now at N
    nsecs" and its first "jiffies: N"; None when either is missing."""
    now = re.search(r"^now at (\d+) nsecs$", text or "", re.M)
    jif = re.search(r"^jiffies: (\d+)$", text or "", re.M)
    return (int(jif.group(1)), int(now.group(1))) if now and jif else None


def tick(d):
    """jiffies_seq's one reader on 64-bit is a CPU going idle
    (tick_nohz_next_event(), NO_HZ_IDLE), seldom in a write section, so
    its retries are counted and none asked for. Its write sections are
    the tick's, but not one a jiffy: a tick that comes late (its vCPU not
    run by a busy host) advances jiffies by every tick missed, in one
    section. So the sections are counted against the jiffies they advanced,
    and jiffies against the guest's monotonic clock, both read from
    /proc/timer_list just outside the triggers' window."""
    w = Workload(d, "tick")
    agree(w, "jiffies_seq", nozero=True)
    begin, end = (timer_list(read(d, "tick.timer_list." + x)) for x in ("begin", "end"))
    if not check(begin is not None and end is not None,
                 "tick: /proc/timer_list read around the window (jiffies and the monotonic clock)"):
        return
    jiffies, secs = end[0] - begin[0], (end[1] - begin[1]) / 1e9
    writes = w.write.count("jiffies_seq")
    rate = jiffies / secs if secs > 0 else 0
    note("tick: %d write sections of jiffies_seq advanced jiffies by %d in %.3f s of the guest's "
         "clock (%.0f sections/s; %.0f%% of the ticks had a section of their own)"
         % (writes, jiffies, secs, writes / secs if secs > 0 else 0, 100 * writes / max(jiffies, 1)))
    check(0.9 * HZ <= rate <= 1.1 * HZ, "tick: jiffies advanced about HZ=%d times a second of the "
          "guest's monotonic clock (%d in %.3f s: %.1f/s)" % (HZ, jiffies, secs, rate))
    check(0 < writes <= jiffies, "tick: jiffies_seq is written at most once a jiffy, each section "
          "advancing jiffies (%d write sections <= %d jiffies)" % (writes, jiffies))


def gtod(d):
    agree(Workload(d, "gtod"), "tk_core", ambient=True)


def main(argv):
    p = parser(__doc__, "host/judge-seqcount")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/seqcount")
    d = p.parse_args(argv).dir
    checks.failed = 0
    mode = (read(d, "mode") or "").split()
    if len(mode) != 2:
        check(False, "seqcount workloads: the guest left its runs in %s" % d)
        return 1
    ran = dict(line.split() for line in (read(d, "workloads") or "").splitlines() if len(line.split()) == 2)
    want = ["rename", "mount", "tick"] + (["gtod"] if mode[0] == "stock-timekeeping" else [])
    for w in want:
        if w not in ran:
            check(False, "%s: the workload ran (not in %s/workloads)" % (w, d))
            continue
        if w not in ("rename", "mount"):
            check(ran[w] == "0", "%s: the workload ran (exit %s)" % (w, ran[w]))
        {"rename": lambda: rename(d), "mount": lambda: mount(d), "tick": lambda: tick(d),
         "gtod": lambda: gtod(d)}[w]()
    walk(d)
    return 1 if checks.failed else 0
