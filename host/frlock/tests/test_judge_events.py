# SPDX-License-Identifier: GPL-2.0
"""The trace text parser and its joins (judges/eventtext.py) and their judge
(judges/events.py), on text shaped as ftrace, trace-cmd and perf print it: a
trace whose reads all join passes; a retry whose write is inside the window
but missing is bad; reads at the window's edges are counted, up to four."""

import unittest

from frlock.judges import eventtext as et
from frlock.judges import events
from frlock.tests.harness import run_judge

TK = "ffffffff824a9540"
RL = "ffffffff82009500"


def ftrace(ev, lock, seq, caller):
    return "gtod-load-208     [000] d.h..     5.386876: %s: lock=%s seq=%d caller=%s+0x4fd/0x5a0" % (
        ev, lock, seq, caller)


def tracecmd(ev, lock, seq, caller):
    return "       gtod-load-180   [000]     4.241736: %s:    lock=0x%s seq=%d caller=%s+0xff" % (
        ev, lock.lstrip("0"), seq, caller)


def perf(ev, lock, seq, caller):
    sys_ = ev.split("_")[0]
    return "   swapper     0 [000]   305.985308: %s:%s: lock=0x%s seq=%d caller=%s+0x1e3" % (
        sys_, ev, lock, seq, caller)


def section(fmt, sys_, lock, seq, writer, reader=None, wait=None):
    out = [fmt(sys_ + "_write_begin", lock, seq, writer)]
    if reader:
        out.append(fmt(sys_ + "_read_retry", lock, seq, reader))
    if wait:
        out.append(fmt(sys_ + "_read_wait", lock, seq, wait))
    out.append(fmt(sys_ + "_write_end", lock, seq, writer))
    return out


class Parse(unittest.TestCase):
    def test_formats(self):
        """judges/eventtext: ftrace's, trace-cmd's and perf's lines read as the same record"""
        for fmt in (ftrace, tracecmd, perf):
            (r,) = et.parse([fmt("frlock_read_retry", TK, 2044, "ktime_get_real_ts64")])
            self.assertEqual(r[:5], ("frlock", "frlock_read_retry", TK, 2044, "ktime_get_real_ts64"))
            self.assertTrue(et.well_formed(r))

    def test_malformed(self):
        """judges/eventtext: a record without its address, count or caller is not well formed; other lines are not records"""
        recs = et.parse(["x: frlock_read_retry: lock=zz seq= caller=", "sched_switch: prev=1", ""])
        self.assertEqual(len(recs), 1)
        self.assertFalse(et.well_formed(recs[0]))


