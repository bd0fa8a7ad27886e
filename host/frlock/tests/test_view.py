# SPDX-License-Identifier: GPL-2.0
"""The feed's schema and the view, on synthetic feeds whose figures are
known and on the feed make fixtures recorded: what is skipped and how it
is named, the one definition of a gettimeofday retry, a v4 frlock row and
a seqcount row, the detail lock fixed for the run."""

import json
import unittest

from frlock import feed, terminal, view
from frlock.tests import synth as S


def run(records, lock=None):
    return run_lines(S.lines(records), lock)


def run_lines(lines, lock=None):
    v = view.View(lock)
    rows = []
    for line in lines:
        rows += v.add_line(line)
    rows += v.end()
    return v, rows


def gtod_interval(ts, retries_gtod, retries_adj=0, writes=450, waits=0):
    """tk_core.lock's interval as frlockstat -c writes it: its write site,
    gettimeofday's and adjtimex's retries, then the lock's record."""
    recs = [S.caller("tk_core.lock", "write", "timekeeping_advance+0x4f3", writes,
                     "update_wall_time+0xc", writes * 5000)]
    if retries_gtod:
        recs.append(S.caller("tk_core.lock", "retry", "ktime_get_real_ts64+0xff", retries_gtod,
                             "__x64_sys_gettimeofday+0x33"))
    if retries_adj:
        recs.append(S.caller("tk_core.lock", "retry", "ktime_get_real_ts64+0xff", retries_adj,
                             "do_adjtimex+0x2dc"))
    recs.append(S.stat("tk_core.lock", "frlock", ts, writes, retries=retries_gtod + retries_adj,
                       waits=waits))
    return recs


def records(lines):
    return [json.loads(line) for line in lines]


class Schema(unittest.TestCase):
    def classify(self, rec):
        return feed.classify(json.dumps(rec).encode())

    def test_current_version_is_a_record(self):
        """feed: a v2 record of each type frlockstat v4 and gtod-load write is read, extra fields tolerated"""
        for rec in (S.stat("x", "frlock", 1.0, 3, new_field=[1, 2]),
                    S.stat("x", "seqcount", 1.0, 3, retries=2, waits=1),
                    S.caller("x", "write", "f+0x1", 2), S.load(1.0, 5.0),
                    S.summary(10, 1.0), {"type": "feed_end", "status": 0},
                    {"type": "frlockstat_missed", "v": 2, "missed": 1},
                    {"type": "frlockstat_drops", "v": 2, "drops": 2, "full": 2, "busy": 0,
                     "other": 0, "by_map": {"stats": {"full": 2, "busy": 0, "other": 0}}}):
            self.assertEqual(self.classify(rec)[0], "record", rec)

    def test_recorded_feed_is_read_whole(self):
        """feed: every line of the feed make fixtures recorded is a record of this schema"""
        whats = [feed.classify(line)[0] for line in S.fixture_lines()]
        self.assertEqual(set(whats), {"record"})
        types = {r["type"] for r in records(S.fixture_lines())}
        self.assertLessEqual({"frlockstat", "frlockstat_caller", "load", "load_summary",
                              "feed_end"}, types)

    def test_newer_version_is_skipped_and_named(self):
        """feed: a record of a newer schema is skipped, counted and named on the skipped line"""
        what, _, why = self.classify(S.stat("x", "frlock", 1.0, 3, v=3))
        self.assertEqual(what, "newer")
        self.assertIn("v3", why)
        v, _ = run([S.stat("x", "frlock", 1.0, 3, v=3), S.load(1.0, 5.0, dt=1.0) | {"v": 7}])
        self.assertEqual(v.skipped()["newer"], 2)
        self.assertIn("v3: 1, v7: 1; this reader knows v2", v.skipped_line())
        self.assertEqual(v.locks, {})

    def test_no_version_or_an_older_one(self):
        """feed: a record without "v" or of an older schema is malformed and says why; feed_end needs none"""
        for rec in (S.load(1.0, 5.0), S.stat("x", "frlock", 1.0, 3)):
            del rec["v"]
            self.assertEqual(self.classify(rec)[:1], ("malformed",), rec)
        what, _, why = self.classify(S.stat("x", "frlock", 1.0, 3, v=1))
        self.assertEqual((what, why), ("malformed", "schema v1, older than this reader's v2"))
        self.assertEqual(self.classify({"type": "feed_end", "status": 0})[0], "record")

    def test_malformed(self):
        """feed: lines that are not JSON objects of known fields are malformed, never fatal"""
        no_lost = S.stat("x", "frlock", 1.0, 3)
        del no_lost["lost"]
        no_from = S.caller("x", "retry", "f+0x1", 2)
        del no_from["from"]
        bad = [b"not json", b"[1]", b"\xff\xfe", b'{"type":"load","v":2,"t":NaN}',
               b'{"type":"frlockstat","v":"2"}', b'{"type":"load","v":true}',
               json.dumps(S.stat("x", "frlock", 1.0, 3) | {"writes": "many"}).encode(),
               json.dumps(S.stat("x", "mutex", 1.0, 3)).encode(), json.dumps(no_lost).encode(),
               json.dumps(no_from).encode(), b"x" * (feed.MAX_LINE + 1)]
        for raw in bad:
            self.assertEqual(feed.classify(raw)[0], "malformed", raw[:60])
        self.assertEqual(feed.classify(b"  ")[0], "blank")
        self.assertEqual(feed.classify(b'{"type":"bogus","v":2}')[0], "unknown")
        self.assertEqual(feed.parse_line(b'{"type":"bogus","v":2}'),
                         (None, "unknown record type 'bogus'"))


