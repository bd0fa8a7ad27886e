# SPDX-License-Identifier: GPL-2.0
"""Judge tests/guest/agreement.sh's raw outputs, on the host, with json:
frlockstat and the bpftrace tools of bpf/, attached together to the
KUnit suite's stress case, must report the same events, and the suite's
own counts.

usage: host/judge-agreement DIR   (DIR: the guest's /results/agreement)

DIR holds, per run (writers: frlockstat beside frlock-hold.bt; readers:
frlockstat beside frlock-retries.bt), RUN.fs (frlockstat -j -c -k frlock),
RUN.bt (bpftrace -f json) and RUN.kunit (the suite's results), and
readers.runs and readers.bound: the readers runs made until one had a
wait. One ok/not ok line per comparison, with the numbers compared; exit
status 1 if any failed. Why two runs, why the readers run may run again,
and why hold times are compared by their bounds and medians, not bucket
by bucket: see tests/guest/agreement.sh.
"""

import os
import re

from frlock.judges import Checks, json_lines, parser, read

checks = Checks("agreement: ")
check = checks.check


# The stress case's writers and reader: its lock lives in a kmalloc'd
# object, which frlockstat names by its cache and first writer and the
# bpftrace tools, which name static locks only, call "": the functions
# tell it apart in both.
STRESS_WRITERS = {"frlock_stress_timer", "frlock_stress_soft_timer", "frlock_stress_writer"}
STRESS_READER = "frlock_stress_reader"


def fs_callers(recs, lock, kind):
    """{function: count} of frlockstat -c's sites of that kind (write,
    retry, wait) for the lock; the whole run's counts."""
    out = {}
    for r in recs:
        if r.get("type") == "frlockstat_caller" and r.get("lock") == lock and r.get("kind") == kind:
            f = r["caller"].split("+")[0]
            out[f] = out.get(f, 0) + r.get("count_total", r["count"])
    return out


def fs_stress_lock(recs):
    """The name of frlockstat's row of the stress lock: the frlock row
    written by the stress case's writers and no one else; None unless
    exactly one."""
    names = {r["lock"] for r in recs if r.get("type") == "frlockstat_caller"
             and r.get("lock_kind") == "frlock" and r.get("kind") == "write"}
    writers = {n: set(fs_callers(recs, n, "write")) for n in sorted(names)}
    hits = [n for n, w in writers.items() if w and w <= STRESS_WRITERS]
    return hits[0] if len(hits) == 1 else None


def fs_stat(recs, lock):
    """frlockstat's last record of the lock (one: no interval was given)."""
    s = [r for r in recs if r.get("type") == "frlockstat" and r.get("lock") == lock]
    return s[-1] if s else {}


def bt_map(recs, name):
    """The last print of a bpftrace map: {key: value}. The maps are totals
    and the probes are detached before the last print, so the last one is
    the whole run."""
    m = [r["data"][name] for r in recs if isinstance(r.get("data"), dict) and name in r["data"]]
    return m[-1] if m else {}


def bt_by_function(m, functions):
    """{function: value} of a map keyed [lock, function] for the unnamed
    lock ("") and those functions."""
    out = {}
    for k, v in m.items():
        lock, _, f = k.partition(",")
        if lock.strip() == "" and f.strip() in functions:
            out[f.strip()] = v
    return out


def buckets(hists):
    """Log2 histograms summed bucket by bucket: {min: [max, count]}, the
    filled buckets only (bpftrace prints the empty ones between)."""
    out = {}
    for h in hists:
        for b in h:
            if b.get("count") and "min" in b:
                out.setdefault(b["min"], [b["max"], 0])[1] += b["count"]
    return out


def total(h):
    return sum(c for _, c in h.values())


def median_log2(h):
    n, seen = total(h), 0
    for lo in sorted(h):
        seen += h[lo][1]
        if 2 * seen >= n:
            return max(lo, 1).bit_length() - 1
    return -1


def bounds_bad(h):
    """Buckets whose [min, max] is not bpftrace's log2 bucket."""
    return [lo for lo, (hi, _) in h.items()
            if hi != (lo if lo < 2 else 2 * lo - 1) or (lo >= 2 and lo & (lo - 1))]


def kunit(path):
    text = ""
    if os.path.exists(path):
        with open(path) as f:
            text = f.read()
    m = re.search(r"reads=(\d+) retries=(\d+) torn=(\d+) writes=(\d+)", text)
    suite = dict(zip(("reads", "retries", "torn", "writes"), map(int, m.groups()))) if m else None
    names = {"hardirq": "frlock_stress_timer", "softirq": "frlock_stress_soft_timer",
             "task": "frlock_stress_writer"}
    per = {names.get(w, w): int(n) for w, n in re.findall(r"writer=([a-z]+) writes=(\d+)", text)}
    return suite, per


def show(a_name, a, b_name, b):
    for lo in sorted(set(a) | set(b)):
        hi = (a.get(lo) or b.get(lo))[0]
        x, y = (a.get(lo) or [0, 0])[1], (b.get(lo) or [0, 0])[1]
        print("#   [%d, %d]: %s %d, %s %d%s" % (lo, hi, a_name, x, b_name, y,
                                               "" if x == y else "  <- differs"))


