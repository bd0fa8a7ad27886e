# SPDX-License-Identifier: GPL-2.0
"""The feed's schema and the view, on synthetic feeds whose figures are
known: what is skipped and how it is named, the one definition of a
gettimeofday read, the detail lock fixed for the run."""

import json
import unittest

from frlock import feed, terminal, view
from frlock.tests import synth as S


def run(records, lock=None):
    v = view.View(lock)
    rows = []
    for line in S.lines(records):
        rows += v.add_line(line)
    rows += v.end()
    return v, rows


def gtod_interval(ts, retried_gtod, retried_adj=0, writes=450, extra_retries=0):
    recs = [S.caller("tk_core.lock", "write", "timekeeping_advance+0x4f3", writes,
                     "update_wall_time+0xc", writes * 5000)]
    if retried_gtod:
        recs.append(S.caller("tk_core.lock", "read", "ktime_get_real_ts64+0x110", retried_gtod,
                             "__x64_sys_gettimeofday+0x33", retried_gtod * 20000))
    if retried_adj:
        recs.append(S.caller("tk_core.lock", "read", "ktime_get_real_ts64+0x110", retried_adj,
                             "do_adjtimex+0x2dc", retried_adj * 20000))
    retried = retried_gtod + retried_adj
    recs.append(S.stat("tk_core.lock", "frlock", ts, writes, retries=retried + extra_retries,
                       retried=retried))
    return recs


class Schema(unittest.TestCase):
    def classify(self, rec):
        return feed.classify(json.dumps(rec).encode())

    def test_current_version_is_a_record(self):
        """feed: a v2 record of each type is read, extra fields tolerated"""
        for rec in (S.stat("x", "frlock", 1.0, 3, new_field=[1, 2]),
                    S.caller("x", "write", "f+0x1", 2), S.load(1.0, 5.0),
                    S.summary(10, 1.0), {"type": "feed_end", "v": 2, "status": 0},
                    {"type": "frlockstat_missed", "v": 2, "missed": 1}):
            self.assertEqual(self.classify(rec)[0], "record", rec)

    def test_newer_version_is_skipped_and_named(self):
        """feed: a record of a newer schema is skipped, counted and named on the skipped line"""
        what, _, why = self.classify(S.stat("x", "frlock", 1.0, 3, v=3))
        self.assertEqual(what, "newer")
        self.assertIn("v3", why)
        v, _ = run([S.stat("x", "frlock", 1.0, 3, v=3), S.load(1.0, 5.0, dt=1.0) | {"v": 7}])
        self.assertEqual(v.skipped()["newer"], 2)
        self.assertIn("v3: 1, v7: 1; this reader knows v2", v.skipped_line())
        self.assertEqual(v.locks, {})

    def test_no_version(self):
        """feed: gtod-load records must carry "v"; frlockstat's v3-era records are read as v1"""
        load = S.load(1.0, 5.0)
        del load["v"]
        self.assertEqual(self.classify(load)[0], "malformed")
        self.assertEqual(self.classify(S.stat("x", "frlock", 1.0, 3, v=None))[0], "record")

    def test_malformed(self):
        """feed: lines that are not JSON objects of known fields are malformed, never fatal"""
        bad = [b"not json", b"[1]", b"\xff\xfe", b'{"type":"load","v":2,"t":NaN}',
               b'{"type":"frlockstat","v":"2"}', b'{"type":"load","v":true}',
               json.dumps(S.stat("x", "frlock", 1.0, 3) | {"writes": "many"}).encode(),
               json.dumps(S.stat("x", "mutex", 1.0, 3)).encode(), b"x" * (feed.MAX_LINE + 1)]
        for raw in bad:
            self.assertEqual(feed.classify(raw)[0], "malformed", raw[:60])
        self.assertEqual(feed.classify(b"  ")[0], "blank")
        self.assertEqual(feed.classify(b'{"type":"bogus","v":2}')[0], "unknown")


