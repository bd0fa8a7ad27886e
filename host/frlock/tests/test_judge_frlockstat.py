# SPDX-License-Identifier: GPL-2.0
"""frlockstat's judge (frlockstat.py) on runs shaped as the guest leaves
them: the table's helpers read frlockstat's own text; a run that left
nothing, or printed records of another schema, fails its checks."""

import contextlib
import io
import json
import unittest

from frlock.judges import frlockstat
from frlock.tests.harness import run_judge

TABLE = """Tracing frlock and seqcount locks... Hit Ctrl-C to end.

LOCK                        KIND     WRITES/s HOLD50 HOLD99    MAX RETRY/s  WAIT/s   LOST/s  LOST99
tk_core                     frlock      241.5    <8K  <128K    <1M     3.0     9.5   ≥257us   ≥256K
jiffies_seq                 seqcount    250.4   <32K  <256K    <1M     0.0     0.0      0ns       -
(2 more locks: -n 4 shows them)

"""


def judge(files):
    return run_judge(frlockstat.main, files, missing=not files)


class StatJudge(unittest.TestCase):
    def test_table(self):
        """judges/frlockstat: the first table's rows, its lock rows, and sort -g's reading of a cell"""
        header, rows = frlockstat.table(TABLE)
        self.assertTrue(header.startswith("LOCK "))
        self.assertEqual(len(rows), 3)
        self.assertEqual(len(frlockstat.lock_rows(rows)), 2)
        self.assertEqual(frlockstat.num("241.5"), 241.5)
        self.assertEqual(frlockstat.num("-"), float("-inf"))

    def test_nothing_left(self):
        """judges/frlockstat: no runs in the results share is one not ok; a v1 record fails the schema check"""
        rc, out = judge({})
        self.assertEqual(rc, 1)
        self.assertIn("not ok - frlockstat: the guest left its runs in", out)
        rec = {"type": "frlockstat", "v": 1, "lock": "tk_core", "writes": 3}
        rc, out = judge({"rc": "tp_btf 0\n", "tp_btf.json": json.dumps(rec) + "\n"})
        self.assertEqual(rc, 1)
        self.assertIn("ok - frlockstat (tp_btf) ran (exit 0)", out)
        self.assertIn("not ok - frlockstat (tp_btf): every record is schema version 2", out)
        self.assertIn("not ok - frlockstat -h shows examples", out)

    def test_modes_only(self):
        """judges/frlockstat --modes: only the tp_btf and raw_tp runs are judged (the i386 guest's), and still fail"""
        rec = {"type": "frlockstat", "v": 1, "lock": "tk_core", "writes": 3}
        rc, out = run_judge(frlockstat.main, {"rc": "tp_btf 0\n", "tp_btf.json": json.dumps(rec) + "\n"},
                            args=["--modes"])
        self.assertEqual(rc, 1)
        self.assertIn("not ok - frlockstat (tp_btf): every record is schema version 2", out)
        self.assertIn("not ok - frlockstat (raw_tp) ran (exit None)", out)
        self.assertNotIn("frlockstat -h shows examples", out)
        self.assertNotIn("rename storm", out)
        # Runs with -w, not -c: -c's checks are skips, never passes.
        rc, out = run_judge(frlockstat.main, {"rc": "tp_btf 0\n", "modes.opt": "-w\n",
                                              "tp_btf.json": json.dumps(rec) + "\n"}, args=["--modes"])
        self.assertIn("skip - frlockstat (tp_btf) names writer and reader call sites (not run: the runs "
                      "counted sites with -w, not -c)", out)
        self.assertIn("skip - frlockstat (tp_btf) -j -c: site records and who cost whom", out)
        self.assertNotIn("ok - frlockstat (tp_btf) names writer", out.replace("skip - ", ""))

    def test_waits_over_the_run(self):
        """judges/frlockstat: the last record's waits add up with those open at the detach; none (read before the detach) fails"""
        def rec(open_):
            total = {"writes": 9, "retries": 2, "waits": 10, "waits_joined": 7, "waits_bounded": 1,
                     "waits_unjoined": 0, "retries_joined": 2}
            if open_ is not None:
                total["waits_open"] = open_
            return json.dumps({"type": "frlockstat", "v": 2, "lock": "tk_core", "writes": 9, "retries": 2,
                               "retries_joined": 2, "waits": 10, "total": total}) + "\n"
        for open_, verdict in ((2, "ok"), (1, "not ok"), (None, "not ok")):
            rc, out = run_judge(frlockstat.main, {"rc": "tp_btf 0\n", "modes.opt": "-w\n", "tp_btf.json": rec(open_)},
                                args=["--modes"])
            self.assertIn("\n%s - frlockstat (tp_btf) saw 2 tk_core retries, joined to their writes, and 10 waits "
                          "over the run, each timed (7), bounded by its write's hold (1), counted as without its "
                          "write's record (0: it began before the attach or its record made way) or open at the "
                          "detach (%s)" % (verdict, open_), "\n" + out)

    def test_pairs(self):
        """judges/frlockstat: -c's pairs join and add up to the row's joined retries and waits, or fail"""
        def recs(writer, count):
            site = {"type": "frlockstat_caller", "v": 2, "lock": "tk_core", "lock_kind": "frlock"}
            return [dict(site, kind="write", caller="timekeeping_advance+0x1a0"),
                    dict(site, kind="caused", caller="timekeeping_advance+0x12"),
                    dict(site, kind="causedwait", caller="timekeeping_advance+0x12"),
                    {"type": "frlockstat_pair", "v": 2, "lock": "tk_core", "lock_kind": "frlock",
                     "kind": "retry", "writer_comm": "swapper/0", "writer": writer,
                     "reader_comm": "gtod-load", "reader": "ktime_get_real_ts64+0x40",
                     "count": count, "ns": 900, "bound": True, "count_total": count, "ns_total": 900},
                    {"type": "frlockstat_pair", "v": 2, "lock": "tk_core", "lock_kind": "frlock",
                     "kind": "wait", "writer_comm": "adjtimex", "writer": "timekeeping_advance+0x12",
                     "reader_comm": "gtod-load", "reader": "ktime_get_real_ts64+0x20",
                     "count": 1, "ns": 50, "bound": False, "count_total": 1, "ns_total": 50},
                    {"type": "frlockstat", "v": 2, "lock": "tk_core", "retries": 3,
                     "retries_joined": 3, "retry_lost_lb_ns": 900, "waits": 1, "waits_joined": 1,
                     "wait_ns_sum": 50}]
        for writer, count, verdict in (("timekeeping_advance+0x12", 3, "ok"),
                                       ("do_adjtimex+0x12", 3, "not ok"),
                                       ("timekeeping_advance+0x12", 4, "not ok")):
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                frlockstat.who_joins("tp_btf", recs(writer, count))
            self.assertIn("\n" + verdict + " - frlockstat (tp_btf) -c -j: 2 who-cost-whom pairs",
                          "\n" + out.getvalue())


if __name__ == "__main__":
    unittest.main()
