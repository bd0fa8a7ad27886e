# SPDX-License-Identifier: GPL-2.0
"""The waits' judge (judges/waits.py) on runs shaped as tests/guest/waits.sh
leaves them: a run whose waits are all timed or bounded, and near the
hold, passes; a wait timed 0 ns, waits well short of the hold, or a
self-report without run counts fails."""

import json
import unittest

from frlock.judges import waits
from frlock.tests.harness import run_judge

HOLD_US = 150


def write_lines(ns):
    return "frlock_bench: write lock=frlock round=0 loops=200000 ns_per_write=%.2f\n" % ns


def self_rec(wbegin_ns, wend_ns, stats="on"):
    progs = {}
    for name, event, ns in (("btf_fr_wbegin", "frlock_write_begin", wbegin_ns),
                            ("btf_fr_wend", "frlock_write_end", wend_ns)):
        p = {"event": event, "recursion_misses": 0, "total": {"recursion_misses": 0}}
        if stats == "on":
            p.update(run_cnt=200100, run_time_ns=200100 * ns)
            p["total"].update(run_cnt=200100, run_time_ns=200100 * ns)
        progs[name] = p
    r = {"type": "frlockstat_self", "v": 2, "bpf_stats": stats, "by_prog": progs, "poller_cpu_ns": 1000}
    if stats != "on":
        r["bpf_stats_why"] = "BPF_ENABLE_STATS failed: -EINVAL"
    return json.dumps(r) + "\n"


def row(waits, bounded, wait_hist, hold_hist, open_=0):
    timed = sum(b["count"] for b in wait_hist)
    return json.dumps({"type": "frlockstat", "v": 2, "lock": "bench_fr+0x40", "kind": "frlock",
                       "writes": sum(b["count"] for b in hold_hist), "waits": waits, "waits_joined": timed,
                       "waits_bounded": bounded, "wait_ub_ns": bounded * 3000,
                       **({} if open_ is None else {"waits_open": open_}),
                       "wait_ns_sum": timed * 140000, "hold_ns_sum": 150000 * 500,
                       "hold_ns": hold_hist, "wait_ns": wait_hist}) + "\n"


def bucket(lo, count):
    return {"min": lo, "max": 2 * lo - 1 if lo > 1 else lo, "count": count}


TEXT = """self-cost over 3.00 s:
  PROGRAM          EVENT                        RUNS       RUN_NS   AVG_NS  MISSED
  btf_fr_wend      frlock_write_end             2400      2400000     1000       0
  poller: 3.1 ms CPU (user 0.4, system 2.7), 0.103% of one CPU; 812.0 ms to load and attach
"""
PAGE = """frlock_bpf_stats_enabled 1
frlock_prog_runs_total{prog="btf_fr_wend",event="frlock_write_end"} 2400
frlock_prog_run_seconds_total{prog="btf_fr_wend",event="frlock_write_end"} 0.002400000
frlock_poller_cpu_seconds_total{mode="user"} 0.4
"""


def good():
    files = {"hold_us": "%d\n" % HOLD_US, "text.txt": TEXT, "self.prom": PAGE,
             "rc": "write-self.1 0\nwrite-self.2 0\nhold 0\nhold.stat 0\nshort 0\nshort.stat 0\ntext 0\n",
             "write-off.dmesg": write_lines(1000) + write_lines(1010),
             "write-empty.dmesg": write_lines(1600) + write_lines(1610),
             "write-on.dmesg": write_lines(4000) + write_lines(4020),
             "write-self.dmesg": write_lines(4400) + write_lines(4410),
             "write-self.1.json": self_rec(900, 1100), "write-self.2.json": self_rec(910, 1090),
             "hold.json": row(480, 0, [bucket(131072, 470), bucket(65536, 10)], [bucket(131072, 500)]),
             "short.json": row(60, 40, [bucket(1024, 20)], [bucket(8192, 500)]),
             "hold.runs": "4000 0\n8000 37\n", "hold.bound": "4\n",
             "short.runs": "4000 12\n", "short.bound": "4\n"}
    return files


def judge(files):
    return run_judge(waits.main, files)


class WaitJudge(unittest.TestCase):
    def test_good(self):
        """judges/waits: waits timed or bounded near the hold, -S with run counts: every check passes"""
        rc, out = judge(good())
        self.assertEqual(rc, 0, out)
        self.assertNotIn("not ok", out)
        # (1605 - 1005) / 2 = 300 ns an empty hit, (4405 - 1005) / 2 = 1700 ns frlockstat -S's.
        self.assertIn("an empty program's hit 300 ns, frlockstat -S's 1700 ns", out)

    def test_zero_and_short(self):
        """judges/waits: a wait timed 0 ns, most waits short of the hold, no run counts: each fails"""
        files = good()
        files["short.json"] = row(60, 40, [bucket(0, 1), bucket(1024, 19)], [bucket(8192, 500)])
        files["hold.json"] = row(480, 0, [bucket(131072, 200), bucket(65536, 280)], [bucket(131072, 500)])
        files["write-self.2.json"] = self_rec(0, 0, stats="unavailable")
        rc, out = judge(files)
        self.assertEqual(rc, 1)
        self.assertIn("not ok - waits: a section as short as the dispatch", out)
        self.assertIn("not ok - waits: held 150 us: the median wait", out)
        self.assertIn("not ok - waits: frlockstat -S counted every write section the module ran (write-self.2", out)

    def test_open_at_the_detach(self):
        """judges/waits: a wait still open when frlockstat detached adds up; a record read before the detach (no waits_open) fails"""
        files = good()
        files["short.json"] = row(61, 40, [bucket(1024, 20)], [bucket(8192, 500)], open_=1)
        rc, out = judge(files)
        self.assertEqual(rc, 0, out)
        self.assertIn("20 timed (2800000 ns in all), 40 bounds (their writes' holds: 120000 ns in all), 1 open", out)
        files["short.json"] = row(60, 40, [bucket(1024, 20)], [bucket(8192, 500)], open_=None)
        rc, out = judge(files)
        self.assertEqual(rc, 1)
        self.assertIn("not ok - waits: a section as short as the dispatch", out)

    def test_no_wait_within_the_bound(self):
        """judges/waits: a phase whose runs reached their bound with no wait fails, naming its runs"""
        files = good()
        files["hold.runs"] = "4000 0\n8000 0\n16000 0\n32000 0\n"
        rc, out = judge(files)
        self.assertEqual(rc, 1)
        self.assertIn("not ok - waits: hold: ftrace counted a wait of the module's reader within 4 "
                      "runs of the writer, each twice as long as the one before (4000 ms: 0; "
                      "8000 ms: 0; 16000 ms: 0; 32000 ms: 0)", out)
        self.assertIn("ok - waits: short: ftrace counted a wait", out)

    def test_nothing_left(self):
        """judges/waits: no runs in the results share is one not ok"""
        rc, out = run_judge(waits.main, {}, missing=True)
        self.assertEqual(rc, 1)
        self.assertIn("not ok - waits: the guest left its runs in", out)


if __name__ == "__main__":
    unittest.main()
