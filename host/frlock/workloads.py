# SPDX-License-Identifier: GPL-2.0
"""docs/workloads.md's table, made from the recorded runs in docs/workloads/.

usage: host/workloads-table                 write the table into docs/workloads.md
       host/workloads-table --check         exit 1 if docs/workloads.md's table is not
                                            what the recorded runs make
       host/workloads-table --record NAME DIR
                                            keep frlock-run's results in DIR as row
                                            NAME's recording (NAME.ndjson, NAME.txt)

ROWS names the rows: each one's recording, the lock the row is about, and
whether make test runs it again ("test") or only make test-long ("long";
host/frlock/tests/guest_workloads.py). A recording is the run's feed as
frlock-run wrote it (NAME.ndjson) and its final tables as frlock-run
printed them (NAME.txt, after the date, the kernel and the command). Every
cell of the table is computed here from the feed through the host's one
view (view.py), and the distinct locks' line under the table too; the
table between the markers in docs/workloads.md is this module's output
and nothing else (test_workloads runs --check). A row recorded with
frlock-run --walk 1 (frlockstat -W) also shows, per lock, the path walks
that fell back to ref-walk after its retries; make test runs it again so.

Exit status: 0; 1 when --check finds the table out of date or a recording
is bad (one line naming it); 2 on bad usage.
"""

import argparse
import os
import re
import shlex
import shutil
import sys

from . import TOP, feed, view

DOC = os.path.join(TOP, "docs", "workloads.md")
RECORDS = os.path.join(TOP, "docs", "workloads")
BEGIN = "<!-- the table: host/workloads-table writes it from docs/workloads/*.ndjson -->"
END = "<!-- end of the table -->"
TIERS = {"test": "make test", "long": "make test-long"}

# (recording, the lock the row is about, which make target runs it again)
ROWS = (
    ("rename", "rename_lock", "test"),
    ("ramfs-sysinfo", "mount_lock", "test"),
    ("clock", "tk_core", "test"),
    ("umount", "mount_lock", "long"),
    ("rename-procfs", "rename_lock", "long"),
    ("dir-rename-getdent", "rename_lock", "long"),
    ("nanosleep", "hrtimer_bases.clock_base[0].seq", "long"),
    ("timer", "tk_core", "long"),
    ("vdso", "tk_core", "long"),
    ("exit-group", "tk_core", "long"),
    ("sock", "tk_core", "long"),
    ("chdir", "tk_core", "long"),
    ("cyclic", "tk_core", "long"),
    ("hackbench", "tk_core", "long"),
    ("cyclictest", "tk_core", "long"),
    ("cyclictest-realtime", "hrtimer_bases.clock_base[1].seq", "long"),
    ("rename-procfs-30s", "rename_lock", "long"),
    ("fio-randrw", "tk_core", "long"),
    ("svsematest", "tk_core", "long"),
    ("timerfd", "tk_core", "long"),
    ("psi-switch", "tk_core", "long"),
    ("psi-procfs", "tk_core", "long"),
)


class Bad(Exception):
    pass


def view_of(path):
    """The view of a whole feed file, ended (without the server's
    per-interval snapshots, which a table needs none of)."""
    v = view.View()
    try:
        with open(path, "rb") as f:
            for raw in f:
                v.add_line(raw.rstrip(b"\n"))
    except OSError as e:
        raise Bad("%s: %s" % (path, e.strerror))
    v.end()
    return v


def read(name):
    """The view of row NAME's recorded feed, ended, refused unless it is
    a whole frlock-run feed of a workload that the view read every line of."""
    path = os.path.join(RECORDS, name + ".ndjson")
    v = view_of(path)
    if not v.feed_end or v.workload is None or not v.workload["argv"]:
        raise Bad("%s: not a complete frlock-run feed of a workload" % path)
    bad = v.skipped()
    if any(bad.values()):
        raise Bad("%s: skipped lines (%s)" % (path, bad))
    return v


def command(v):
    """The workload's command as a user types it: the program's name, not
    the host path frlock-run found it at."""
    argv = v.workload["argv"]
    return shlex.join([os.path.basename(argv[0])] + argv[1:])


