# SPDX-License-Identifier: GPL-2.0
"""The teaching labs (labs/README.md), in the guest part of make test:
each runs in its quick mode, its result must say what the lab teaches
(judged here from the figures in its result.json, not from the lab's own
verdict), its printed verdict must agree, and its report must draw every
chart in headless Chromium with no console error. Bad lab names are
refused. Boots guests: run by tests/run's guest part, as
`python3 -m frlock.tests guest_labs`, not with the host's tests."""

import json
import os
import shutil
import subprocess
import sys
import time
import unittest

from frlock import TOP
from frlock.tests.test_dashboards import BROWSER, HAVE_BROWSER, NEED

LAB = os.path.join(TOP, "labs", "lab")


def logs():
    d = os.path.join(os.environ.get("FRLOCK_TEST_LOGS") or "/tmp/frlock-labs", "labs")
    os.makedirs(d, exist_ok=True)
    return d


# Per lab: what it teaches, and the rule that judges its result.json (r):
# (what the figures were, whether they show it).

def vdso(r):
    s, v = r["runs"]["syscall"], r["runs"]["vdso"]
    ok = (s["syscalls"] > 0 and s["gtod_retries"] > 0 and v["syscalls"] == 0 and
          v["gtod_retries"] == 0 and v["writes"] > 0 and
          # the explanation quotes this run, not a canned figure
          "{:,}".format(s["syscalls"]) in " ".join(r["text"]))
    return ("syscall run: %d gettimeofday syscalls, %d retries at ktime_get_real_ts64; vDSO "
            "run: %d syscalls, %d retries there, %d write sections" % (
                s["syscalls"], s["gtod_retries"], v["syscalls"], v["gtod_retries"],
                v["writes"])), ok


def rate(r):
    runs = sorted(r["runs"], key=lambda x: x["writes_s"])
    sh = [x["retried_share"] for x in runs]
    return ("writes/s %s, retries per read (at least the share that retried) %s" % (
        [round(x["writes_s"]) for x in runs], sh),
            runs[-1]["writes_s"] > 10 * runs[0]["writes_s"] and sh[-1] > 2 * sh[0] and
            sh[-1] >= max(sh) / 2)


def lockout(r):
    p = {lk: {n: v["wait_p99"] for n, v in r["lockout"][lk].items()} for lk in r["lockout"]}
    rw, fr = p["rwlock"], p["frlock"]
    return ("writer wait p99 (ns) by readers: %s" % p,
            rw["2"] >= 2 * max(rw["0"], 1) and rw["2"] >= 3 * max(fr["2"], 1))


def window(r):
    w = r["window"]
    short, long_ = [str(h) for h in r["holds_us"]]
    added = {lk: w[lk][long_]["lost_p50_ns"] - w[lk][short]["lost_p50_ns"] for lk in w}
    extra = {lk: w[lk][long_]["hold_p50"] - w[lk][short]["hold_p50"] for lk in w}
    return ("median loss of a read that met a write (ns), by hold: %s; the long section's extra "
            "hold (ns) %s, the loss it added %s" % (
                {lk: {h: w[lk][h]["lost_p50_ns"] for h in (short, long_)} for lk in w},
                {lk: round(x) for lk, x in extra.items()}, added),
            set(w) == {"frlock", "seqcount"} and
            all(0 < extra[lk] / 2 <= added[lk] <= 2 * extra[lk] for lk in w))


def starve(r):
    runs = sorted(r["runs"], key=lambda x: x["writes_s"])
    t = [x["held_per_million"] for x in runs]
    return ("writes/s %s, reads held back (waits and retries) per million reads %s" % (
        [round(x["writes_s"]) for x in runs], [round(x, 1) for x in t]),
        runs[-1]["writes_s"] > 10 * runs[0]["writes_s"] and t[-1] > 2 * t[0] and
        t[-1] >= max(t) / 2)


def paths(r):
    p = r["paths"]
    rl = {w: p[w]["retry"].get("rename_lock", 0) for w in p}
    ds = {w: p[w]["retry"].get("d_seq", 0) for w in p}
    return ("rename_lock retries %s, d_seq retries %s, renames/s %s" % (
        rl, ds, {w: p[w]["writes_per_s"] for w in p}),
        rl["rename-elsewhere"] > 0 and rl["rename"] > 0 and ds["rename"] > 0 and
        10 * ds["rename-elsewhere"] <= ds["rename"] and 10 * rl["none"] <= rl["rename-elsewhere"])


