# SPDX-License-Identifier: GPL-2.0
"""Judge the trace text the guest's event checks recorded, on the host.

usage: host/judge-events DIR NAME...   (DIR: the guest's /results/events)

DIR holds the recordings NAME..., each as NAME.txt (the text) and
NAME.meta ("KEY VALUE" lines: tk_core's and rename_lock's addresses from
the guest's /proc/kallsyms, the events the tracer lost):
  ftrace      tests/guest/frlock-kernel.sh: ftrace's trace file, tk_core
              under gettimeofday(2) load, the tick and adjtimex writing;
  trace-cmd   tests/guest/abi.sh: `trace-cmd report` of all eight events
              under gettimeofday, rename and KUnit loads;
  perf        tests/guest/perf.sh: `perf script` of the same.
One ok/not ok line per check, with the figures, and a "not ok" for a
recording that is missing; exit status 1 if any failed, 2 for an unknown
NAME.
"""

import os

from frlock.judges import Checks, parser
from frlock.judges import eventtext as et

checks = Checks()
check = checks.check


def info(prefix, text):
    checks.note("\n".join("%s: %s" % (prefix, line) for line in text.splitlines()))


def load(d, name):
    """(lines, meta) of one recording, or None when DIR has none."""
    txt = os.path.join(d, name + ".txt")
    if not os.path.exists(txt):
        return None
    with open(txt, errors="replace") as f:
        lines = f.read().splitlines()
    meta = {}
    try:
        with open(os.path.join(d, name + ".meta")) as f:
            for line in f:
                k, _, v = line.strip().partition(" ")
                meta[k] = v.strip()
    except FileNotFoundError:
        pass
    return lines, meta


def addr(meta, sym):
    return meta.get(sym, "").lower().rjust(16, "0")


def rename_storm(meta):
    """How long ev_load's rename storm ran, from the meta's rename_* lines
    (tests/guest/events.sh): its first seconds beside the gettimeofday
    load, then rounds alone until ftrace counted a rename_lock retry, at
    most rename_rounds_max. Says so when the storm hit its bound with no
    retry counted, or when the guest reported no rounds."""
    try:
        first, rounds, secs, bound = (int(meta["rename_" + k]) for k in
                                      ("first_s", "rounds", "round_s", "rounds_max"))
    except (KeyError, ValueError):
        return "the guest reported no rename storm rounds"
    counted = meta.get("rename_retries_counted", "none")
    text = ("the storm ran %d s, then %d of at most %d rounds of %d s until ftrace counted a "
            "rename_lock retry; counted: %s" % (first, rounds, bound, secs, counted))
    if counted == "0":
        text += ("; the bound was hit: no getcwd() overlapped a rename in %d s"
                 % (first + bound * secs))
    return text


def counts_checks(tool, recs, named_callers=False):
    """Each of the eight events is there, every record with its fields."""
    for system in et.SYSTEMS:
        for ev in et.EVENTS:
            event = "%s_%s" % (system, ev)
            mine = [r for r in recs if r.event == event]
            bad = sum(1 for r in mine if not et.well_formed(r))
            extra = ""
            if named_callers:
                # perf script names a caller from /proc/kallsyms as it is
                # when it runs: the KUnit modules, unloaded by then, stay
                # addresses.
                named = sum(1 for r in mine if r.function and not r.function.startswith("0x"))
                extra = "; callers named %d, the rest the KUnit modules'" % named
            name = "%s:%s" % (system, event) if tool == "perf script" else event
            check(len(mine) > 0 and bad == 0,
                  "%s: %s with lock, seq and caller (%d events, %d without%s)" % (tool, name, len(mine), bad, extra))


def judge_ftrace(lines, meta):
    recs = et.parse(lines)
    tk = addr(meta, "tk_core")
    lost = int(meta.get("lost", "-1"))
    print("  trace: %d frlock events, ring buffer overruns: %d" % (len(recs), lost))
    for r in recs[:8]:
        print("  trace: %s" % r.line.strip())
    per_lock = {}
    for r in recs:
        per_lock[r.lock] = per_lock.get(r.lock, 0) + 1
    for lock, n in sorted(per_lock.items()):
        print("  events per lock: %d %s" % (n, lock))

    def count(event, fn):
        return sum(1 for r in recs if r.lock == tk and r.event == event and r.function == fn)
    n = count("frlock_write_begin", "timekeeping_advance")
    check(n > 0, "tick writes tk_core (write_begin from timekeeping_advance: %d)" % n)
    n = count("frlock_write_begin", "do_adjtimex")
    check(n > 0, "adjtimex writes tk_core (write_begin from do_adjtimex: %d)" % n)
    n = count("frlock_read_retry", "ktime_get_real_ts64")
    check(n > 0, "gettimeofday readers retry on tk_core (read_retry from ktime_get_real_ts64: %d)" % n)
    n = sum(1 for r in recs if r.lock != tk)
    check(n == 0, "every frlock event is tk_core's (%d of other locks)" % n)
    summary, notes, ok = et.join(recs)
    info("join", "\n".join([summary] + notes))
    check(ok and lost == 0,
          "every write_begin has its write_end, every retry its write_begin, every wait its write_end, "
          "by (lock, seq); at most 4 reads at the trace's edges, ring buffer lost nothing (%s; overruns %d)"
          % (summary, lost))
    f = dict(kv.split("=") for kv in summary.split())
    check(int(f["paired"]) > 0 and int(f["joined"]) > 0,
          "the trace held write sections, retries and waits to join (begins %s, retries %s, waits %s)"
          % (f["begins"], f["retries"], f["waits"]))
    for (w, r), n in et.writers_of_retries(recs).most_common():
        print("  retries by writer <- reader: %d %s <- %s" % (n, w, r))