class Figures(unittest.TestCase):
    def test_gettimeofday_retry(self):
        """view: a gettimeofday retry is ktime_get_real_ts64's from the system call (or from an unknown caller), not adjtimex's"""
        def retry(caller, frm, kind="retry"):
            return view.is_gtod_retry({"kind": kind, "caller": caller, "from": frm})
        self.assertTrue(retry("ktime_get_real_ts64+0x1", "__x64_sys_gettimeofday+0x33"))
        self.assertTrue(retry("ktime_get_real_ts64+0x1", "?"))
        self.assertFalse(retry("ktime_get_real_ts64+0x1", "do_adjtimex+0x2dc"))
        self.assertFalse(retry("ktime_get_real_ts64+0x1", "?", kind="wait"))
        self.assertFalse(retry("ktime_get+0xd1", "?"))

    def test_no_retry_share_is_a_bound(self):
        """view: "no retry" is at least 1 - gettimeofday's retries / the load's reads, marked ≥"""
        recs = []
        for i in range(1, 4):
            recs += gtod_interval(100.0 + i, retries_gtod=500, retries_adj=400)
            recs.append(S.load(100.0 + i + 0.01, 100000.0))
        v, rows = run(recs)
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertAlmostEqual(r["reads"], 100000.0, delta=2000)
            self.assertEqual(r["gtod_retries"], 500)
        # 500 retries in ~100,000 reads: at least 99.5% did not retry;
        # adjtimex's 400 left out
        self.assertEqual(rows[1]["cells"][2], "≥99.500%")
        self.assertEqual(rows[1]["cells"][4], "900")       # retries/s: every reader
        self.assertEqual(view.ROW_COLUMNS[2], "no retry")

    def test_vdso_and_no_callers_have_no_share(self):
        """view: no "no retry" share for the vDSO's reads or without -c ("-", not 0)"""
        _, rows = run(gtod_interval(101.0, 5) + [S.load(101.0, 1000.0, via="vdso")])
        self.assertEqual(rows[0]["cells"][2], "-")
        _, rows = run([S.stat("tk_core.seq", "seqcount", 101.0, 300, retries=4, waits=2),
                       S.load(101.0, 1000.0)])
        self.assertEqual(rows[0]["cells"][2], "-")
        self.assertEqual(rows[0]["cells"][5], "2")          # waits/s

    def test_lock_table(self):
        """view: the table of every lock has frlockstat's cells, whole run"""
        recs = []
        for i in range(1, 5):
            recs += gtod_interval(100.0 + i, retries_gtod=10, waits=3)
            recs.append(S.stat("rename_lock", "seqcount", 100.0 + i, 2000, retries=30, waits=300,
                               hold=S.hist((8192, 1000), (16384, 1000)),
                               wait_ns=S.hist((65536, 300)), wait_ns_sum=300 * 70000))
        v, _ = run(recs)
        self.assertEqual(list(view.LOCK_COLUMNS), [
            "lock", "kind", "writes/s", "hold p50", "hold p99", "hold max", "retries/s",
            "waits/s", "lost/s", "lost p99", "writer", "reader"])
        rows = {r[0]: r for r in v.snapshot()["locks"]["rows"]}
        # lost/s: per second, 300 waits of 70 us and 30 retries of at least
        # 8,192 ns: ≥21.2ms; its p99 in the waits' bucket, a bound as retries
        # are in it
        self.assertEqual(rows["rename_lock"], ["rename_lock", "seqcount", "2000.0", "<16K",
                                               "<32K", "<32K", "30.0", "300.0", "≥21.2ms",
                                               "≥64K", "w_rename_lock", "-"])
        self.assertEqual(rows["tk_core.lock"], ["tk_core.lock", "frlock", "450.0", "<2K", "<2K",
                                                "<2K", "10.0", "3.0", "≥81.9us", "≥8K",
                                                "timekeeping_advance", "ktime_get_real_ts64"])
        self.assertEqual(v.snapshot()["locks"]["rows"][0][0], "rename_lock")

    def test_walk_fallbacks(self):
        """view: with frlockstat -W, each lock's path-walk fallbacks/s and redo p50/p99 after its retries/s, and the walks' line by function and cause"""
        def walk(ts, lookupat, openat):
            return {"type": "frlockstat_walk", "v": 2, "ts": ts, "dt": 1.0,
                    "fallbacks": sum(lookupat.values()) + sum(openat.values()),
                    "by_function": {"path_lookupat": lookupat, "path_openat": openat,
                                    "path_parentat": {"lock": 0, "unlazy": 0, "other": 0,
                                                      "unseen": 0}},
                    "nolock_redos": openat["other"], "nolock_redo_ns_sum": 0,
                    "nolock_redo_ns": S.hist((65536, openat["other"]))}
        recs = []
        for i in range(1, 3):
            # 4 walks a second charged to d_seq, their redo 16-32 us (p99 in 64K)
            recs.append(S.stat("dentry.d_seq", "seqcount", 100.0 + i, 50, retries=9,
                               walk_fallbacks=4, walk_redos=4, walk_redo_ns_sum=4 * 20000,
                               walk_redo_ns=S.hist((16384, 3), (32768, 1)),
                               walk_fallbacks_total=4 * i))
            recs.append(S.stat("jiffies_seq", "seqcount", 100.0 + i, 250))
            recs.append(walk(100.0 + i, {"lock": 4, "unlazy": 1, "other": 0, "unseen": 0},
                             {"lock": 0, "unlazy": 0, "other": 2, "unseen": 0}))
        v, _ = run(recs)
        snap = v.snapshot()
        self.assertEqual(snap["locks"]["columns"], [
            "lock", "kind", "writes/s", "hold p50", "hold p99", "hold max", "retries/s",
            "fallbacks/s", "redo p50", "redo p99", "waits/s", "lost/s", "lost p99", "writer",
            "reader"])
        rows = {r[0]: r for r in snap["locks"]["rows"]}
        self.assertEqual(rows["dentry.d_seq"][6:10], ["9.0", "4.0", "<32K", "<64K"])
        self.assertEqual(rows["jiffies_seq"][6:10], ["0.0", "0.0", "-", "-"])
        self.assertEqual(snap["walk"], "path walks fallen back to ref-walk, whole run: 14 "
                         "(path_lookupat 10, path_openat 4, path_parentat 0); by cause: lock 8, "
                         "unlazy 2, other 4, unseen 0 (lock: charged to its row; the others' "
                         "redo p50 <128K, p99 <128K ns)")
        self.assertIn(snap["walk"], terminal.final_text(snap))
        # Without -W: frlockstat's own columns, no walk line.
        v, _ = run([S.stat("jiffies_seq", "seqcount", 101.0, 250)])
        self.assertEqual(v.snapshot()["locks"]["columns"], list(view.LOCK_COLUMNS))
        self.assertIsNone(v.snapshot()["walk"])

    def test_exact_lost_time(self):
        """view: lost time with no retry is exact (no ≥), with retries a lower bound"""
        recs = [S.stat("s", "seqcount", 100.0 + i, 10, waits=4, wait_ns=S.hist((1024, 4)),
                       wait_ns_sum=5000) for i in range(1, 3)]
        v, rows = run(recs)
        self.assertEqual(v.skipped_line(), "skipped: 0 malformed lines, 0 records of unknown type, "
                         "0 of a newer schema")
        table = {r[0]: r for r in v.snapshot()["locks"]["rows"]}
        self.assertEqual(table["s"][6:10], ["0.0", "4.0", "5.0us", "<2K"])
        self.assertEqual(rows[0]["cells"][4:6], ["0", "4"])

    def test_program_runs(self):
        """view: the events frlockstat ran a program for, every lock's, over the intervals wholly inside a window"""
        recs = []
        for i in range(1, 5):
            recs += [S.stat("tk_core", "frlock", 100.0 + i, 1000, retries=10, waits=5),
                     S.stat("rename_lock", "seqcount", 100.0 + i, 300, retries=1, waits=99)]
        v, _ = run(recs)
        # (100, 104]: intervals 2 and 3 lie wholly in [101, 103.5]
        ev = v.program_runs(101.0, 103.5)
        self.assertEqual(ev, {"seconds": 2.0, "events_per_s": 2 * 1300 + 115.0,
                              "reader_events_per_s": 115.0})
        self.assertIsNone(v.program_runs(101.0, 101.5))

    def test_lost_events(self):
        """view: lost events are named, with their running totals"""
        v, _ = run([{"type": "frlockstat_missed", "v": 2, "missed": 5,
                     "by_event": {"seqcount_write_begin": 5}},
                    {"type": "frlockstat_drops", "v": 2, "drops": 2, "full": 2, "busy": 0,
                     "other": 0, "by_map": {"stats": {"full": 2, "busy": 0, "other": 0},
                                            "writes": {"full": 0, "busy": 0, "other": 0}}}])
        self.assertEqual(v.lost_line(), "lost events: 5 missed (fired while the same program ran "
                         "on that CPU: seqcount_write_begin 5); 2 dropped (a map update failed: "
                         "stats 2)")
        self.assertEqual(run([])[0].lost_line(), "lost events: none reported")