def held(v):
    """The locks whose readers retried or waited, in the view's order
    (retries, then writes), with their cells: retries/s, waits/s and, from
    a recording with frlockstat -W, the path walks that fell back after a
    retry of the lock, where there were any (fallbacks/s, their ref-walk
    redo's p50)."""
    cols = v.lock_columns()
    out = []
    for r in v.lock_rows():
        lk = v.locks[r["lock"]]
        if lk.sums["retries"] + lk.sums["waits"]:
            want = ("retries/s", "waits/s") + (
                ("fallbacks/s", "redo p50") if lk.walk_fallbacks else ())
            out.append((r["lock"], {c: r["cells"][cols.index(c)] for c in want}))
    return out


def writers(v, lock):
    """The lock's writers by the read time they cost (who cost whom,
    summed over readers), most first: [(task, site, {kind: lost reads},
    ns, bound)]."""
    by = {}
    for (lk, kind, wcomm, writer, _, _), (n, ns, b) in v.pairs.items():
        if lk == lock:
            w = by.setdefault((wcomm, writer), [{}, 0, False])
            w[0][kind] = w[0].get(kind, 0) + n
            w[1] += ns
            w[2] = w[2] or b
    return sorted(((t, s, k, ns, b) for (t, s), (k, ns, b) in by.items()),
                  key=lambda w: (-w[3], -sum(w[2].values()), w[0], w[1]))


KINDS = {"retry": ("retry", "retries"), "wait": ("wait", "waits")}


def lost_cell(kinds):
    """{kind: lost reads} as "2 retries, 94 waits"."""
    return ", ".join("%s %s" % (view.count(kinds[k]), KINDS[k][kinds[k] != 1])
                     for k in KINDS if k in kinds)


def writer_cell(w):
    task, site, kinds, ns, b = w
    return "`%s` `%s`: %s, %s" % (task, site, lost_cell(kinds), view.duration_rate(ns, b))


def unjoined(path):
    """The who-cost-whom records of a feed whose writer site began no write
    section of their lock in that run (the lock's "caused" or "causedwait"
    call sites name the begin's site), and the (lock, writer site, kind)
    with more lost reads in pairs than those sites count: [what is wrong],
    empty when every pair joins; and the pair records read."""
    caused, paired, wrong, n = {}, {}, [], 0
    with open(path, "rb") as f:
        recs = [rec for what, rec, _ in (feed.classify(raw.rstrip(b"\n")) for raw in f)
                if what == "record"]
    for c in recs:
        if c["type"] == "frlockstat_caller" and c["kind"] in ("caused", "causedwait"):
            k = (c["lock"], c["caller"], "retry" if c["kind"] == "caused" else "wait")
            caused[k] = caused.get(k, 0) + c["count"]
    for pr in recs:
        if pr["type"] != "frlockstat_pair":
            continue
        n += 1
        k = (pr["lock"], pr["writer"], pr["kind"])
        if k not in caused:
            wrong.append("a pair whose writer site wrote no section of its lock: %s" % pr)
        paired[k] = paired.get(k, 0) + pr["count"]
    wrong += ["%s: %d lost reads in pairs, %d caused" % (k, c, caused[k])
              for k, c in sorted(paired.items()) if k in caused and c > caused[k]]
    return wrong, n


def rates_cell(c):
    """A lock's rates as "(retries/s, waits/s)", or with -W's fallbacks
    "(retries/s, waits/s; 3.1 fell back, redo p50 <64K)"."""
    out = "%s, %s" % (c["retries/s"], c["waits/s"])
    if "fallbacks/s" in c:
        out += "; %s fell back, redo p50 %s" % (c["fallbacks/s"], c["redo p50"])
    return "(%s)" % out


def cells(v, name, lock, tier):
    """Row NAME's cells from its recording's view V, and the locks whose
    readers retried or waited in it."""
    locks = held(v)
    if lock not in [lk for lk, _ in locks]:
        raise Bad("%s: the row's lock %s neither retried nor waited in its recording"
                  % (name, lock))
    parts = []
    for lk, c in locks:
        top = writers(v, lk)
        parts.append("`%s` %s%s" % (lk, rates_cell(c),
                                     ": " + writer_cell(top[0]) if top else ""))
    return ["`%s`" % command(v) + (" (`-W`)" if v.with_walk else ""), "`%s`" % lock,
            "<br>".join(parts), "[%s](workloads/%s.txt)" % (name, name), TIERS[tier]], \
        [lk for lk, _ in locks]


HEAD = ("| workload | lock | locks whose readers retried or waited (retries/s, waits/s; "
        "with `-W`, where any did, the path walks that fell back to ref-walk after a retry, "
        "per second, and their redo's p50 in ns): "
        "their top writer (task, site), its lost reads and the read time they cost | "
        "run | run again by |\n|---|---|---|---|---|")


