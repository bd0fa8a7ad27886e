# SPDX-License-Identifier: GPL-2.0
"""The agreement judge (agreement.py) on raw outputs shaped as the guest
leaves them: tools that agree pass every comparison; a bpftrace count one
off, a histogram moved by a bucket, or a missing run fail the comparisons
they touch, and only those."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from frlock import agreement

LOCK = "s->lock"


def h(*b):
    return [{"min": lo, "max": lo if lo < 2 else 2 * lo - 1, "count": n} for lo, n in b]


def write(path, objs, blank=True):
    with open(path, "w") as f:
        for o in objs:
            f.write(json.dumps(o) + "\n" + ("\n" if blank else ""))


def outputs(d, bt_writes=1500, bt_retries=((1, 290), (2, 10))):
    with open(os.path.join(d, "lock"), "w") as f:
        f.write(LOCK + "\n")
    kunit = ("    # frlock_stress: reads=900000 retries=310 torn=0 writes=1500\n"
             "    # frlock_stress: writer=hardirq writes=1000\n"
             "    # frlock_stress: writer=task writes=500\nok 3 frlock_stress\n")
    for run in ("writers", "readers"):
        with open(os.path.join(d, run + ".kunit"), "w") as f:
            f.write(kunit)
        write(os.path.join(d, run + ".fs"), [
            {"type": "frlockstat_caller", "lock": LOCK, "kind": "write",
             "caller": "frlock_stress_timer+0x40", "count": 1000},
            {"type": "frlockstat_caller", "lock": LOCK, "kind": "write",
             "caller": "frlock_stress_writer+0x80", "count": 500},
            {"type": "frlockstat_caller", "lock": LOCK, "kind": "read",
             "caller": "frlock_stress_reader+0x20", "count": 300},
            {"type": "frlockstat", "lock": LOCK, "kind": "frlock", "writes": 1500,
             "retried_reads": 300, "retries": 310,
             "hold_ns": h((4096, 700), (8192, 800)),
             "retries_per_read": h((1, 290), (2, 10)), "lost_ns": []}], blank=False)
    write(os.path.join(d, "writers.bt"), [
        {"type": "printf", "data": "Tracing...\n"},
        {"type": "map", "data": {"@writes": {LOCK: bt_writes}}},
        {"type": "map", "data": {"@seq_first": {LOCK: 1}}},
        {"type": "map", "data": {"@seq_last": {LOCK: 1500}}},
        {"type": "hist", "data": {"@hold_ns": {
            LOCK + ", frlock_stress_timer": h((2048, 0), (4096, 500), (8192, 500)),
            LOCK + ", frlock_stress_writer": h((4096, 250), (8192, 250))}}}])
    write(os.path.join(d, "readers.bt"), [
        {"type": "map", "data": {"@retried_reads": {LOCK + ", frlock_stress_reader": 300}}},
        {"type": "hist", "data": {"@retries": {LOCK: h(*bt_retries)}}}])


def judge(d):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = agreement.main([d])
    lines = out.getvalue().splitlines()
    return rc, [ln for ln in lines if ln.startswith("not ok")], \
        [ln for ln in lines if ln.startswith("ok")]


class Judge(unittest.TestCase):
    def test_agree(self):
        """agreement: tools that agree pass every comparison"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d)
            rc, bad, good = judge(d)
        self.assertEqual((rc, bad), (0, []))
        self.assertEqual(len(good), 15)

    def test_disagree(self):
        """agreement: a count one off or a histogram moved by a bucket fails just those comparisons"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d, bt_writes=1499, bt_retries=((1, 290), (4, 10)))
            rc, bad, _ = judge(d)
        self.assertEqual(rc, 1)
        self.assertEqual(len(bad), 2, bad)
        self.assertIn("frlock-hold.bt counts the same write_end events (1499 == 1500)", bad[0])
        self.assertIn("retries-per-read histograms equal", bad[1])

    def test_missing(self):
        """agreement: a run the guest did not collect is a failure, not a pass"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d)
            os.remove(os.path.join(d, "readers.fs"))
            rc, bad, _ = judge(d)
            self.assertEqual(rc, 1)
            self.assertEqual(len(bad), 1, bad)
            rc, bad, _ = judge(os.path.join(d, "nothing"))
            self.assertEqual((rc, len(bad)), (1, 1))


if __name__ == "__main__":
    unittest.main()
