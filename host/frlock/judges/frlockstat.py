# SPDX-License-Identifier: GPL-2.0
"""Judge frlockstat's runs in the guest (tests/guest/frlockstat.sh), on
the host: its NDJSON read with json, its tables as a person reads them.

usage: host/judge-frlockstat [--modes] DIR   (DIR: the guest's /results/frlockstat)

DIR holds what each run printed (NAME.json for -j, NAME.txt for the
table), "rc" (NAME STATUS lines), jiffies_seq.addr, and for the join
against the benchmark module's writer join.hold_us, join.dmesg (its
result lines) and join.syms (its functions). One ok/not ok line per check,
with the figures; exit status 1 if any failed. --modes judges only the
first runs (tp_btf and raw_tp: "frlockstat.sh modes" left no others), as
make test-long's i386 guest runs them.
"""

import json
import os
import re

from frlock.judges import Checks, json_lines, parser, read

TK = "tk_core"
checks = Checks()
check, note, skip = checks.check, checks.note, checks.skip


class Dir:
    def __init__(self, d):
        self.d = d
        self.rc = {}
        for line in self.text("rc").splitlines():
            name, _, st = line.partition(" ")
            self.rc[name] = int(st) if st.strip().lstrip("-").isdigit() else None

    def text(self, name):
        return read(self.d, name) or ""

    def records(self, name):
        """Every line of NAME.json as JSON (None for a line that is not)."""
        return json_lines(self.d, name + ".json", keep_bad=True)


def stats(recs, lock=None):
    return [r for r in recs if isinstance(r, dict) and r.get("type") == "frlockstat"
            and (lock is None or r.get("lock") == lock)]


def callers(recs):
    return [r for r in recs if isinstance(r, dict) and r.get("type") == "frlockstat_caller"]


def row_pairs(recs):
    """(row, its frlockstat_pair records) per row record: -c -j prints a
    row's pairs just before the row."""
    pending = []
    for r in recs:
        if not isinstance(r, dict):
            continue
        if r.get("type") == "frlockstat_pair":
            pending.append(r)
        elif r.get("type") == "frlockstat":
            yield r, [p for p in pending if p.get("lock") == r.get("lock")]
            pending = []


def pair_drops(recs):
    """Pairs lost to a full or busy map, as the last drops record says."""
    last = [r for r in recs if isinstance(r, dict) and r.get("type") == "frlockstat_drops"]
    by = (last[-1].get("by_map") or {}).get("pairs", {}) if last else {}
    return sum(v for v in by.values() if isinstance(v, int))


def who_joins(mode, recs, lock=TK):
    """-c -j's who-cost-whom pairs: each joins (its writer site began
    writes of that lock in the same run: a caused or causedwait site
    record of that lock and site, of the pair's kind, and the lock has
    write records; a lock's begin and end may lie in two functions, as
    the benchmark module's do), and per row they add up to its joined retries and timed waits:
    never more (the pairs are read before the rows), fewer only by the
    pairs lost (a full map) and the events of the instant between the two
    reads (2 allowed). The run is one interval: its figures are totals.
    LOCK (the start of its name) must have pairs of both kinds."""
    sites = callers(recs)
    wrote = {r.get("lock") for r in sites if r.get("kind") == "write"}
    began = {(r.get("lock"), r.get("kind"), r.get("caller")) for r in sites}
    lost = pair_drops(recs)
    bad, seen, sums = [], 0, []
    for row, ps in row_pairs(recs):
        for p in ps:
            seen += 1
            caused = "caused" if p.get("kind") == "retry" else "causedwait"
            if not (p.get("lock") in wrote
                    and (p.get("lock"), caused, p.get("writer")) in began
                    and p.get("bound") is (p.get("kind") == "retry") and p.get("writer_comm")
                    and p.get("reader_comm") and p.get("v") == 2):
                bad.append(p)
        for kind, joined, ns in (("retry", "retries_joined", "retry_lost_lb_ns"),
                                 ("wait", "waits_joined", "wait_ns_sum")):
            got = [p for p in ps if p.get("kind") == kind]
            n, t = sum(p.get("count_total", 0) for p in got), sum(p.get("ns_total", 0) for p in got)
            want, want_ns = row.get(joined, 0), row.get(ns, 0)
            if n or want:
                sums.append("%s %s %d/%d" % (row.get("lock"), kind, n, want))
            if not (want - lost - 2 <= n <= want and t <= want_ns and (n < want or t == want_ns or not got)):
                bad.append({"lock": row.get("lock"), "kind": kind, "pairs": n, "joined": want,
                            "pairs_ns": t, "row_ns": want_ns, "pairs_lost": lost})
    for b in bad[:5]:
        note("does not join or add up: %s" % json.dumps(b)[:400])
    note("%s: pairs per row and kind (pairs/joined): %s" % (mode, ", ".join(sums)))
    mine = [p for _, ps in row_pairs(recs) for p in ps if str(p.get("lock", "")).startswith(lock)]
    check(seen > 0 and not bad and any(p.get("kind") == "retry" for p in mine)
          and any(p.get("kind") == "wait" for p in mine),
          "frlockstat (%s) -c -j: %d who-cost-whom pairs (%s retries and waits among them), each joined "
          "to a writer site that wrote its lock, adding up to each row's joined retries and timed waits"
          % (mode, seen, lock))


