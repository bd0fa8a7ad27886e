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

from frlock.judges import bpftrace

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


if __name__ == "__main__":
    unittest.main()