class Join(unittest.TestCase):
    def test_all_join(self):
        """judges/eventtext: every retry, wait, begin and end joined on (lock, seq): ok, nothing at the edges"""
        recs = et.parse(section(ftrace, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64")
                        + section(ftrace, "frlock", TK, 4, "do_adjtimex", wait="ktime_get"))
        summary, notes, ok = et.join(recs)
        self.assertTrue(ok, notes)
        self.assertEqual(summary, "begins=2 ends=2 paired=2 unpaired_at_edges=0 retries=1 joined=1 "
                         "waits=1 ended=1 edge=0 bad=0 dup=0")

    def test_write_printed_twice(self):
        """judges/eventtext: a write event's line printed again, next or later, is counted as dup and left out; a second write at the same (lock, seq) on another line is bad"""
        body = section(perf, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64")
        end = [r for r in body if "write_end" in r]
        summary, notes, ok = et.join(et.parse(body + end + section(perf, "frlock", TK, 4, "do_adjtimex")))
        self.assertTrue(ok, notes)
        self.assertIn("begins=2 ends=2 paired=2", summary)
        self.assertIn("bad=0 dup=1", summary)
        self.assertIn("dup: " + end[0].strip() + " (printed twice)", notes)
        # perf repeated blocks too: the repeat a few lines after its first.
        summary, notes, ok = et.join(et.parse(body + section(perf, "frlock", TK, 4, "do_adjtimex") + end))
        self.assertTrue(ok, notes)
        self.assertIn("bad=0 dup=1", summary)
        # A read repeated: kept at microseconds, a dup at nanoseconds.
        retry = [r for r in body if "read_retry" in r]
        summary, notes, ok = et.join(et.parse(body + retry))
        self.assertIn("retries=2 joined=2", summary)
        nano = [r.replace("305.985308", "305.985308123") for r in body]
        retry = [r for r in nano if "read_retry" in r]
        summary, notes, ok = et.join(et.parse(nano + retry))
        self.assertIn("retries=1 joined=1", summary)
        self.assertIn("dup=1", summary)
        again = [r.replace("305.985308", "305.985309") for r in end]
        summary, notes, ok = et.join(et.parse(body + again))
        self.assertFalse(ok)
        self.assertIn("bad=1 dup=0", summary)

    def test_missing_write_is_bad(self):
        """judges/eventtext: a retry whose write lies inside the window but is missing is bad, and named"""
        recs = et.parse(section(ftrace, "frlock", TK, 2, "timekeeping_advance")
                        + [ftrace("frlock_read_retry", TK, 4, "ktime_get_real_ts64")]
                        + section(ftrace, "frlock", TK, 6, "timekeeping_advance"))
        summary, notes, ok = et.join(recs)
        self.assertFalse(ok)
        self.assertIn("bad=1", summary)
        self.assertIn("no frlock_write_begin with lock %s seq 4" % TK, notes[0])

    def test_edges(self):
        """judges/eventtext: reads and writes cut by the window's ends are edges, at most four reads of them"""
        head = [ftrace("frlock_read_retry", TK, 0, "ktime_get_real_ts64"),
                ftrace("frlock_write_end", TK, 0, "timekeeping_advance")]
        tail = [ftrace("frlock_write_begin", TK, 8, "timekeeping_advance"),
                ftrace("frlock_read_wait", TK, 8, "ktime_get")]
        body = section(ftrace, "frlock", TK, 2, "timekeeping_advance")
        summary, notes, ok = et.join(et.parse(head + body + tail))
        self.assertTrue(ok, notes)
        self.assertIn("unpaired_at_edges=2", summary)
        self.assertIn("edge=2", summary)
        many = [ftrace("frlock_read_retry", TK, 0, "ktime_get_real_ts64")] * 5
        self.assertFalse(et.join(et.parse(many + body))[2])

    def test_edges_one_event_at_a_time(self):
        """judges/eventtext: perf enables begin before end and disables begin first: a begin without its end first, an end without its begin last, are edges; in the middle they are bad"""
        body = section(perf, "frlock", TK, 4, "timekeeping_advance")
        head = [perf("frlock_write_begin", TK, 2, "timekeeping_advance")]
        tail = [perf("frlock_write_end", TK, 6, "timekeeping_advance")]
        summary, notes, ok = et.join(et.parse(head + body + tail))
        self.assertTrue(ok, notes)
        self.assertIn("begins=2 ends=2 paired=1 unpaired_at_edges=2", summary)
        middle = body + head + section(perf, "frlock", TK, 8, "timekeeping_advance")
        summary, notes, ok = et.join(et.parse(section(perf, "frlock", TK, 0, "timekeeping_advance") + middle))
        self.assertFalse(ok)
        self.assertIn("bad: lock %s seq 2: 1 write_begin, 0 write_end" % TK, notes)

    def test_heap_and_writers(self):
        """judges/eventtext: retries of locks in the heap join apart from the kernel image's, each naming its writer"""
        recs = et.parse(section(tracecmd, "seqcount", "ff1100000046ab44", 2, "__d_move", "__legitimize_path")
                        + section(tracecmd, "seqcount", RL, 2, "d_move", "prepend_path"))
        n, j, writers = et.joined_reads(recs, "seqcount_read_retry", "heap")
        self.assertEqual((n, j, dict(writers)), (1, 1, {"__d_move": 1}))
        n, j, writers = et.joined_reads(recs, "seqcount_read_retry", RL)
        self.assertEqual((n, j, dict(writers)), (1, 1, {"d_move": 1}))


class Judge(unittest.TestCase):
    def judge(self, files, names):
        return run_judge(events.main, files, names)

    def test_perf_complete(self):
        """judges/events: a perf script text with all eight events, joined, passes every check"""
        lines = (section(perf, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64", "ktime_get")
                 + section(perf, "seqcount", RL, 2, "d_move", "prepend_path", "path_init"))
        meta = "tk_core %s\nrename_lock %s\nlost 0\n" % (TK, RL)
        rc, out = self.judge({"perf.txt": "\n".join(lines), "perf.meta": meta}, ["perf"])
        self.assertEqual(rc, 0, out)
        self.assertNotIn("not ok", out)
        self.assertIn("ok - perf script: seqcount:seqcount_read_wait with lock, seq and caller (1 events", out)

    def test_rename_storm_rounds(self):
        """tracejudge: the rename check names the storm's rounds and bound; a storm that hit its bound with no retry fails, saying so"""
        storm = ("rename_first_s 3\nrename_rounds %d\nrename_round_s 2\nrename_rounds_max 10\n"
                 "rename_retries_counted %s\n")
        meta = "tk_core %s\nrename_lock %s\nlost 0\n" % (TK, RL)
        lines = (section(perf, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64")
                 + section(perf, "seqcount", RL, 2, "d_move", "prepend_path"))
        rc, out = self.judge({"perf.txt": "\n".join(lines), "perf.meta": meta + storm % (2, "1")}, ["perf"])
        self.assertIn("ok - perf script: rename_lock retried under the renames (1; the storm ran 3 s, "
                      "then 2 of at most 10 rounds of 2 s until ftrace counted a rename_lock retry; "
                      "counted: 1)", out)
        lines = section(perf, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64")
        rc, out = self.judge({"perf.txt": "\n".join(lines), "perf.meta": meta + storm % (10, "0")}, ["perf"])
        self.assertEqual(rc, 1)
        self.assertIn("not ok - perf script: rename_lock retried under the renames (0; the storm ran 3 s, "
                      "then 10 of at most 10 rounds", out)
        self.assertIn("counted: 0; the bound was hit: no getcwd() overlapped a rename in 23 s)", out)
        rc, out = self.judge({"perf.txt": "\n".join(lines), "perf.meta": meta}, ["perf"])
        self.assertIn("not ok - perf script: rename_lock retried under the renames (0; the guest reported "
                      "no rename storm rounds)", out)

    def test_lost_and_missing(self):
        """judges/events: events perf lost fail the join; a missing recording is a not ok line, an unknown name exit 2"""
        lines = section(perf, "frlock", TK, 2, "timekeeping_advance", "ktime_get_real_ts64")
        meta = "tk_core %s\nrename_lock %s\nlost 7\n" % (TK, RL)
        rc, out = self.judge({"perf.txt": "\n".join(lines), "perf.meta": meta}, ["perf", "trace-cmd"])
        self.assertEqual(rc, 1)
        self.assertIn("not ok - perf script: the joins need every event, and perf lost 7", out)
        self.assertIn("not ok - trace-cmd: the guest left its recording in", out)
        self.assertIn("not ok - perf script: seqcount:seqcount_write_begin with lock, seq and caller (0 events", out)
        with self.assertRaises(SystemExit) as refused:
            self.judge({}, ["nope"])
        self.assertEqual(refused.exception.code, 2)


if __name__ == "__main__":
    unittest.main()