def judge_trace_cmd(lines, meta):
    tool = "trace-cmd text"
    lost = int(meta.get("lost", "-1"))
    unparsed = sum(1 for line in lines if "FAILED TO PARSE" in line)
    print("  report: %d lines, %d unparsed, %d events lost by the ring buffer" % (len(lines), unparsed, lost))
    recs = et.parse(lines)
    for event in ("frlock_read_retry", "seqcount_read_retry", "seqcount_read_wait"):
        first = next((r for r in recs if r.event == event), None)
        if first:
            print("  report: %s" % first.line)
    check(unparsed == 0 and lines, "trace-cmd report parsed every event (%d lines, %d unparsed)"
          % (len(lines), unparsed))
    counts_checks(tool, recs)
    for system in et.SYSTEMS:
        summary, notes, ok = et.join([r for r in recs if r.system == system])
        info("%s join" % system, "\n".join([summary] + notes))
        check(ok and lost == 0,
              "%s, %s: every retry joins its write_begin and every wait its write_end on (lock, seq), "
              "begin with end, at most 4 reads at the edges; nothing lost (%s; lost %d)"
              % (tool, system, summary, lost))
    tk, rl = addr(meta, "tk_core"), addr(meta, "rename_lock")
    for event, lock, what in (("frlock_read_retry", tk, "tk_core's retries"),
                              ("seqcount_read_retry", rl, "rename_lock's retries"),
                              ("seqcount_read_retry", "heap", "the dentries' d_seq retries (locks in the heap)")):
        n, j, writers = et.joined_reads(recs, event, lock)
        by = " ".join("%s:%d" % wn for wn in writers.most_common())
        storm = "; " + rename_storm(meta) if lock == rl else ""
        check(n > 0 and j >= n - 4, "%s: %s joined to their writes (%d of %d; by writer: %s%s)"
              % (tool, what, j, n, by, storm))
    # One join as it reads: a retry of rename_lock and the write_begin with
    # its (lock, seq), in trace-cmd's own words.
    retry = next((r for r in recs if r.event == "seqcount_read_retry" and r.lock == rl), None)
    if retry:
        for r in recs:
            if r.lock == rl and r.seq == retry.seq and r.event in ("seqcount_write_begin", "seqcount_read_retry"):
                print("  joined in the text: %s" % r.line.strip())
    for event, lock, what in (("seqcount_read_wait", rl, "rename_lock's waits"),
                              ("frlock_read_wait", tk, "tk_core's waits")):
        n, j, _ = et.joined_reads(recs, event, lock)
        print("  %s: %d of %d joined to the write_end that ended them" % (what, j, n))


def judge_perf(lines, meta):
    tool = "perf script"
    lost = int(meta.get("lost", "-1"))
    print("  script: %d lines, %d LOST events (perf report --stats)" % (len(lines), lost))
    recs = et.parse(lines)
    for line in lines[:3]:
        print("  script: %s" % line)
    counts_checks(tool, recs, named_callers=True)
    tk, rl = addr(meta, "tk_core"), addr(meta, "rename_lock")
    n = sum(1 for r in recs if r.event == "frlock_read_retry" and r.lock == tk
            and r.function == "ktime_get_real_ts64")
    check(n > 0, "%s: gettimeofday's retries on tk_core (%d from ktime_get_real_ts64)" % (tool, n))
    n = sum(1 for r in recs if r.event == "seqcount_read_retry" and r.lock == rl)
    check(n > 0, "%s: rename_lock retried under the renames (%d; %s)" % (tool, n, rename_storm(meta)))
    if lost != 0:
        check(False, "%s: the joins need every event, and perf lost %d" % (tool, lost))
        return
    for system in et.SYSTEMS:
        summary, notes, ok = et.join([r for r in recs if r.system == system])
        info("%s join" % system, "\n".join([summary] + notes))
        check(ok, "%s, %s: retries and waits join their writes on (lock, seq), begin with end (%s)"
              % (tool, system, summary))


JUDGES = (("ftrace", judge_ftrace), ("trace-cmd", judge_trace_cmd), ("perf", judge_perf))



def main(argv):
    judges = dict(JUDGES)
    p = parser(__doc__, "host/judge-events")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/events")
    p.add_argument("names", metavar="NAME", nargs="+", choices=list(judges))
    a = p.parse_args(argv)
    argv = [a.dir] + a.names
    checks.failed = 0
    for name in argv[1:]:
        got = load(argv[0], name)
        if got is None:
            check(False, "%s: the guest left its recording in %s (%s.txt)" % (name, argv[0], name))
            continue
        judges[name](*got)
    return 1 if checks.failed else 0
