# SPDX-License-Identifier: GPL-2.0
"""The agreement judge (judges/agreement.py) on raw outputs shaped as the guest
leaves them: tools that agree pass every comparison; a bpftrace count one
off, a histogram moved by a bucket, or a missing run fail the comparisons
they touch, and only those."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from frlock.judges import agreement

LOCK = "kmalloc-512+0x0@frlock_stress_writer"


def h(*b):
    return [{"min": lo, "max": lo if lo < 2 else 2 * lo - 1, "count": n} for lo, n in b]


def write(path, objs, blank=True):
    with open(path, "w") as f:
        for o in objs:
            f.write(json.dumps(o) + "\n" + ("\n" if blank else ""))


def site(lock, kind, caller, n, lock_kind="frlock"):
    return {"type": "frlockstat_caller", "v": 2, "lock": lock, "lock_kind": lock_kind,
            "kind": kind, "caller": caller, "count": n, "count_total": n}


def outputs(d, bt_timer_8k=500, bt_waits=40, runs=((1500, 40),)):
    """The guest's raw outputs; runs: the readers runs agreement.sh made
    (the stress case's length, frlockstat's waits), the last judged."""
    with open(os.path.join(d, "readers.runs"), "w") as f:
        f.write("".join("%d %d\n" % r for r in runs))
    with open(os.path.join(d, "readers.bound"), "w") as f:
        f.write("4\n")
    waits = runs[-1][1]
    kunit = ("    # frlock_test_stress: writer=hardirq writes=1000 hold_max_ns=9000\n"
             "    # frlock_test_stress: writer=task writes=500 hold_max_ns=9000\n"
             "    # frlock_test_stress: ms=1500 cpus=2 reads=900000 retries=310 torn=0 "
             "writes=1500 hold_max_ns=9000 nested_refused=0\nok 11 frlock_test_stress\n")
    for run in ("writers", "readers"):
        with open(os.path.join(d, run + ".kunit"), "w") as f:
            f.write(kunit)
        write(os.path.join(d, run + ".fs"), [
            # Another frlock and a seqcount that the stress case does not write.
            site("tk_core", "write", "timekeeping_advance+0x4ec", 700),
            site("dentry.d_seq", "write", "__d_move+0x60", 9, "seqcount"),
            site(LOCK, "write", "frlock_stress_timer+0x40", 1000),
            site(LOCK, "write", "frlock_stress_writer+0x80", 500),
            site(LOCK, "retry", "frlock_stress_reader+0x20", 310),
            site(LOCK, "wait", "frlock_stress_reader+0x10", waits),
            {"type": "frlockstat", "v": 2, "lock": "tk_core", "kind": "frlock", "writes": 700,
             "retries": 3, "waits": 1, "hold_ns": h((4096, 700))},
            {"type": "frlockstat", "v": 2, "lock": LOCK, "kind": "frlock", "writes": 1500,
             "retries": 310, "waits": waits, "hold_ns": h((4096, 700), (8192, 800))}], blank=False)
    write(os.path.join(d, "writers.bt"), [
        {"type": "printf", "data": "Tracing...\n"},
        {"type": "hist", "data": {"@hold_ns": {
            "tk_core,timekeeping_advance": h((4096, 700)),
            ",frlock_stress_timer": h((2048, 0), (4096, 500), (8192, bt_timer_8k)),
            ",frlock_stress_writer": h((4096, 200), (8192, 300)),
            ",frlock_test_tracepoints": h((65536, 1))}}}])
    write(os.path.join(d, "readers.bt"), [
        {"type": "map", "data": {"@retries": {"tk_core,ktime_get": 3, ",frlock_stress_reader": 310,
                                              ",frlock_test_tracepoints": 2}}},
        {"type": "map", "data": {"@waits": {"tk_core,ktime_get": 1,
                                            ",frlock_stress_reader": bt_waits}}}])


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
            outputs(d, bt_timer_8k=499, bt_waits=39)
            rc, bad, _ = judge(d)
        self.assertEqual(rc, 1)
        self.assertEqual(len(bad), 3, bad)
        self.assertIn("hold-time samples, frlock-hold.bt == frlockstat == its writes (1499 == 1500 == 1500)", bad[0])
        self.assertIn("write sections per writer agree", bad[1])
        self.assertIn("waits for an open section, frlock-retries.bt == frlockstat (39 == 40; "
                      "run 1 of at most 4, its stress case 1500 ms, ftrace's hist trigger counted 40)", bad[2])

    def test_waits_after_runs(self):
        """agreement: waits seen in a later readers run pass, and the line names the runs before it"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d, bt_waits=7, runs=((1500, 0), (3000, 7)))
            rc, bad, good = judge(d)
        self.assertEqual((rc, bad), (0, []))
        self.assertIn("ok - agreement: readers: waits for an open section, frlock-retries.bt == "
                      "frlockstat (7 == 7; run 2 of at most 4, its stress case 3000 ms, ftrace's hist "
                      "trigger counted 7; the runs "
                      "before it saw no wait in 1500 ms)", good)

    def test_no_waits_in_any_run(self):
        """agreement: no wait in every readers run up to the bound fails, naming the runs"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d, bt_waits=0, runs=((1500, 0), (3000, 0), (6000, 0), (12000, 0)))
            rc, bad, _ = judge(d)
        self.assertEqual(rc, 1)
        self.assertEqual(bad, ["not ok - agreement: readers: waits for an open section, "
                               "frlock-retries.bt == frlockstat (0 == 0; run 4 of at most 4, its "
                               "stress case 12000 ms, ftrace's hist trigger counted 0; the runs before it saw no wait in 1500, "
                               "3000, 6000 ms)"])

    def test_two_rows(self):
        """agreement: a stress row that cannot be told apart (two rows written by its writers) fails"""
        with tempfile.TemporaryDirectory() as d:
            outputs(d)
            with open(os.path.join(d, "writers.fs"), "a") as f:
                f.write(json.dumps(site("kmalloc-512+0x0@frlock_stress_timer", "write",
                                        "frlock_stress_timer+0x40", 1)) + "\n")
            rc, bad, _ = judge(d)
        self.assertEqual(rc, 1)
        self.assertEqual(len(bad), 1, bad)
        self.assertIn("writers: frlockstat has one frlock row written by the stress case's writers only (None)", bad[0])

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
