# SPDX-License-Identifier: GPL-2.0
"""The labs print what the view computes: each lab that reads feeds is
run (its analysis, as labs/lab runs it) on feeds whose view is computed
here, and every figure of its printed table is compared with the view's
(View.run_summary) for the same feed; the lockout and write-window labs'
with bench/report's for the same frlock_bench lines. The feeds: the one
make fixtures recorded (frlockstat v4 on the frlock kernel) and a
synthetic one of another shape. (path-walk reads per-instance counts,
no feed and no bench line.)"""

import contextlib
import io
import os
import re
import shutil
import tempfile
import unittest
import unittest.mock

from frlock import TOP, benchreport, labs, view
from frlock.tests import synth as S


def n_(x):
    return "{:,}".format(int(round(x)))


def synthetic_run():
    """Four intervals of tk_core with a faster writer than the fixture's:
    gettimeofday's retries, the kernel's own, waits, and gtod-load's lines."""
    recs = []
    for i in range(1, 5):
        ts = 1000.0 + i
        recs += [S.caller("tk_core", "write", "do_adjtimex+0x235", 5000, ns=5000 * 3000),
                 S.caller("tk_core", "retry", "ktime_get_real_ts64+0xff", 40 + i,
                          "__x64_sys_gettimeofday+0x33"),
                 S.caller("tk_core", "retry", "ktime_get+0xca", 3, "tick_sched_timer+0x19"),
                 S.caller("tk_core", "wait", "ktime_get_real_ts64+0xdb", 9,
                          "__x64_sys_gettimeofday+0x33"),
                 S.stat("tk_core", "frlock", ts, 5000, retries=43 + i, waits=9,
                        wait_ns=S.hist((0, 5), (2048, 4)), wait_ns_sum=4 * 2500),
                 S.load(ts + 0.02, 300000.0, writes=4900.0)]
    recs += [S.summary(1200000, 4.0, writes=4900.0, write_rate=5000),
             {"type": "feed_end", "status": 0}]
    return b"\n".join(S.lines(recs)) + b"\n"


def summary_of(path):
    v = view.View()
    with open(path, "rb") as f:
        for line in f:
            v.add_line(line.rstrip(b"\n"))
    v.end()
    return v.run_summary()


def table_rows(out, columns):
    """The printed table (text_table: cells apart by two spaces or more):
    {first cell: the other cells} for the rows of len(columns) cells."""
    rows = {}
    for line in out.splitlines():
        cells = re.split(r" {2,}", line.strip())
        if len(cells) == columns:
            rows[cells[0]] = cells[1:]
    return rows