LABS = [
    ("vdso-vs-syscall", vdso, "the syscall run's reads retry at ktime_get_real_ts64; the vDSO "
     "run's reach no kernel reader and retry nowhere, though writes go on"),
    ("writer-rate", rate, "the retry share grows with the writer rate (the most write sections: "
     "above 2x the fewest, at least half the largest)"),
    ("lockout", lockout, "rwlock's writer wait p99 grows with readers (2 readers >= 2x none), "
     "frlock's stays 3x below rwlock's with the same readers"),
    ("write-window", window, "a write section as long as timekeeping_advance() makes a read that "
     "meets it lose about its extra hold more than the copy-only section does (half to twice "
     "it), at the median (the least disturbed of 5 runs), with frlock and with seqcount"),
    ("reader-starvation", starve, "reads are held back more often as the write rate grows "
     "(waits and retries per million reads: the most write sections' above 2x the fewest's, "
     "at least half the largest)"),
    ("path-walk", paths, "renames anywhere make rename_lock retry, renames of the looked-up "
     "files make d_seq retry (10x more than renames elsewhere), no writer almost none"),
]


def lab_class(order, name, rule, what):
    class Lab(unittest.TestCase):
        out = None

        @classmethod
        def setUpClass(cls):
            d = os.path.join(logs(), name)
            shutil.rmtree(d, ignore_errors=True)
            t0 = time.monotonic()
            with open(d + ".out", "w") as f:
                cls.rc = subprocess.run([LAB, "--quick", "--out", d, name],
                                        stdin=subprocess.DEVNULL, stdout=f,
                                        stderr=subprocess.STDOUT).returncode
            cls.took = time.monotonic() - t0
            cls.dir = d
            cls.text = open(d + ".out").read()
            cls.result = None
            if os.path.exists(os.path.join(d, "result.json")):
                with open(os.path.join(d, "result.json")) as f:
                    cls.result = json.load(f)

        def test_1_runs(self):
            print("#   lab %s: %d s, results in %s" % (name, self.took, self.dir))
            self.assertEqual(self.rc, 0, self.text[-2000:])
            self.assertTrue(os.path.getsize(os.path.join(self.dir, "report.html")))
            self.assertLess(self.took, 120, "took %d s" % self.took)

        def test_2_teaches(self):
            self.assertIsNotNone(self.result, "no result.json: " + self.text[-1000:])
            figures, ok = rule(self.result)
            print("#   lab %s: %s" % (name, figures))
            type(self).shows = ok
            self.assertTrue(ok, figures)

        def test_3_verdict(self):
            self.assertIsNotNone(self.result, "no result.json")
            _, shows = rule(self.result)
            want = ("the run shows what the lab teaches" if shows else
                    "the run does NOT show what the lab teaches")
            self.assertIn("lab %s: %s" % (name, want), self.text)

        @unittest.skipUnless(HAVE_BROWSER, NEED)
        def test_4_report(self):
            png = os.path.join(self.dir, "report.png")
            p = subprocess.run(["/usr/bin/python3", BROWSER, "file://" + os.path.join(
                self.dir, "report.html"), "--ready", "#lab-drawn", "--png", png, "--timeout",
                "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            b = json.loads(p.stdout)
            self.assertEqual(b["errors"], [])
            self.assertTrue(b["canvases"] and all(c[1] > 0 and c[2] > 0 for c in b["canvases"]),
                            b["canvases"])

    Lab.test_1_runs.__doc__ = ("lab %s: runs in its quick mode and writes its report "
                               "(under 120 s)" % name)
    Lab.test_2_teaches.__doc__ = "lab %s: %s" % (name, what)
    Lab.test_3_verdict.__doc__ = "lab %s: its printed verdict agrees with its figures" % name
    Lab.test_4_report.__doc__ = ("lab %s: report.html draws every chart in headless Chromium, "
                                 "no console errors" % name)
    Lab.__name__ = Lab.__qualname__ = "Lab%d" % order
    return Lab


for i, (n, f, w) in enumerate(LABS):
    globals()["Lab%d" % i] = lab_class(i, n, f, w)
del i, n, f, w


class BadName(unittest.TestCase):
    def test_no_name(self):
        """labs: make lab without NAME lists the labs and exits 2"""
        p = subprocess.run(["make", "-s", "-C", TOP, "lab"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("which lab? NAME=<lab>", p.stdout)
        self.assertIn("reader-starvation", p.stdout)

    def test_unknown(self):
        """labs: labs/lab with an unknown name lists the labs and exits 2"""
        p = subprocess.run([LAB, "no-such-lab"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        self.assertEqual(p.returncode, 2, p.stdout)
        self.assertIn("no lab 'no-such-lab'", p.stdout)
        self.assertIn("vdso-vs-syscall", p.stdout)


def load_tests(loader, tests, pattern):
    """The labs in their own order, then the bad names."""
    suite = unittest.TestSuite()
    for i in range(len(LABS)):
        suite.addTests(loader.loadTestsFromTestCase(globals()["Lab%d" % i]))
    suite.addTests(loader.loadTestsFromTestCase(BadName))
    return suite


if __name__ == "__main__":
    sys.exit(unittest.main())
