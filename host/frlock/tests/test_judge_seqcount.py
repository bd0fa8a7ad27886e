# SPDX-License-Identifier: GPL-2.0
"""The seqcount workloads' judge (seqcount.py): the heap's retried locks
are told apart by their writers in the write hist."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from frlock.judges import seqcount

# Two dentries and a per-CPU hrtimer base, as the hist triggers print them.
RETRY = """\
{ lock: [ff11000001000040] 0xff11000001000040 , caller: [ffffffff81200000] d_alloc_parallel+0x1a/0x300 } hitcount:         30
{ lock: [ff11000001000080] 0xff11000001000080 , caller: [ffffffff81200000] lookup_fast+0x1a/0x300 } hitcount:          5
{ lock: [ff1100006e81cb10] 0xff1100006e81cb10 , caller: [ffffffff810cc000] hrtimer_active+0x2a/0x60 } hitcount:          1
{ lock: [ffffffff82009500] rename_lock , caller: [ffffffff81200000] d_path+0x1a/0x300 } hitcount:          7

Totals:
    Hits: 43
    Entries: 4
    Dropped: 0
"""
WRITE = """\
{ lock: [ff11000001000040] 0xff11000001000040 , caller: [ffffffff81208000] __d_move+0x4e/0x500 } hitcount:        100
{ lock: [ff11000001000080] 0xff11000001000080 , caller: [ffffffff81208000] __d_drop.part.0+0x4e/0x90 } hitcount:         10
{ lock: [ff1100006e81cb10] 0xff1100006e81cb10 , caller: [ffffffff810cca90] __hrtimer_run_queues+0x147/0x300 } hitcount:       2043
{ lock: [ffffffff82009500] rename_lock , caller: [ffffffff8120852d] d_move+0x4e/0x90 } hitcount:        251

Totals:
    Hits: 2404
    Entries: 4
    Dropped: 0
"""


class Workload(seqcount.Workload):
    def __init__(self, retry, write):
        self.name = "rename"
        self.retry, self.write = seqcount.Hist(retry), seqcount.Hist(write)


class SeqJudge(unittest.TestCase):
    def test_heap_by_writer(self):
        """judges/seqcount: a retried per-CPU hrtimer base is not counted as a dentry's d_seq"""
        heap = Workload(RETRY, WRITE).heap_retries()
        self.assertEqual(heap["dentry"], {"ff11000001000040": 30, "ff11000001000080": 5})
        self.assertEqual(heap["other"], {"ff1100006e81cb10": 1})
        self.assertEqual(heap["mixed"], {})
        self.assertEqual(seqcount.Hist(RETRY).count("rename_lock"), 7)

    def test_mixed_writers(self):
        """judges/seqcount: a retried lock written by dcache and by other code is mixed, and a lock with no write is unwritten"""
        write = WRITE.replace("__hrtimer_run_queues", "__d_move").replace(
            "ff11000001000080] 0xff11000001000080 , caller: [ffffffff81208000] __d_drop.part.0",
            "ff11000001000040] 0xff11000001000040 , caller: [ffffffff81208000] inode_set_flags")
        heap = Workload(RETRY, write).heap_retries()
        self.assertEqual(heap["mixed"], {"ff11000001000040": 30})
        self.assertEqual(heap["unwritten"], {"ff11000001000080": 5})
        self.assertEqual(heap["dentry"], {"ff1100006e81cb10": 1})


def timer_list(jiffies, now_ns):
    """The lines of /proc/timer_list the tick check reads, among others."""
    return ("Timer List Version: v0.9\nHRTIMER_MAX_CLOCK_BASES: 8\nnow at %d nsecs\n\ncpu: 0\n"
            " clock 0:\n  .base:       ffff\n  .idle_jiffies   : 0\n  .last_jiffies   : 0\n"
            "jiffies: %d\n\ncpu: 1\njiffies: %d\n" % (now_ns, jiffies, jiffies))


def tick(writes, jiffies, secs):
    """The tick workload's results (writes sections of jiffies_seq while
    jiffies advanced by jiffies in secs), judged: (not ok lines, ok lines)."""
    with tempfile.TemporaryDirectory() as d:
        hist = ("{ lock: [ffffffff82007a00] jiffies_seq , caller: [ffffffff81100000] "
                "tick_do_update_jiffies64+0x1a/0x300 } hitcount: %10d\n\nTotals:\n    Hits: %d\n"
                "    Entries: 1\n    Dropped: 0\n" % (writes, writes))
        files = {"tick.write": hist, "tick.retry": "Totals:\n    Hits: 0\n    Dropped: 0\n",
                 "tick.fs": json.dumps({"type": "frlockstat", "lock": "jiffies_seq", "writes": writes + 9,
                                        "retries": 0}) + "\n",
                 "tick.timer_list.begin": timer_list(4294892000, 3_000_000_000),
                 "tick.timer_list.end": timer_list(4294892000 + jiffies, 3_000_000_000 + int(secs * 1e9))}
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            seqcount.checks.failed = 0
            seqcount.tick(d)
    lines = out.getvalue().splitlines()
    return [x for x in lines if x.startswith("not ok")], [x for x in lines if x.startswith("ok")]


class Tick(unittest.TestCase):
    def test_late_ticks(self):
        """judges/seqcount: late ticks folded into fewer write sections pass: sections <= jiffies, jiffies at HZ on the guest's clock"""
        bad, good = tick(1210, 2001, 8.0)
        self.assertEqual(bad, [])
        self.assertIn("ok - tick: jiffies advanced about HZ=250 times a second of the guest's monotonic "
                      "clock (2001 in 8.000 s: 250.1/s)", good)
        self.assertIn("ok - tick: jiffies_seq is written at most once a jiffy, each section advancing "
                      "jiffies (1210 write sections <= 2001 jiffies)", good)

    def test_more_sections_than_jiffies(self):
        """judges/seqcount: more write sections than jiffies advanced fail"""
        bad, _ = tick(2002, 2001, 8.0)
        self.assertEqual(bad, ["not ok - tick: jiffies_seq is written at most once a jiffy, each section "
                               "advancing jiffies (2002 write sections <= 2001 jiffies)"])

    def test_wrong_hz(self):
        """judges/seqcount: jiffies at another rate than HZ on the guest's clock fail"""
        bad, _ = tick(1000, 2400, 8.0)
        self.assertEqual(bad, ["not ok - tick: jiffies advanced about HZ=250 times a second of the "
                               "guest's monotonic clock (2400 in 8.000 s: 300.0/s)"])

    def test_no_timer_list(self):
        """judges/seqcount: a window without its /proc/timer_list readings fails"""
        with tempfile.TemporaryDirectory() as d:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                seqcount.checks.failed = 0
                seqcount.tick(d)
        self.assertIn("not ok - tick: /proc/timer_list read around the window (jiffies and the "
                      "monotonic clock)", out.getvalue())


if __name__ == "__main__":
    unittest.main()