class LabsPrintTheView(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="frlock-labs-")
        # the report inlines Chart.js: any script will do for this test
        stub = os.path.join(self.dir, "chart.js")
        with open(stub, "w") as f:
            f.write("/* stub */\n")
        env = {"FRLOCK_CHARTJS": stub}
        self.env = unittest.mock.patch.dict(os.environ, env)
        self.env.start()

    def tearDown(self):
        self.env.stop()
        shutil.rmtree(self.dir)

    def write(self, name, data):
        with open(os.path.join(self.dir, name), "wb") as f:
            f.write(data)

    def analyse(self, name):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            labs.analyse(name, self.dir)
        return out.getvalue()

    def rate_runs(self):
        """A run at the fixture's writer rate (500/s) and one at 5,000/s:
        the view's summaries, slowest writer first as the labs sort them."""
        with open(S.FIXTURE, "rb") as f:
            self.write("run-syscall-500.ndjson", f.read())
        self.write("run-syscall-5000.ndjson", synthetic_run())
        return [summary_of(os.path.join(self.dir, "run-syscall-%d.ndjson" % w))
                for w in (500, 5000)]

    def test_vdso_vs_syscall(self):
        """labs: vdso-vs-syscall prints the view's reads, write sections, gettimeofday's and the kernel's retries and its bound on the reads that retried"""
        with open(S.FIXTURE, "rb") as f:
            feed = f.read()
        self.write("run-syscall-500.ndjson", feed)
        # the same feed, as if its load had read through the vDSO
        self.write("run-vdso-500.ndjson", feed.replace(b'"via":"syscall"', b'"via":"vdso"'))
        self.write("run-syscall-500.syscalls", b"10783941\n")
        self.write("run-vdso-500.syscalls", b"0\n")
        out = self.analyse("vdso-vs-syscall")
        s, v = (summary_of(os.path.join(self.dir, "run-%s-500.ndjson" % via))
                for via in ("syscall", "vdso"))
        self.assertEqual((s["via"], v["via"]), ("syscall", "vdso"))
        rows = table_rows(out, 3)
        self.assertEqual(rows["gettimeofday calls by the load"],
                         [n_(s["load_reads"]), n_(v["load_reads"])])
        self.assertEqual(rows["write sections of tk_core /s"],
                         ["%.0f" % s["writes_s"], "%.0f" % v["writes_s"]])
        self.assertEqual(rows["retries at ktime_get_real_ts64 (gettimeofday)"],
                         [n_(s["gtod_retries"]), n_(v["gtod_retries"])])
        self.assertEqual(rows["retries by the kernel's own readers"],
                         [n_(s["other_retries"]), n_(v["other_retries"])])
        # a bound, printed as one: retries over the reads of the same windows
        self.assertTrue(s["cells"]["retried_share"].startswith("≤"))
        self.assertEqual(rows["reads that retried"][0], s["cells"]["retried_share"])
        self.assertIn(s["cells"]["retried_share"] + " of the reads retried", out.replace("\n", " "))

    def test_writer_rate(self):
        """labs: writer-rate prints, per run, the view's write sections, time in writes, reads, retries and its bound on the reads that retried"""
        runs = self.rate_runs()
        rows = table_rows(self.analyse("writer-rate"), 10)
        for r in runs:
            got = rows[n_(r["write_rate"])]
            self.assertEqual(got[1], "%.0f" % r["writes_s"])
            self.assertEqual(got[3], labs.pct(r["in_write"], 2))
            self.assertEqual(got[5:8], [n_(r["reads"]), n_(r["gtod_retries"]),
                                        r["cells"]["retried_share"]])
            self.assertTrue(got[7].startswith("≤"))

    def test_skipped_lines_are_printed(self):
        """labs: a line of a feed that the view skipped is named in what the lab prints"""
        self.rate_runs()
        path = os.path.join(self.dir, "run-syscall-5000.ndjson")
        with open(path) as f:
            lines = f.readlines()
        # one line inside the feed, one after its feed_end (which the
        # server and the labs count and do not read)
        lines.insert(len(lines) - 1, "not json\n")
        self.assertIn('"feed_end"', lines[-1])
        with open(path, "w") as f:
            f.writelines(lines + ["after the end\n"])
        out = self.analyse("writer-rate")
        self.assertIn("lab writer-rate: run-syscall-5000.ndjson: skipped: 1 malformed lines, "
                      "0 records of unknown type, 0 of a newer schema; 1 lines after feed_end "
                      "not read", out)
        self.assertNotIn("run-syscall-500.ndjson: skipped", out)

    def test_reader_starvation(self):
        """labs: reader-starvation prints, per run, the view's retries, waits, reads held back and the percentiles of one loss, bounds marked"""
        runs = self.rate_runs()
        rows = table_rows(self.analyse("reader-starvation"), 10)
        for r in runs:
            got = rows[n_(r["write_rate"])]
            self.assertEqual(got[1], "%.0f" % r["writes_s"])
            self.assertEqual(got[3:6], [n_(r["retries"]), n_(r["waits"]),
                                        "%.0f" % r["held_per_million"]])
            self.assertEqual(got[6:], r["cells"]["lost"])
        # both runs' losses include retries, so each percentile is a bound:
        # the synthetic run's 9 waits (5 of 0 ns, 4 in [2K, 4K)) under its
        # 44 to 47 retries a second, each in [8K, 16K)
        self.assertTrue(all(c.startswith("≥") for c in runs[0]["cells"]["lost"]))
        self.assertEqual(runs[1]["cells"]["lost"], ["≥8K", "≥8K", "≥8K"])

    def test_lockout(self):
        """labs: lockout prints bench/report's writer waits and holds for the same frlock_bench lines"""
        raw = os.path.join(TOP, "tests", "fixtures", "bench-smoke", "raw.txt")
        with open(raw, "rb") as f:
            lines = [x for x in f.read().splitlines(True) if x.startswith(b"bench lockout ")]
        self.write("lockout.txt", b"".join(lines))
        rows, other = benchreport.parse(os.path.join(self.dir, "lockout.txt"))
        self.assertEqual(other, 0)
        res = benchreport.lockout(rows)
        out = self.analyse("lockout")
        printed = [re.split(r" {2,}", x.strip()) for x in out.splitlines()]
        for lk in ("rwlock", "seqlock", "frlock"):
            for readers, x in res[lk].items():
                self.assertIn([lk, str(readers), labs.us(x["wait_p50"]), labs.us(x["wait_p99"]),
                               labs.us(x["wait_max"]), labs.us(x["hold_p50"]),
                               n_(x["samples"]), n_(x["reads"])], printed, (lk, readers))

    def test_write_window(self):
        """labs: write-window prints bench/report's figures for the same frlock_bench lines: the least of the runs' median losses, the median of the rest"""
        self.write("advance.txt", b"138000\n139000\n141000\n")
        lines = []
        for rep in (1, 2, 3):
            for lock in ("frlock", "seqcount"):
                for hold in (0, 139):
                    for writer in ("off", "on"):
                        on = writer == "on"
                        lines.append(
                            "bench window lock=%s clock=clocksource hold_us=%d period_us=4000 "
                            "readers=1 writer=%s reads=%d retries=%d retried=%d lost_ns=%d "
                            "lost_reads=%d lost_p50=%d lost_dropped=0 writes=%d hold_p50=%d "
                            "ns_per_read=%.2f rep=%d" % (
                                lock, hold, writer, 200000 + 1000 * rep, 30 * on * rep,
                                29 * on * rep, 5000000 * (1 + on * (hold + rep)),
                                40 * on, (5000 + 1000 * hold + 700 * rep) * on,
                                180 * on, (2000 + 1000 * hold) * on, 3000.0 + rep, rep))
        self.write("window.txt", ("\n".join(lines) + "\n").encode())
        out = self.analyse("write-window")
        rows, other = benchreport.parse(os.path.join(self.dir, "window.txt"))
        self.assertEqual(other, 0)
        runs = [benchreport.window([r for r in rows if r["rep"] == rep])["clocksource"]
                for rep in (1, 2, 3)]
        got = {}
        for line in out.splitlines():
            cells = re.split(r" {2,}", line.strip())
            if len(cells) == 9 and cells[0] in ("frlock", "seqcount"):
                got[(cells[0], cells[1])] = cells[2:]
        self.assertEqual(len(got), 4, out)
        for lock in ("frlock", "seqcount"):
            for hold, name in ((0, "copy only"), (139, "139 us longer")):
                per = [w[hold][lock] for w in runs]
                row = got[(lock, name)]
                self.assertEqual(row[1], n_(sum(x["writes"] for x in per)))
                self.assertEqual(row[4], labs.us(min(x["lost_p50_ns"] for x in per)))
                self.assertEqual(row[2], labs.pct(sorted(x["retry_share"] for x in per)[1]))


if __name__ == "__main__":
    unittest.main()