def inputs(d, run):
    """RUN's frlockstat and bpftrace records, the suite's counts and per
    writer, and frlockstat's row of the stress lock; None if a part is
    missing (and said so)."""
    fs, bt = json_lines(d, run + ".fs"), json_lines(d, run + ".bt")
    suite, per = kunit(os.path.join(d, run + ".kunit"))
    check(suite is not None, "%s: the KUnit stress case reported its counts" % run)
    lock = fs_stress_lock(fs)
    check(lock is not None, "%s: frlockstat has one frlock row written by the stress case's "
          "writers only (%s)" % (run, lock))
    return None if suite is None or lock is None else (fs, bt, suite, per, lock)


def writers(d):
    got = inputs(d, "writers")
    if got is None:
        return
    fs, bt, suite, per, lock = got
    st = fs_stat(fs, lock)
    fs_writes = st.get("writes", -1)
    fs_hold = buckets([st.get("hold_ns", [])])
    bt_hists = bt_by_function(bt_map(bt, "@hold_ns"), STRESS_WRITERS)
    bt_hold = buckets(bt_hists.values())
    fs_n, bt_n = total(fs_hold), total(bt_hold)
    w = suite["writes"]
    check(fs_writes == w > 0, "writers: frlockstat counts the suite's write sections "
          "(%d == %d)" % (fs_writes, w))
    check(bt_n == fs_n == fs_writes, "writers: hold-time samples, frlock-hold.bt == frlockstat "
          "== its writes (%d == %d == %d)" % (bt_n, fs_n, fs_writes))
    # Per writer: frlockstat -c names the call site of each write section,
    # frlock-hold.bt the function of each write_begin: both are in the
    # writer's function.
    fs_per = fs_callers(fs, lock, "write")
    bt_per = {f: sum(b.get("count", 0) for b in h) for f, h in bt_hists.items()}
    check(fs_per == bt_per and {"frlock_stress_timer", "frlock_stress_writer"} <= set(fs_per),
          "writers: write sections per writer agree (frlockstat -c: %s; frlock-hold.bt: %s)"
          % (fs_per, bt_per))
    if per:
        check(per == fs_per, "writers: write sections per writer as the suite counts them "
              "(%s)" % per)
    show("frlockstat", fs_hold, "frlock-hold.bt", bt_hold)
    bad = bounds_bad(fs_hold) + bounds_bad(bt_hold)
    check(not bad and fs_n > 0, "writers: hold-time buckets have bpftrace's bounds in both "
          "tools (%d and %d buckets, %d bad)" % (len(fs_hold), len(bt_hold), len(bad)))
    m_fs, m_bt = median_log2(fs_hold), median_log2(bt_hold)
    check(abs(m_fs - m_bt) <= 1 and fs_n > 0, "writers: median hold-time buckets at most one "
          "apart (frlockstat 2^%d ns, frlock-hold.bt 2^%d ns; see agreement.sh)" % (m_fs, m_bt))


def reader_runs(d):
    """The readers runs agreement.sh made, as the waits check names them:
    it runs again, the stress case twice as long, until ftrace's hist
    trigger counted a wait of the stress reader, up to a bound (a wait
    needs both vCPUs running at once, which a busy host seldom grants).
    readers.runs: the stress case's ms and ftrace's count, a line a run."""
    runs = [line.split() for line in (read(d, "readers.runs") or "").splitlines() if line.strip()]
    bound = (read(d, "readers.bound") or "?").strip()
    if not runs:
        return "the guest listed no readers run"
    what = "run %d of at most %s, its stress case %s ms, ftrace's hist trigger counted %s" % (
        len(runs), bound, runs[-1][0], runs[-1][1])
    if len(runs) > 1:
        what += "; the runs before it saw no wait in %s ms" % ", ".join(r[0] for r in runs[:-1])
    return what


def readers(d):
    got = inputs(d, "readers")
    if got is None:
        return
    fs, bt, suite, _, lock = got
    st = fs_stat(fs, lock)
    retries, waits = st.get("retries", -1), st.get("waits", -1)
    fs_sites = fs_callers(fs, lock, "retry")
    bt_retries = bt_by_function(bt_map(bt, "@retries"), {STRESS_READER}).get(STRESS_READER, 0)
    bt_waits = bt_by_function(bt_map(bt, "@waits"), {STRESS_READER}).get(STRESS_READER, 0)
    check(retries == suite["retries"] > 0, "readers: frlockstat counts the suite's retries "
          "(%d == %d)" % (retries, suite["retries"]))
    check(fs_sites == {STRESS_READER: retries}, "readers: frlockstat -c puts every retry at the "
          "suite's reader (%s, %d retries)" % (fs_sites, retries))
    check(bt_retries == retries > 0, "readers: retries, frlock-retries.bt == frlockstat "
          "(%d == %d)" % (bt_retries, retries))
    check(bt_waits == waits > 0, "readers: waits for an open section, frlock-retries.bt == "
          "frlockstat (%d == %d; %s)" % (bt_waits, waits, reader_runs(d)))
    check(st.get("writes", -1) == suite["writes"] > 0, "readers: frlockstat counts the suite's "
          "write sections (%d == %d)" % (st.get("writes", -1), suite["writes"]))


def main(argv):
    p = parser(__doc__, "host/judge-agreement")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/agreement")
    d = p.parse_args(argv).dir
    checks.failed = 0
    if not os.path.isdir(d):
        check(False, "the guest left its raw outputs in %s" % d)
        return 1
    for run, judge in (("writers", writers), ("readers", readers)):
        if os.path.exists(os.path.join(d, run + ".fs")):
            judge(d)
        else:
            check(False, "%s: the guest collected the tools' outputs (see the guest's lines)" % run)
    return 1 if checks.failed else 0
