# SPDX-License-Identifier: GPL-2.0
"""make bench at tiny sizes: it runs end to end and its report has every
part. Figures at these sizes mean nothing; make bench measures. Then bad
input to bench/run and bench/report.

make test-long (FRLOCK_TEST_LONG set) runs bench/run --smoke (about 2 min
of guests once its five kernels are built; the stock one alone is a full
build from cold); make test renders the raw lines of one such run,
recorded in tests/fixtures/bench-smoke, and judges the report the same
way. Run by tests/run's guest part, as `python3 -m frlock.tests bench`;
FRLOCK_TEST_LOGS=DIR keeps the results folders there."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

from frlock import TOP
from frlock.tests import harness

RUN = os.path.join(TOP, "bench", "run")
REPORT = os.path.join(TOP, "bench", "report")
LONG = bool(os.environ.get("FRLOCK_TEST_LONG"))


LOGS = os.environ.get("FRLOCK_TEST_LOGS") or tempfile.mkdtemp()
os.makedirs(LOGS, exist_ok=True)


def stock_cached():
    return subprocess.run([os.path.join(TOP, "kernel", "build"), "--variant", "stock",
                           "--cached-only", "--quiet"], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def missing_parts(path, want_stock):
    """What a bench.json lacks of a whole report: [] when every part is
    there."""
    with open(path) as f:
        r = json.load(f)
    problems = []
    locks = ("rwlock", "seqlock", "seqcount", "frlock")
    for readers in ("1", "2"):
        v = r["read"].get(readers)
        if not v or not all(v["ns_per_read"].get(k, 0) > 0 for k in locks):
            problems.append("read cost for %s readers" % readers)
        v = r["refscale"].get(readers)
        if not v or not all(v["ns_per_read"].get(k, 0) > 0
                            for k in ("rwlock", "seqcount", "frlock")):
            problems.append("refscale for %s readers" % readers)
    for lock in locks:
        got = sorted(r["lockout"].get(lock, {}))
        if got != ["0", "1", "2"]:
            problems.append("lockout %s: readers %s" % (lock, got))
    for clock in ("cycles", "clocksource"):
        for hold in ("1", "10", "100"):
            got = sorted(r.get("window", {}).get(clock, {}).get(hold, {}))
            if got != ["frlock", "seqcount"]:
                problems.append("mid-write readers, %s, %s us: %s" % (clock, hold, got))
    for mode in ("ftrace", "frlockstat", "makerun", "stacks", "bpftrace"):
        if mode not in r["write"]:
            problems.append("tracepoint cost with " + mode)
    # make run's frlockstat's records of each pair, kept for its events/s.
    tracing = os.path.join(os.path.dirname(path), "tracing")
    if not all(os.path.exists(os.path.join(tracing, "makerun-1.%s.ndjson" % f))
               for f in ("frlockstat", "load")):
        problems.append("make run's frlockstat records and the load's, of pair 1")
    if "makerun" not in r:
        problems.append("make run's cost as events/s x ns per event")
    for tool in ("bpftrace/none", "frlockstat/none", "makerun/none"):
        if tool not in r["tracing"]:
            problems.append("gettimeofday with " + tool)
    for kind in ("gtod", "paths"):
        t = r[kind] or {}
        if "events/before" not in t:
            problems.append(kind + ": events/before")
        if want_stock and "frlock/stock" not in t:
            problems.append(kind + ": frlock/stock")
    if not r["text"] or not r["text"]["before"] > 0:
        problems.append("text size with and without the seqcount events")
    if not r["layout"]:
        problems.append("tk_core layout, stock timekeeping and frlock")
    if len(r["goals"]) < (20 if want_stock else 18):
        problems.append("only %d goals judged" % len(r["goals"]))
    return problems


COMPLETE = ("bench smoke: report has read cost (4 locks, frlock_bench and refscale), lockout, "
            "mid-write readers, tracepoint cost (make run's set too), tracer overhead and make "
            "run's events, disabled-event cost, tk_core layout and goals")


class Fixture(unittest.TestCase):
    """make test: bench/report on the recorded smoke run."""
    out = os.path.join(LOGS, "bench-fixture")

    def test_1_renders(self):
        """bench smoke: bench/report renders a recorded bench/run --smoke (tests/fixtures/bench-smoke; make test-long runs one)"""
        shutil.rmtree(self.out, ignore_errors=True)
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "bench-smoke"), self.out)
        with open(os.path.join(self.out, "bench.txt"), "w") as f:
            p = subprocess.run([REPORT, "--json", os.path.join(self.out, "bench.json"),
                                os.path.join(self.out, "raw.txt")], stdout=f,
                               stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_2_complete(self):
        self.assertEqual(missing_parts(os.path.join(self.out, "bench.json"), True), [])

    test_2_complete.__doc__ = COMPLETE


class Smoke(unittest.TestCase):
    """make test-long: bench/run --smoke end to end."""
    out = os.path.join(LOGS, "bench-smoke")
    with_stock = None

    def test_0_stock(self):
        """bench smoke: gettimeofday frlock/stock"""
        self.skipTest("stock kernel not built: make kernel-stock")

    def test_1_runs(self):
        """bench smoke: bench/run --smoke completes"""
        args = ["--smoke", "--out", self.out] + ([] if self.with_stock else ["--no-stock"])
        log = self.out + ".log"
        t0 = time.monotonic()
        with open(log, "w") as f:
            p = subprocess.Popen([RUN] + args, stdin=subprocess.DEVNULL, stdout=f,
                                 stderr=subprocess.STDOUT)
            # Minutes of kernel builds and guests: never silent.
            while True:
                try:
                    rc = p.wait(30)
                    break
                except subprocess.TimeoutExpired:
                    with open(log, errors="replace") as r:
                        last = (r.read().splitlines() or [""])[-1]
                    print("# bench smoke: bench/run --smoke: %d s so far; %s"
                          % (time.monotonic() - t0, last[:100]), flush=True)
        with open(log) as f:
            self.assertEqual(rc, 0, "".join(f.readlines()[-15:]))

    def test_2_complete(self):
        self.assertEqual(missing_parts(os.path.join(self.out, "bench.json"), self.with_stock),
                         [])

    test_2_complete.__doc__ = COMPLETE

    def test_3_folder(self):
        """bench smoke: results folder complete, no .partial left"""
        self.assertTrue(os.path.getsize(os.path.join(self.out, "bench.txt")))
        self.assertFalse(os.path.exists(self.out + ".partial"))


class BadInput(unittest.TestCase):
    """Bad input: one line naming the problem, the usage, exit 2, no folder."""
    bad = os.path.join(LOGS, "bench-bad")

    def expect_fail(self, code, pattern, *cmd):
        harness.expect_fail(self, code, pattern, list(cmd))

    def test_1_runs_zero(self):
        """bench/run: --runs 0 is a usage error, nothing created"""
        harness.usage_fault(self, "bench/run: error: --runs wants 1 to 99, not '0'",
                            [RUN, "--runs", "0", "--out", self.bad])
        self.assertFalse(os.path.exists(self.bad))
        self.assertFalse(os.path.exists(self.bad + ".partial"))

    def test_1_exact_no_icount(self):
        """bench/run --exact: a QEMU without -icount is one line and exit 2, before anything is built"""
        fake = os.path.join(TOP, "host", "frlock", "tests", "fakeqemu.py")
        t0 = time.monotonic()
        harness.one_line_fault(self, 2, "--icount: '%s' has no -icount option" % fake,
                               [RUN, "--exact", "--out", self.bad],
                               env=dict(os.environ, QEMU=fake, FAKE_QEMU_NO_ICOUNT="1"))
        self.assertLess(time.monotonic() - t0, 10)
        self.assertFalse(os.path.exists(self.bad + ".partial"))

    def test_1_exact_boots(self):
        """bench/run --exact --boots 1: a usage error (a figure needs two boots)"""
        harness.usage_fault(self, "--boots wants 2 to 9, not '1'",
                            [RUN, "--exact", "--boots", "1", "--out", self.bad])

    def test_2_unknown_option(self):
        """bench/run: an unknown option is a usage error"""
        harness.usage_fault(self, "unrecognized arguments: --fast", [RUN, "--fast"])

    def test_3_hold_too_long(self):
        """bench/run: a hold not below the writer's period is a usage error"""
        self.expect_fail(2, "5000 us is not below the writer's 4000 us period",
                         RUN, "--holds", "1,5000", "--out", self.bad)

    def test_4_hold_twice(self):
        """bench/run: a hold given twice is a usage error"""
        self.expect_fail(2, "lists 10 us twice", RUN, "--holds", "10,010", "--out", self.bad)

    def test_5_workload(self):
        """bench/run: an unknown workload is a usage error"""
        self.expect_fail(2, "wants gtod, paths or both, comma-separated, not 'mmap'",
                         RUN, "--workloads", "mmap", "--out", self.bad)

    def test_6_existing_out(self):
        """bench/run: an existing --out is refused at once, its files untouched"""
        # Its own folder, so that it never depends on the smoke run (were
        # it missing, the check would run a whole bench): 30 s at most.
        d = os.path.join(LOGS, "bench-existing")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "mine"), "w") as f:
            f.write("keep\n")
        harness.expect_fail(self, 1, "exists", [RUN, "--smoke", "--out", d], timeout=30)
        self.assertEqual(os.listdir(d), ["mine"])
        with open(os.path.join(d, "mine")) as f:
            self.assertEqual(f.read(), "keep\n")
        self.assertFalse(os.path.exists(d + ".partial"))

    def test_7_report_missing(self):
        """bench/report: a missing file is one line, exit 2"""
        p = subprocess.run([REPORT, os.path.join(LOGS, "no-such-raw.txt")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn("No such file", p.stderr)

    def test_8_report_empty(self):
        """bench/report: a file with no bench lines is refused"""
        self.expect_fail(1, "no bench lines", REPORT, "/etc/hostname")


def load_tests(loader, tests, pattern):
    """make test's checks or make test-long's, in their order, then the bad input."""
    suite = unittest.TestSuite()
    if LONG:
        Smoke.with_stock = stock_cached()
        names = ["test_1_runs", "test_2_complete", "test_3_folder"]
        if not Smoke.with_stock:
            names.insert(0, "test_0_stock")
        suite.addTests(Smoke(n) for n in names)
    else:
        suite.addTests(loader.loadTestsFromTestCase(Fixture))
    suite.addTests(loader.loadTestsFromTestCase(BadInput))
    return suite