def upper_percentile(buckets, pct):
    """The bucket (its min) holding the pct-th percentile of a list of
    {"min","max","count"}, by walking the counts one by one."""
    every = sorted(b["min"] for b in buckets for _ in range(b["count"]))
    return every[-(-len(every) * pct // 100) - 1]


class RecordedFeed(unittest.TestCase):
    """The feed make fixtures recorded: frlockstat v4 -j -c on the frlock
    kernel, gtod-load and a rename storm; figures checked against the
    records themselves."""

    @classmethod
    def setUpClass(cls):
        cls.lines = S.fixture_lines()
        cls.recs = records(cls.lines)
        cls.v, cls.rows = run_lines(cls.lines)
        cls.snap = cls.v.snapshot()
        cls.table = {r[0]: r for r in cls.snap["locks"]["rows"]}

    def stats(self, lock):
        return [r for r in self.recs if r["type"] == "frlockstat" and r["lock"] == lock]

    def check_lock_row(self, lock, kind):
        ivs = self.stats(lock)
        self.assertTrue(ivs, lock)
        every = [r for r in self.recs if r["type"] == "frlockstat"]
        span = max(r["ts"] for r in every) - min(r["ts"] - r["dt"] for r in every)
        row = self.table[lock]
        self.assertEqual(row[:2], [lock, kind])
        # frlockstat's own running totals, over the whole run
        last = ivs[-1]["total"]
        for col, key in ((2, "writes"), (6, "retries"), (7, "waits")):
            self.assertEqual(row[col], "%.1f" % (last[key] / span), (lock, key))
        hold = [b for r in ivs for b in r["hold_ns"]]
        self.assertEqual(row[4], "<" + view.size(2 * upper_percentile(hold, 99)))
        lost = sum(r["lost"]["ns"] for r in ivs) / span
        bound = any(r["lost"]["bound"] for r in ivs)
        self.assertEqual(row[8], view.duration_rate(lost, bound))
        self.assertTrue(row[8].startswith("≥") == bound)
        waited = [b for r in ivs for k in ("wait_ns", "retry_lb_ns") for b in r[k]]
        if waited:
            p99 = upper_percentile(waited, 99)
            self.assertEqual(row[9], ("≥" + view.size(p99)) if bound
                             else "<" + view.size(2 * p99))
        return row

    def test_frlock_row(self):
        """view, recorded feed: a v4 frlock row (tk_core) has frlockstat's totals, hold and lost time"""
        row = self.check_lock_row("tk_core", "frlock")
        self.assertEqual(row[10:], ["timekeeping_advance", "ktime_get_real_ts64"])

    def test_seqcount_row(self):
        """view, recorded feed: a v4 seqcount row (rename_lock) has frlockstat's totals, waits and lost time"""
        row = self.check_lock_row("rename_lock", "seqcount")
        self.assertNotEqual(row[7], "0.0")                   # its lookups waited

    def test_detail_rows(self):
        """view, recorded feed: tk_core's rows, one per interval; "no retry" ≥ 1 - gettimeofday's retries / reads"""
        self.assertEqual(self.snap["detail"]["lock"], "tk_core")
        ivs = self.stats("tk_core")
        self.assertEqual(len(self.rows), len(ivs))
        # gettimeofday's retries: the ktime_get_real_ts64 retry sites called
        # from the system call, printed before each of tk_core's records
        gtod, per = 0, []
        for r in self.recs:
            if r["type"] == "frlockstat_caller" and r["lock"] == "tk_core" and \
                    r["kind"] == "retry" and r["caller"].startswith("ktime_get_real_ts64+") and \
                    r["from"].startswith("__x64_sys_gettimeofday+"):
                gtod += r["count"]
            elif r["type"] == "frlockstat" and r["lock"] == "tk_core":
                per.append(gtod)
                gtod = 0
        self.assertGreater(sum(per), 0)
        for row, g, iv in zip(self.rows, per, ivs):
            self.assertEqual(row["cells"][2], "≥%.3f%%" % (100 * (1 - g / row["reads"])))
            self.assertEqual(row["cells"][3:6], ["%.0f" % (iv[k] / iv["dt"])
                                                 for k in ("writes", "retries", "waits")])


class DetailLock(unittest.TestCase):
    def mixed(self):
        """tk_core.lock all along; d_seq retries from the half way on, far
        more than tk_core.lock."""
        recs = []
        for i in range(1, 11):
            ts = 200.0 + i
            recs += gtod_interval(ts, retries_gtod=3, writes=400 + i)
            recs.append(S.stat("d_seq", "seqcount", ts, 5000 + i,
                               retries=(900 if i > 5 else 0), waits=1))
            recs.append(S.load(ts + 0.05, 50000.0))
        return recs

    def test_mixed_locks_never_share_a_table(self):
        """view: another lock leading on retries half way changes neither the detail lock nor its rows"""
        recs = self.mixed()
        v = view.View()
        seen = []
        for line in S.lines(recs):
            v.add_line(line)
            seen.append(v.detail_lock()[0])
        v.end()
        # none until tk_core.lock's first record, then tk_core.lock only
        first = seen.index("tk_core.lock")
        self.assertEqual(set(seen[:first]), {None})
        self.assertEqual(set(seen[first:]), {"tk_core.lock"})
        snap = v.snapshot()
        self.assertEqual(snap["detail"]["lock"], "tk_core.lock")
        rows = snap["rows"]["rows"]
        self.assertEqual(len(rows), 10)                     # every interval, none dropped
        self.assertEqual([r[3] for r in rows], [str(400 + i) for i in range(1, 11)])
        self.assertEqual(snap["locks"]["rows"][0][0], "d_seq")   # leads the table of locks
        # the detail's histograms and series are tk_core.lock's alone
        self.assertEqual(sum(snap["hists"]["hold_ns"]["run"]), sum(400 + i for i in range(1, 11)))
        self.assertEqual([p[1] for p in snap["series"]["writes"]],
                         [float(400 + i) for i in range(1, 11)])
        text = "\n".join(terminal.final_text(snap))
        self.assertEqual(terminal.tables_in(text, snap), [])

    def test_detail_without_gettimeofday_lock(self):
        """view: with no lock gettimeofday reads, the detail is chosen once, at the end"""
        recs = [S.stat("a", "seqcount", 1.0 + i, 10, retries=2 * i) for i in range(3)]
        recs += [S.stat("b", "seqcount", 1.0 + i, 20, retries=1) for i in range(3)]
        v = view.View()
        for line in S.lines(recs):
            v.add_line(line)
            self.assertIsNone(v.detail_lock()[0])
        v.end()
        self.assertEqual(v.detail_lock()[0], "a")
        self.assertEqual(len(v.snapshot()["rows"]["rows"]), 3)

    def test_asked_for(self):
        """view: --lock NAME shows that lock's detail"""
        v, _ = run(self.mixed(), lock="d_seq")
        self.assertEqual(v.snapshot()["detail"]["lock"], "d_seq")
        self.assertEqual(v.snapshot()["rows"]["rows"][0][3], "5001")


if __name__ == "__main__":
    unittest.main()