class Figures(unittest.TestCase):
    def test_gettimeofday_read(self):
        """view: a gettimeofday read is ktime_get_real_ts64's from the system call, not adjtimex's"""
        self.assertTrue(view.is_gtod_read({"kind": "read", "caller": "ktime_get_real_ts64+0x1",
                                           "from": "__x64_sys_gettimeofday+0x33"}))
        self.assertFalse(view.is_gtod_read({"kind": "read", "caller": "ktime_get_real_ts64+0x1",
                                            "from": "do_adjtimex+0x2dc"}))
        self.assertFalse(view.is_gtod_read({"kind": "retry", "caller": "ktime_get_real_ts64+0x1"}))
        self.assertFalse(view.is_gtod_read({"kind": "read", "caller": "ktime_get+0xd1"}))

    def test_no_retry_share(self):
        """view: "no retry" is 1 - gettimeofday's retried reads / the load's reads"""
        recs = []
        for i in range(1, 4):
            recs += gtod_interval(100.0 + i, retried_gtod=500, retried_adj=400)
            recs.append(S.load(100.0 + i + 0.01, 100000.0))
        v, rows = run(recs)
        self.assertEqual(len(rows), 3)
        for r in rows:
            self.assertAlmostEqual(r["reads"], 100000.0, delta=2000)
            self.assertEqual(r["gtod_retried"], 500)
        # 500 of ~100,000 reads retried: 99.5%, adjtimex's 400 left out
        self.assertEqual(rows[1]["cells"][2], "99.500%")
        self.assertEqual(rows[1]["cells"][6], "900")       # retried/s: every reader

    def test_vdso_and_seqcount_have_no_share(self):
        """view: no "no retry" share for the vDSO's reads ("-", not 0); a seqcount's is a lower bound from its retries"""
        recs = gtod_interval(101.0, 5) + [S.load(101.0, 1000.0, via="vdso")]
        _, rows = run(recs)
        self.assertEqual(rows[0]["cells"][2], "-")
        # a seqcount counts no retried reads: its gettimeofday retries stand
        # in, and the share is a lower bound
        _, rows = run([S.caller("tk_core.seq", "retry", "ktime_get_real_ts64+0x167", 3,
                                "__x64_sys_gettimeofday+0x33", lock_kind="seqcount"),
                       S.caller("tk_core.seq", "retry", "ktime_get_real_ts64+0x167", 1,
                                "do_adjtimex+0x100", lock_kind="seqcount"),
                       S.stat("tk_core.seq", "seqcount", 101.0, 300, retries=4, waits=2),
                       S.load(101.0, 1000.0)])
        self.assertEqual(rows[0]["cells"][2], "≥99.700%")
        self.assertEqual(rows[0]["cells"][5], "2")          # waits/s
        self.assertEqual(rows[0]["cells"][6], "-")          # retried/s unknown

    def test_lock_table(self):
        """view: the table of every lock has frlockstat's cells, whole run"""
        recs = []
        for i in range(1, 5):
            recs += gtod_interval(100.0 + i, retried_gtod=10)
            recs.append(S.stat("rename_lock", "seqcount", 100.0 + i, 2000, retries=30, waits=300,
                               hold=S.hist((8192, 1000), (16384, 1000))))
        v, _ = run(recs)
        rows = {r[0]: r for r in v.snapshot()["locks"]["rows"]}
        self.assertEqual(rows["rename_lock"], ["rename_lock", "seqcount", "2000.0", "<16K",
                                               "<32K", "<32K", "30.0", "300.0", "-", "-", "-",
                                               "w_rename_lock", "-"])
        self.assertEqual(rows["tk_core.lock"][:3], ["tk_core.lock", "frlock", "450.0"])
        # series v3's frlock: no waits, no "lost" sum; its retried reads'
        # loss is a lower bound, so the p99 is the bucket's floor
        self.assertEqual(rows["tk_core.lock"][7:], ["-", "10.0", "-", "≥8K",
                                                    "timekeeping_advance", "ktime_get_real_ts64"])
        self.assertEqual(v.snapshot()["locks"]["rows"][0][0], "rename_lock")

    def test_v2_records(self):
        """view: frlockstat v2's records: a field a lock cannot tell left out, lost time and its bound shown with ≥"""
        recs = []
        for i in range(1, 3):
            recs.append(S.stat("rename_lock", "seqcount", 100.0 + i, 1000, retries=2, waits=40,
                               addr=None, naming="symbol", wait_ns=S.hist((65536, 40)),
                               retry_lb_ns=S.hist((4096, 2)), lost={"ns": 3000000, "bound": True}))
            recs.append(S.stat("s", "seqcount", 100.0 + i, 10, waits=4, wait_ns=S.hist((1024, 4)),
                               lost={"ns": 5000, "bound": False}))
        v, rows = run(recs, lock="rename_lock")
        self.assertEqual(v.skipped_line(), "skipped: 0 malformed lines, 0 records of unknown type, "
                         "0 of a newer schema")
        table = {r[0]: r for r in v.snapshot()["locks"]["rows"]}
        # 6 ms lost over 2 s, partly a lower bound; the p99 of waits and retries
        self.assertEqual(table["rename_lock"][6:11], ["2.0", "40.0", "-", "≥3.0ms", "≥64K"])
        self.assertEqual(table["s"][6:11], ["0.0", "4.0", "-", "5.0us", "<2K"])
        self.assertEqual(rows[0]["cells"][4:7], ["2", "40", "-"])

    def test_lost_events(self):
        """view: lost events are named, with their running totals"""
        v, _ = run([{"type": "frlockstat_missed", "v": 2, "missed": 5,
                     "by_event": {"seqcount_write_begin": 5}},
                    {"type": "frlockstat_drops", "v": 2, "drops": 2, "by_map": {"stats": 2}}])
        self.assertEqual(v.lost_line(), "lost events: 5 missed (fired while the same program ran "
                         "on that CPU: seqcount_write_begin 5); 2 dropped (a map update failed: "
                         "stats 2)")
        self.assertEqual(run([])[0].lost_line(), "lost events: none reported")


class DetailLock(unittest.TestCase):
    def mixed(self):
        """tk_core.lock all along; d_seq retries from the half way on, far
        more than tk_core.lock."""
        recs = []
        for i in range(1, 11):
            ts = 200.0 + i
            recs += gtod_interval(ts, retried_gtod=3, writes=400 + i)
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
