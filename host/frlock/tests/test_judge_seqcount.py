# SPDX-License-Identifier: GPL-2.0
"""The seqcount workloads' judge (seqcount.py): the heap's retried locks
are told apart by their writers in the write hist; the tick; the
path-walk fallbacks against echild.bt's count."""

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


def judged(part, files):
    """The judge's part (seqcount.tick, seqcount.walk) on a results folder
    holding files ({name: text}): (not ok lines, ok lines)."""
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            seqcount.checks.failed = 0
            part(d)
    lines = out.getvalue().splitlines()
    return [x for x in lines if x.startswith("not ok")], [x for x in lines if x.startswith("ok")]


def tick(writes, jiffies, secs):
    """The tick workload's results (writes sections of jiffies_seq while
    jiffies advanced by jiffies in secs), judged: (not ok lines, ok lines)."""
    hist = ("{ lock: [ffffffff82007a00] jiffies_seq , caller: [ffffffff81100000] "
            "tick_do_update_jiffies64+0x1a/0x300 } hitcount: %10d\n\nTotals:\n    Hits: %d\n"
            "    Entries: 1\n    Dropped: 0\n" % (writes, writes))
    files = {"tick.write": hist, "tick.retry": "Totals:\n    Hits: 0\n    Dropped: 0\n",
             "tick.fs": json.dumps({"type": "frlockstat", "lock": "jiffies_seq", "writes": writes + 9,
                                    "retries": 0}) + "\n",
             "tick.timer_list.begin": timer_list(4294892000, 3_000_000_000),
             "tick.timer_list.end": timer_list(4294892000 + jiffies, 3_000_000_000 + int(secs * 1e9))}
    return judged(seqcount.tick, files)


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
        bad, _ = judged(seqcount.tick, {})
        self.assertIn("not ok - tick: /proc/timer_list read around the window (jiffies and the "
                      "monotonic clock)", bad)


def walk(echild, lock_fallbacks, lock="dentry.d_seq", other=0):
    """The walk workload's results: frlockstat -W charged lock_fallbacks to
    LOCK and `other` to no lock, all in path_lookupat; echild.bt counted
    `echild` path_lookupat returns of -ECHILD. Judged: (not ok, ok) lines."""
    by_fn = {"path_lookupat": {"lock": lock_fallbacks, "unlazy": 0, "other": other, "unseen": 0},
             "path_openat": {"lock": 0, "unlazy": 0, "other": 0, "unseen": 0},
             "path_parentat": {"lock": 0, "unlazy": 0, "other": 0, "unseen": 0}}
    recs = [{"type": "frlockstat", "lock": lock, "writes": 900, "retries": lock_fallbacks + 1,
             "walk_fallbacks": lock_fallbacks, "walk_redos": lock_fallbacks,
             "walk_redo_ns_sum": 40000 * lock_fallbacks,
             "walk_redo_ns_pct": {"p50": 65535, "p99": 65535, "max": 65535}},
            {"type": "frlockstat_walk", "fallbacks": lock_fallbacks + other, "by_function": by_fn,
             "nolock_redos": other}]
    files = {"walk.runs": "8 %d\n" % echild,
             "walk.fs": "".join(json.dumps(r) + "\n" for r in recs),
             "walk.bt": "Attaching 8 probes...\nTracing\n\n\n@echild[path_lookupat]: %d\n\n"
                        % echild,
             "walk.load": json.dumps({"type": "path_summary", "write_errors": 0}) + "\n"}
    return judged(seqcount.walk, files)


class Walk(unittest.TestCase):
    def test_agreement(self):
        """judges/seqcount: frlockstat -W's fallbacks equal to echild.bt's -ECHILD returns, charged to dentry.d_seq, pass"""
        bad, good = walk(9, 8, other=1)
        self.assertEqual(bad, [])
        self.assertIn("ok - walk: frlockstat -W counts path_lookupat's fallbacks as echild.bt's "
                      "kretprobe counts its -ECHILD returns under LOOKUP_RCU (9, 9; 0 walk program "
                      "runs missed)", good)

    def test_disagreement(self):
        """judges/seqcount: frlockstat -W counting fewer fallbacks than echild.bt, with no missed program run, fails"""
        bad, _ = walk(10, 8, other=1)
        self.assertEqual(bad, ["not ok - walk: frlockstat -W counts path_lookupat's fallbacks as "
                               "echild.bt's kretprobe counts its -ECHILD returns under LOOKUP_RCU "
                               "(9, 10; 0 walk program runs missed)"])

    def test_no_vfs_lock(self):
        """judges/seqcount: fallbacks charged to no lock of the rename storm (rename_lock, dentry.d_seq) fail"""
        bad, _ = walk(3, 3, lock="mount_lock")
        self.assertEqual(bad, ["not ok - walk: in a rename storm, frlockstat -W charged path-walk "
                               "fallbacks to rename_lock or dentry.d_seq (0)"])


if __name__ == "__main__":
    unittest.main()
