# SPDX-License-Identifier: GPL-2.0
"""Judge tests/guest/agreement.sh's raw outputs, on the host, with json:
frlockstat and the bpftrace tools of bpf/, attached together to the
KUnit suite's stress case, must report the same events, and the suite's
own counts.

usage: host/judge-agreement DIR   (DIR: the guest's /results/agreement)

DIR holds, per run (writers: frlockstat beside frlock-hold.bt; readers:
frlockstat beside frlock-retries.bt), RUN.fs (frlockstat -j -c -L LOCK),
RUN.bt (bpftrace -f json), RUN.kunit (the suite's results) and RUN.lock
(the lock's name). One ok/not ok line per comparison, with the numbers
compared; exit status 1 if any failed. Why two runs, and why hold times
are compared by their bounds and medians, not bucket by bucket: see
tests/guest/agreement.sh.
"""

import json
import os
import re
import sys

failed = 0


def check(ok, desc):
    global failed
    if not ok:
        failed += 1
    print("%s - agreement: %s" % ("ok" if ok else "not ok", desc), flush=True)


def records(path):
    """The JSON objects of an NDJSON file (blank lines, and lines that are
    not JSON, such as a tool's notes, are left out)."""
    out = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                r = json.loads(raw)
            except ValueError:
                continue
            if isinstance(r, dict):
                out.append(r)
    return out


def fs_stat(recs, lock):
    """frlockstat's last record of the lock (one: no interval was given)."""
    s = [r for r in recs if r.get("type") == "frlockstat" and r.get("lock") == lock]
    return s[-1] if s else {}


def fs_callers(recs, lock, kind):
    """{function: count} of frlockstat -c's sites of that kind."""
    out = {}
    for r in recs:
        if r.get("type") == "frlockstat_caller" and r.get("lock") == lock and r["kind"] == kind:
            f = r["caller"].split("+")[0]
            out[f] = out.get(f, 0) + r["count"]
    return out


def bt_map(recs, name):
    """The last print of a bpftrace map: {key: value}. The maps are totals
    and the probes are detached before the last print, so the last one is
    the whole run."""
    m = [r["data"][name] for r in recs if isinstance(r.get("data"), dict) and name in r["data"]]
    return m[-1] if m else {}


def key_lock(key):
    return key.split(",")[0].strip()


def keyed(m, lock):
    """The sum of a map's values whose key is the lock, or (lock, ...)."""
    return sum(v for k, v in m.items() if key_lock(k) == lock)


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
    text = open(path).read() if os.path.exists(path) else ""
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


def writers(d, lock):
    fs, bt = records(os.path.join(d, "writers.fs")), records(os.path.join(d, "writers.bt"))
    suite, per = kunit(os.path.join(d, "writers.kunit"))
    check(suite is not None, "writers: the KUnit stress case reported its counts")
    if suite is None:
        return
    st = fs_stat(fs, lock)
    fs_writes = st.get("writes", -1)
    bt_writes = keyed(bt_map(bt, "@writes"), lock)
    fs_hold = buckets([st.get("hold_ns", [])])
    bt_hold = buckets(v for k, v in bt_map(bt, "@hold_ns").items() if key_lock(k) == lock)
    fs_n, bt_n = total(fs_hold), total(bt_hold)
    first = keyed(bt_map(bt, "@seq_first"), lock)
    last = keyed(bt_map(bt, "@seq_last"), lock)
    w = suite["writes"]
    check(fs_writes == w > 0, "writers: frlockstat counts the suite's write sections "
          "(%d == %d)" % (fs_writes, w))
    check(bt_writes == fs_writes, "writers: frlock-hold.bt counts the same write_end events "
          "(%d == %d)" % (bt_writes, fs_writes))
    check(bt_n == fs_n == fs_writes, "writers: hold-time samples, frlock-hold.bt == frlockstat "
          "(%d == %d)" % (bt_n, fs_n))
    # The kernel numbers the sections of a lock from 1.
    check(first == 1 and last == w, "writers: frlock-hold.bt sampled sections 1 to %d "
          "(%d..%d)" % (w, first, last))
    # Per writer: frlockstat -c names the call site of each write_end,
    # frlock-hold.bt the function of each write_begin; both are in the
    # writer's function.
    fs_per = fs_callers(fs, lock, "write")
    bt_per = {}
    for k, h in bt_map(bt, "@hold_ns").items():
        if key_lock(k) == lock and "," in k:
            f = k.split(",", 1)[1].strip()
            bt_per[f] = bt_per.get(f, 0) + sum(b.get("count", 0) for b in h)
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


def readers(d, lock):
    fs, bt = records(os.path.join(d, "readers.fs")), records(os.path.join(d, "readers.bt"))
    suite, _ = kunit(os.path.join(d, "readers.kunit"))
    check(suite is not None, "readers: the KUnit stress case reported its counts")
    if suite is None:
        return
    st = fs_stat(fs, lock)
    retried, retries = st.get("retried_reads", -1), st.get("retries", -1)
    sites = sum(fs_callers(fs, lock, "read").values())
    bt_retried = keyed(bt_map(bt, "@retried_reads"), lock)
    fs_h = buckets([st.get("retries_per_read", [])])
    bt_h = buckets(v for k, v in bt_map(bt, "@retries").items() if key_lock(k) == lock)
    check(retries == suite["retries"] > 0, "readers: frlockstat counts the suite's retries "
          "(%d == %d)" % (retries, suite["retries"]))
    check(sites == retried, "readers: frlockstat -c's read call sites add up to its retried "
          "reads (%d == %d)" % (sites, retried))
    check(bt_retried == retried > 0, "readers: retried reads, frlock-retries.bt == frlockstat "
          "(%d == %d)" % (bt_retried, retried))
    show("frlockstat", fs_h, "frlock-retries.bt", bt_h)
    check(total(fs_h) == retried > 0 and fs_h == bt_h, "readers: retries-per-read histograms "
          "equal bucket by bucket (%d == %d reads, %d buckets)" % (total(fs_h), total(bt_h),
                                                                  len(fs_h)))
    check(st.get("writes", -1) == suite["writes"] > 0, "readers: frlockstat counts the suite's "
          "write sections (%d == %d)" % (st.get("writes", -1), suite["writes"]))


def main(argv):
    global failed
    failed = 0
    if len(argv) != 1:
        print("usage: host/judge-agreement DIR", file=sys.stderr)
        return 2
    d = argv[0]
    if not os.path.isdir(d):
        check(False, "the guest left its raw outputs in %s" % d)
        return 1
    lock = open(os.path.join(d, "lock")).read().strip() if os.path.exists(
        os.path.join(d, "lock")) else ""
    for run, judge in (("writers", writers), ("readers", readers)):
        if os.path.exists(os.path.join(d, run + ".fs")):
            judge(d, lock)
        else:
            check(False, "%s: the guest collected the tools' outputs (see the guest's lines)" % run)
    return 1 if failed else 0