def table():
    """The table's text, between the markers: the rows, the distinct
    locks held back across them, and the locks written in these runs whose
    readers no run held back (with the run that wrote each most)."""
    lines, seen, written = [HEAD], [], {}
    for name, lock, tier in ROWS:
        v = read(name)
        row, locks = cells(v, name, lock, tier)
        lines.append("| " + " | ".join(row) + " |")
        seen += [lk for lk in locks if lk not in seen]
        at = v.lock_columns().index("writes/s")
        for r in v.lock_rows():
            n = v.locks[r["lock"]].sums["writes"]
            if n and n / v.span() > written.get(r["lock"], (0,))[0]:
                written[r["lock"]] = (n / v.span(), r["cells"][at], name)
    quiet = sorted(lk for lk in written if lk not in seen)
    lines += ["", "%d distinct locks whose readers retried or waited across the table: %s."
              % (len(seen), ", ".join("`%s`" % lk for lk in sorted(seen))),
              "", "Written in these runs, but no reader retried or waited in any: %s." % (
                  "; ".join("`%s` (at most %s writes/s, in [%s](workloads/%s.txt))" % (
                      lk, written[lk][1], written[lk][2], written[lk][2]) for lk in quiet)
                  if quiet else "none")]
    return "\n".join(lines)


def rewrite(text, new):
    """docs/workloads.md's text with the table between the markers replaced."""
    m = re.search(re.escape(BEGIN) + r"\n(.*?)" + re.escape(END), text, re.S)
    if not m:
        raise Bad("%s: no table markers (%s ... %s)" % (DOC, BEGIN, END))
    return text[:m.start(1)] + new + "\n" + text[m.end(1):]


def record(name, res):
    """Keep frlock-run's results folder RES as row NAME's recording: its
    feed, and its header (run.txt: date, kernel, settings, command), the
    kernel's own version line (console.log) and its final tables
    (output.txt, from the workload's lines on) as NAME.txt."""
    if not re.fullmatch(r"[a-z0-9-]+", name):
        raise Bad("%s: a recording's name is lower-case letters, digits and -" % name)
    try:
        with open(os.path.join(res, "run.txt")) as f:
            head = f.read()
        with open(os.path.join(res, "console.log"), errors="replace") as f:
            version = next((ln.split("] ", 1)[-1].strip() for ln in f
                            if "Linux version" in ln), "not in console.log")
        with open(os.path.join(res, "output.txt")) as f:
            out = f.read()
    except OSError as e:
        raise Bad("%s: %s" % (e.filename, e.strerror))
    if os.path.exists(os.path.join(res, "INCOMPLETE")):
        raise Bad("%s: the run is INCOMPLETE" % res)
    i = out.find("\nworkload: ")
    if i < 0:
        raise Bad("%s/output.txt: no final tables (no workload: line)" % res)
    shutil.copyfile(os.path.join(res, "feed.ndjson"), os.path.join(RECORDS, name + ".ndjson"))
    with open(os.path.join(RECORDS, name + ".txt"), "w") as f:
        f.write(head + "guest kernel: %s\n" % version + out[i:].rstrip("\n") + "\n")


def main(argv):
    p = argparse.ArgumentParser(
        prog="host/workloads-table", description=__doc__.split("\n\n")[0],
        epilog="exit status: 0; 1 when --check finds the table out of date or a recording "
        "is bad; 2 on bad usage.")
    p.add_argument("--check", action="store_true",
                   help="only compare docs/workloads.md's table with the recordings'")
    p.add_argument("--record", nargs=2, metavar=("NAME", "DIR"),
                   help="keep frlock-run's results folder DIR as row NAME's recording")
    a = p.parse_args(argv)
    try:
        if a.record:
            if not os.path.isdir(a.record[1]):
                p.error("%s: no such folder" % a.record[1])
            record(*a.record)
            return 0
        with open(DOC) as f:
            text = f.read()
        new = rewrite(text, table())
        if a.check:
            if new != text:
                print("%s: the table is not what docs/workloads/ records make "
                      "(host/workloads-table rewrites it)" % DOC, file=sys.stderr)
                return 1
            return 0
        with open(DOC + ".tmp", "w") as f:
            f.write(new)
        os.replace(DOC + ".tmp", DOC)
    except Bad as e:
        print("host/workloads-table: %s" % e, file=sys.stderr)
        return 1
    return 0