def fn(caller):
    return caller.split("+", 1)[0]


def table(text):
    """The rows of the first table in frlockstat's text output: the lines
    after its "LOCK ..." header up to the first blank line."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("LOCK "):
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(row)
            return line, rows
    return None, []


def lock_rows(rows):
    return [r for r in rows if " frlock " in r or " seqcount " in r]


def num(cell):
    """A cell as sort -g reads it: its leading number; none sorts last."""
    m = re.match(r"[-+]?\d+(\.\d*)?", cell)
    return float(m.group(0)) if m else float("-inf")


def modes(d):
    # How the runs counted sites (frlockstat.sh's modes.opt): -c, with every
    # site's record and who cost whom; -w, the busiest writer and reader
    # only (the i386 guest: bpf/README.md).
    opt = d.text("modes.opt").strip() or "-c"
    per_site = opt == "-c"
    no_c = "(not run: the runs counted sites with %s, not -c)" % opt
    for mode in ("tp_btf", "raw_tp"):
        recs = d.records(mode)
        tk = stats(recs, TK)
        if tk:
            note("%s: %s" % (mode, json.dumps(tk[0])[:600]))
        check(d.rc.get(mode) == 0, "frlockstat (%s) ran (exit %s)" % (mode, d.rc.get(mode)))
        check(bool(recs) and all(isinstance(r, dict) and str(r.get("type", "")).startswith("frlockstat")
                                 and r.get("v") == 2 for r in recs),
              "frlockstat (%s): every record is schema version 2" % mode)
        first = tk[0] if tk else {}
        check(any(r.get("writes", 0) > 0 and r.get("hold_ns") for r in tk),
              "frlockstat (%s) saw %s %s writes, with hold times" % (mode, first.get("writes", "no"), TK))
        # Over the run: the last record's running totals, read after
        # frlockstat detached and its programs ended. A wait is timed when
        # its write ends, which may be in the next interval, so one
        # interval's waits need not add up, nor a total read before that.
        total = tk[-1].get("total", {}) if tk else {}
        parts = [total.get(k) for k in ("waits_joined", "waits_bounded", "waits_unjoined", "waits_open")]
        check(any(r.get("retries", 0) > 0 and r.get("retries_joined", 0) > 0 for r in tk)
              and all(isinstance(x, int) for x in parts) and sum(parts) == total.get("waits"),
              "frlockstat (%s) saw %s %s retries, joined to their writes, and %s waits over the run, "
              "each timed (%s), bounded by its write's hold (%s), counted as without its write's "
              "record (%s: it began before the attach or its record made way) or open at the detach (%s)"
              % (mode, first.get("retries", "no"), TK, total.get("waits", "no"), *parts))
        sites = callers(recs)
        if per_site:
            check(any(r.get("kind") == "write" and r.get("caller", "").startswith("timekeeping_advance+")
                      for r in sites)
                  and any(r.get("kind") == "retry" and r.get("caller", "").startswith("ktime_get_real_ts64+")
                          for r in sites),
                  "frlockstat (%s) names writer and reader call sites" % mode)
        else:
            skip("frlockstat (%s) names writer and reader call sites %s" % (mode, no_c))
        # 1000 adjtimex calls a second, each opening a section in
        # do_adjtimex and one in timekeeping_advance, against the tick's
        # 250 in the latter.
        jq = stats(recs, "jiffies_seq")
        check(any(r.get("kind") == "frlock" and r.get("top_writer") == "timekeeping_advance"
                  and r.get("top_reader") == "ktime_get_real_ts64" for r in tk)
              and any(r.get("kind") == "seqcount" and r.get("naming") == "symbol" and r.get("class") is False
                      and r.get("top_writer") == "tick_do_update_jiffies64" for r in jq),
              "frlockstat (%s) -j: %s is kind frlock, top writer timekeeping_advance; the tick's jiffies_seq "
              "a static seqcount named by its symbol, top writer tick_do_update_jiffies64" % (mode, TK))
        if per_site:
            check(any(r.get("v") == 2 and r.get("lock") == "jiffies_seq" and r.get("lock_kind") == "seqcount"
                      and r.get("kind") == "write" and r.get("caller", "").startswith("tick_do_update_jiffies64+")
                      for r in sites),
                  "frlockstat (%s) -j -c: site records carry their lock's kind" % mode)
            who_joins(mode, recs)
        else:
            skip("frlockstat (%s) -j -c: site records and who cost whom %s" % (mode, no_c))
        pcts = [r["hold_ns_pct"] for r in tk if isinstance(r.get("hold_ns_pct"), dict)]
        check(bool(pcts) and all(p["p50"] <= p["p99"] <= p["max"] for p in pcts),
              "frlockstat (%s) reports the hold time's p50 <= p99 <= max" % mode)


def intervals(d):
    tk = stats(d.records("intervals"), TK)
    w = sum(r.get("writes", 0) for r in tk)
    r_ = sum(r.get("retries", 0) for r in tk)
    total = tk[-1].get("total", {}) if tk else {}
    t = "%s,%s" % (total.get("writes"), total.get("retries"))
    note("%d intervals: writes %d, retries %d; running totals (writes,retries) %s" % (len(tk), w, r_, t))
    check(len(tk) >= 3 and "%d,%d" % (w, r_) == t,
          "frlockstat -j 1: %d intervals whose writes and retries add up to the running totals (%d,%d == %s)"
          % (len(tk), w, r_, t))


def tables(d):
    f = d.text("filter.txt")
    note(f)
    rc = d.rc.get("filter")
    check(rc == 1, "frlockstat -L with a name no lock has exits 1 (exit %s)" % rc)
    check("(no lock activity on no_such_lock)" in f.splitlines(), "frlockstat -L filters out other locks")
    said = [line for line in f.splitlines()
            if re.match(r"frlockstat: no lock matches -L no_such_lock; seen so far: .*%s \(frlock\)" % TK, line)]
    check(len(said) == 1, "frlockstat -L with a name no lock has says so once, listing the locks seen "
          "(%s among them)" % TK)

    all_, sc, fr = d.text("all.txt"), d.text("seqcount.txt"), d.text("frlock.txt")
    note(all_)

    def has(text, pattern):
        return re.search(pattern, text, re.M) is not None
    check(has(all_, r"^%s +frlock " % TK) and has(all_, r"^jiffies_seq +seqcount "),
          "frlockstat's table has a %s frlock row and the tick's jiffies_seq seqcount row" % TK)
    hs, rs = table(sc)
    ha, ra = table(all_)
    width = max((len(x) for x in [hs or ""] + rs), default=0)
    wide = max((len(x) for x in [ha or ""] + ra), default=0)
    check(hs is not None and width <= 100 and wide > 100,
          "frlockstat's table fits 100 columns (%d; -w: wider, %d, with WRITER and READER)" % (width, wide))
    check(has(all_, r"^%s +frlock .* timekeeping_advance " % TK)
          and has(all_, r"^jiffies_seq +seqcount .* tick_do_update_jiffies64 "),
          "frlockstat -w names the busiest writers: timekeeping_advance for %s, tick_do_update_jiffies64 "
          "for jiffies_seq" % TK)
    keys = [(num(r.split()[6]), num(r.split()[2])) for r in ra if not r.startswith("(") and len(r.split()) > 6]
    order = all(keys[i] >= keys[i + 1] for i in range(len(keys) - 1))
    check(bool(keys) and order, "frlockstat's table is sorted by retries/s, then writes/s")
    if not order:
        note("\n".join(ra))
    top1 = d.text("top1.txt")
    note(top1)
    _, r1 = table(top1)
    check(len(lock_rows(r1)) == 1 and any(re.fullmatch(r"\([1-9][0-9]* more locks?: -n [0-9]* shows them\)", x)
                                          for x in r1),
          "frlockstat -n 1: one row, and a line saying how many more there are (%d locks in the full table)"
          % len(lock_rows(ra)))
    check(has(sc, r"^jiffies_seq +seqcount ") and " frlock " not in sc,
          "frlockstat -k seqcount shows seqcount rows only")
    check(has(fr, r"^%s +frlock " % TK) and " seqcount " not in fr, "frlockstat -k frlock shows frlock rows only")
    jf = d.text("jiffies.txt")
    note(jf)
    check(len(re.findall(r"^[a-z_.]* +seqcount ", jf, re.M)) == 1 and has(jf, r"^jiffies_seq +seqcount ")
          and has(jf, r"^  write +tick_do_update_jiffies64\+0x[0-9a-f]* +[a-z_][a-z0-9_.]*\+0x[0-9a-f]* "),
          "frlockstat -L jiffies_seq -C: one row, written by tick_do_update_jiffies64, the writer site's "
          "caller named")
    addr = d.text("jiffies_seq.addr").strip()
    ba = d.text("byaddr.txt")
    note(ba)
    check(len(lock_rows(table(ba)[1])) == 1 and has(ba, r"^jiffies_seq +seqcount "),
          "frlockstat -L %s (jiffies_seq's address): that one row, labelled jiffies_seq" % (addr or "?"))
    check("EXAMPLES" in d.text("help.txt"), "frlockstat -h shows examples")


def names(d):
    ds = stats(d.records("dseq"))
    if ds:
        note(json.dumps(ds[0])[:400])
    check(len(ds) == 1 and ds[0].get("lock") == "dentry.d_seq" and ds[0].get("kind") == "seqcount"
          and ds[0].get("naming") == "slab" and ds[0].get("class") is True and ds[0].get("writes", 0) >= 1,
          "frlockstat -j -L dentry.d_seq: one row for every dentry's d_seq, a slab class, written")
    # Two counters the kernel's call sites both spell "seq": each task's
    # fs_struct's (written by chdir: set_fs_pwd) and the hrtimer bases'
    # (per CPU, written when timers run). Series v3 named both "seq" in its
    # events, and frlockstat v1 showed them as one row; they are two rows
    # (an fs_struct is fs_struct.seq, also where SLUB merged its cache into
    # another: in the frlock guest fs_cache is merged into vmap_area with
    # five caches whose types all have a name, none a lock at its offset).
    seq = stats(d.records("seq"))
    for r in seq:
        note('"lock":"%s","kind":"%s","naming":"%s"' % (r.get("lock"), r.get("kind"), r.get("naming")))
    fs = next((r["lock"] for r in seq if r.get("naming") == "slab" and r.get("top_writer") == "set_fs_pwd"), None)
    hr = next((r["lock"] for r in seq if r.get("naming") == "percpu"
               and r.get("top_writer") == "__hrtimer_run_queues"), None)
    check(fs == "fs_struct.seq" and hr is not None
          and re.fullmatch(r"hrtimer_bases\.clock_base.*\.seq", hr) is not None,
          'two unrelated counters spelled "seq" are two rows: the fs_struct\'s (%s, a slab object) and an '
          "hrtimer base's (%s, per CPU)" % (fs or "none", hr or "none"))


def storm(d):
    """A rename storm: rename_lock's and d_seq's rows fill LOST, and -c
    names the writer whose sections cost their readers the most time."""
    st, sc = d.text("storm.txt"), d.text("storm-c.txt")
    for line in st.splitlines():
        if re.match(r"(LOCK|rename_lock|dentry\.d_seq) ", line):
            note(line)

    def lost_filled(lock):
        # LOST/s is the 9th column: filled (not "-", not 0).
        return any(len(w) > 8 and w[0] == lock and w[8] != "-" and not re.fullmatch(r"(≥)?0ns", w[8])
                   for w in (line.split() for line in st.splitlines()))
    for lock in ("rename_lock", "dentry.d_seq"):
        check(lost_filled(lock), "rename storm: frlockstat 2 1 shows time lost for %s" % lock)

    def costliest(lock):
        """The writer function whose sections cost LOCK's readers the most
        time (caused and causedwait, by TOTAL_NS)."""
        lines = sc.splitlines()
        cost = {}
        if lock + ":" in lines:
            for line in lines[lines.index(lock + ":") + 1:]:
                if not line.strip():
                    break
                w = line.split()
                if w[0] in ("caused", "causedwait") and w[-1].isdigit():
                    cost[fn(w[1])] = cost.get(fn(w[1]), 0) + int(w[-1])
                note(line)
        return max(cost, key=cost.get) if cost else None
    who = costliest("rename_lock")
    check(who == "d_move", "rename storm: -c names d_move as the writer that cost rename_lock's readers most (%s)"
          % (who or "none"))
    who = costliest("dentry.d_seq")
    check(who in ("__d_move", "d_move"),
          "rename storm: -c names __d_move or d_move as the writer that cost d_seq's readers most (%s)"
          % (who or "none"))
    lines = sc.splitlines()
    head = "rename_lock: who cost whom"
    at = next((i for i, x in enumerate(lines) if x.startswith(head)), None)
    pairs = []
    if at is not None:
        for line in lines[at:]:
            if not line.strip():
                break
            note(line)
            pairs.append(line)
    # KIND, the writer's task and site, the reader's, COUNT, LOST.
    rows = [x.split() for x in pairs[2:] if x.split()[:1] in (["retry"], ["wait"])]
    check(bool(rows) and any(fn(w[2]) == "d_move" for w in rows if len(w) > 2)
          and all(len(x) <= 79 for x in pairs),
          "rename storm: -c's who-cost-whom table for rename_lock names d_move's task as a writer, "
          "within 79 columns (%d pairs shown)" % len(rows))


def join(d):
    """The join against a writer whose site and hold time are known: the
    benchmark module's hard-irq writer holds bench_sc (a seqcount) HOLD us
    longer than its copy, every 4 ms, against a reader on the other CPU.
    Every wait ends with the write it waited for, so no wait is longer than
    its write's hold and the sum of waits is at most the sum of holds; each
    is joined to the module's writer site; each retry's bound (the
    colliding write's begin to the retry) lies within the reader's loss, so
    waits and bounds add up to no more than what the module's readers
    measured they lost (their read's start to its last pass; under TCG a
    reader whose vCPU stalls loses more than the hold, and says so)."""
    hold = int(d.text("join.hold_us").strip() or 0)
    dm = d.text("join.dmesg")
    note(dm)
    recs = d.records("join")
    sc = [r for r in stats(recs) if str(r.get("lock", "")).startswith("bench_sc")]
    last = sc[-1] if sc else {}
    if last:
        note(json.dumps(last)[:700])
    check(d.rc.get("bench") == 0, "join: the benchmark module ran its writer (exit %s)" % d.rc.get("bench"))
    check(re.fullmatch(r"bench_sc\+0x[0-9a-f]+", str(last.get("lock", ""))) is not None
          and last.get("kind") == "seqcount" and last.get("naming") == "symbol",
          "join: bench_sc is a row named by the module's symbol")

    def joined():
        g = {k: last.get(k) for k in ("writes", "hold_ns_sum", "waits", "waits_joined", "wait_ns_sum",
                                      "retries", "retries_joined", "retry_lost_lb_ns")}
        if any(not isinstance(v, int) for v in g.values()):
            note("fields missing: %s" % g)
            return False
        on = [line for line in dm.splitlines() if "writer=on " in line]
        m = re.search(r" lost_ns=(\d+) ", on[-1]) if on else None
        mod = int(m.group(1)) if m else None
        note("writes %(writes)d (hold sum %(hold_ns_sum)d ns), waits %(waits)d (%(waits_joined)d timed, sum "
             "%(wait_ns_sum)d ns), retries %(retries)d (%(retries_joined)d joined, bound sum "
             "%(retry_lost_lb_ns)d ns)" % g + "; the readers' own measure of their loss: %s ns" % mod)
        # udelay() under TCG: at least half what was asked, the check allows.
        if not (g["writes"] >= 200 and g["hold_ns_sum"] >= g["writes"] * hold * 500):
            note("writes or holds too few")
            return False
        # A wait whose write ended within the probe's dispatch is a bound, not a time.
        bounded = last.get("waits_bounded")
        if not (g["waits"] > 0 and isinstance(bounded, int) and g["waits_joined"] + bounded == g["waits"]):
            note("not every wait timed or bounded (%s bounded)" % bounded)
            return False
        if g["wait_ns_sum"] > g["hold_ns_sum"]:
            note("waits longer than the holds")
            return False
        if not (g["retries"] > 0 and g["retries_joined"] == g["retries"]):
            note("not every retry joined")
            return False
        if mod is None or g["wait_ns_sum"] + g["retry_lost_lb_ns"] > mod:
            note("the lower bound is above what the readers measured")
            return False
        wmax = (last.get("wait_ns_pct") or {}).get("max")
        hmax = (last.get("hold_ns_pct") or {}).get("max")
        note("longest wait below %s ns, longest hold below %s ns" % (wmax, hmax))
        return isinstance(wmax, int) and isinstance(hmax, int) and wmax <= hmax
    check(joined(), "join: every wait timed to its write's end (or bounded by its hold), none longer than the "
          "holds (%d us injected); "
          "every retry joined; waits and retry bounds below what the readers measured they lost" % hold)
    sites = sorted({fn(r.get("caller", "")) for r in callers(recs)
                    if str(r.get("lock", "")).startswith("bench_sc") and r.get("kind") in ("caused", "causedwait")}
                   | {fn(p.get("writer", "")) for _, ps in row_pairs(recs) for p in ps
                      if str(p.get("lock", "")).startswith("bench_sc")})
    syms = set(d.text("join.syms").split())
    note("joined to: %s" % " ".join(sites))
    check(bool(sites) and set(sites) <= syms,
          "join: every wait and retry is joined to a writer site in the benchmark module (-c's pairs too)")
    who_joins("join", recs, "bench_sc")


def main(argv):
    p = parser(__doc__, "host/judge-frlockstat")
    p.add_argument("--modes", action="store_true",
                   help="only the tp_btf and raw_tp runs (frlockstat.sh modes)")
    p.add_argument("dir", metavar="DIR", help="the guest's /results/frlockstat")
    a = p.parse_args(argv)
    argv = [a.dir]
    checks.failed = 0
    if not os.path.isfile(os.path.join(argv[0], "rc")):
        check(False, "frlockstat: the guest left its runs in %s" % argv[0])
        return 1
    d = Dir(argv[0])
    modes(d)
    if a.modes:
        return 1 if checks.failed else 0
    intervals(d)
    tables(d)
    names(d)
    storm(d)
    join(d)
    return 1 if checks.failed else 0
