# SPDX-License-Identifier: GPL-2.0
"""The bpftrace tools' judge (bpftrace.py) on bpftrace -f json's lines:
maps and hists as last printed, totals by key, and a part the guest did
not run is a not ok line."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from frlock import TOP
from frlock.judges import bpftrace

FEED = os.path.join(TOP, "dashboards", "fixtures", "frlock-run.ndjson")

LINES = [
    {"type": "attached_probes", "data": {"probes": 9}},
    {"type": "printf", "data": "Tracing...\n"},
    {"type": "map", "data": {"@reads": 5}},
    {"type": "map", "data": {"@reads": 12}},
    {"type": "map", "data": {"@retries": {"tk_core,ktime_get_real_ts64": 3, "tk_core,ktime_get": 1,
                                          "rename_lock,prepend_path": 7}}},
    {"type": "hist", "data": {"@hold_ns": {"tk_core,do_adjtimex": [{"min": 1024, "max": 2047, "count": 4}],
                                           "jiffies_seq,x": [{"min": 2, "max": 3, "count": 9}]}}},
]


class BpfJudge(unittest.TestCase):
    def test_maps(self):
        """judges/bpftrace: a map as last printed, its total by key, a hist's counts by key"""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "x.json"), "w") as f:
                f.write("\n".join(json.dumps(x) for x in LINES) + "\nnot json\n")
            bt = bpftrace.Bt(d, "x.json")
        self.assertEqual(bt.total("@reads"), 12)
        self.assertEqual(bt.total("@retries", "tk_core,.*"), 4)
        self.assertEqual(bt.total("@retries"), 11)
        self.assertEqual(bt.hist_total("@hold_ns", "tk_core,.*"), 4)
        self.assertEqual(bt.hist_total("@hold_ns"), 13)
        self.assertEqual(bt.total("@missing"), 0)

    def test_part_missing(self):
        """judges/bpftrace: a part the guest did not list is one not ok; an unknown part is exit 2"""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "parts"), "w") as f:
                f.write("watch\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                rc = bpftrace.main([d, "vdso"])
                with self.assertRaises(SystemExit) as refused:
                    bpftrace.main([d, "nope"])
        self.assertEqual(refused.exception.code, 2)
        self.assertEqual(rc, 1)
        self.assertIn("not ok - bpftrace tools: the guest ran its vdso part", out.getvalue())
        self.assertIn("not ok - frlock-watch ran (exit ?)", out.getvalue())

    def watch(self, intervals, runs):
        """The watch part judged on the recorded feed cut after its first
        intervals of tk_core (its feed_end kept), after the host's runs."""
        kept, n = [], 0
        with open(FEED) as f:
            for line in f:
                r = json.loads(line)
                if r.get("type") == "frlockstat" and r.get("lock") == "tk_core":
                    n += 1
                if n <= intervals or r.get("type") == "feed_end":
                    kept.append(line)
        out = io.StringIO()
        with tempfile.TemporaryDirectory() as d:
            for name, text in (("parts", "watch\n"), ("watch.rc", "watch 0\n"), ("watch.out", ""),
                               ("watch.ndjson", "".join(kept)),
                               ("watch.runs", "".join("%d %d\n" % r for r in runs))):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
            with contextlib.redirect_stdout(out):
                bpftrace.main([d, "watch"])
        return [x for x in out.getvalue().splitlines() if "intervals in the feed" in x]

    def test_watch_bound(self):
        """judges/bpftrace: too few intervals after the last run the host allows is not ok, naming every run"""
        self.assertEqual(self.watch(2, [(4, 1), (8, 2), (16, 2)]), [
            "not ok - frlock-watch: frlockstat's intervals in the feed, with running totals and "
            "percentiles (2, want 3; 0 lines skipped; run 3 of at most 3, 16 s of load; the runs "
            "before it: 1 intervals in 4 s, 2 intervals in 8 s)"])

    def test_watch_again(self):
        """judges/bpftrace: enough intervals in a later run pass, naming the runs before it"""
        self.assertEqual(self.watch(3, [(4, 2), (8, 3)]), [
            "ok - frlock-watch: frlockstat's intervals in the feed, with running totals and "
            "percentiles (3, want 3; 0 lines skipped; run 2 of at most 3, 8 s of load; the runs "
            "before it: 2 intervals in 4 s)"])


if __name__ == "__main__":
    unittest.main()
