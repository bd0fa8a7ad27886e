# SPDX-License-Identifier: GPL-2.0
"""bench/report's exact mode on shaped raw lines: a figure is given only
when its boots agree within its tolerance, else unresolved with both
values and exit status 3; the goals computed from the agreed figures."""

import os
import subprocess
import tempfile
import unittest

from frlock import TOP, benchreport

REPORT = os.path.join(TOP, "bench", "report")


def raw(calls2=7282338, stock2=3659973):
    """Two boots: gettimeofday(2) with nothing and with make run's set at
    200 writes/s, and per-call rates on the events and stock kernels."""
    lines = []
    for boot, (none, makerun, stock) in ((1, (3651946, 3641183, 3659973)),
                                         (2, (3651862, calls2 // 2, stock2))):
        lines += [f"bench exact-gtod writes=200 tool=none seconds=2 calls_per_s={none} boot={boot}",
                  f"bench exact-gtod writes=200 tool=makerun seconds=2 calls_per_s={makerun} "
                  f"boot={boot}",
                  f"bench exact-calls kernel=events workload=gtod per_s=3659900 boot={boot}",
                  f"bench exact-calls kernel=stock workload=gtod per_s={stock} boot={boot}",
                  f"bench exact-calls kernel=events workload=paths per_s=320800 boot={boot}",
                  f"bench exact-calls kernel=stock workload=paths per_s=320865 boot={boot}",
                  f"bench exact-write lock=frlock round=0 loops=20000 ns_per_write=184.02 "
                  f"events=off rep=1 boot={boot}",
                  f"bench exact-write lock=frlock round=0 loops=20000 ns_per_write=1464.50 "
                  f"events=frlockstat rep=1 boot={boot}"]
    return "\n".join(lines) + "\n"


class Exact(unittest.TestCase):
    def report(self, text, figures=True):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "raw.txt")
            with open(path, "w") as f:
                f.write(text)
            p = subprocess.run([REPORT, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
            rows, _ = benchreport.parse(path)
            return p, benchreport.exact(rows, path) if figures else None

    def test_agreed(self):
        """bench/report exact: boots within tolerance give one figure (their mean) and the goals; exit 0"""
        p, ex = self.report(raw())
        self.assertEqual(p.returncode, 0, p.stderr)
        share = ex["tracing"][200]["makerun"]["share"]
        self.assertAlmostEqual(share["value"], (1 - 3641183 / 3651946 + 1 - 3641169 / 3651862)
                               * 50, places=6)
        self.assertEqual(ex["write_added"]["frlockstat"]["value"], 1464.50 - 184.02)
        goals = {g["id"]: g for g in benchreport.exact_goals(ex)}
        self.assertTrue(goals["makerun"]["met"])
        # 3659900 against 3659973 calls/s: 0.0020% more instructions a call.
        self.assertTrue(goals["events-gtod"]["met"])
        self.assertIn("+0.0020%", goals["events-gtod"]["goal"])
        # 320800 against 320865: 0.0203%.
        self.assertIn("+0.0203%", goals["events-paths"]["goal"])
        self.assertIn("[met] make run's set", p.stdout)

    def test_disagree(self):
        """bench/report exact: boots beyond the tolerance are UNRESOLVED with both values, never averaged; exit 3 naming them"""
        # Stock's second boot 0.02% off the first: beyond 0.01%.
        p, ex = self.report(raw(stock2=3660705))
        self.assertEqual(p.returncode, 3, p.stderr)
        f = ex["calls"]["gtod"]["stock"]
        self.assertIsNone(f["value"])
        self.assertEqual(len(f["boots"]), 2)
        self.assertIn("UNRESOLVED (273.23 / 273.17", p.stdout)
        self.assertIn("instructions per gtod call, stock kernel", p.stderr)
        goals = {g["id"]: g for g in benchreport.exact_goals(ex)}
        self.assertTrue(goals["events-gtod"].get("unresolved"))
        self.assertIn("[UNRESOLVED] the seqcount events compiled in (and off) change "
                      "gettimeofday(2)", p.stdout)

    def test_over_bound(self):
        """bench/report exact: make run's set over 1% of the instructions is MISSED"""
        text = raw().replace("calls_per_s=3641183", "calls_per_s=3600000").replace(
            f"calls_per_s={7282338 // 2}", "calls_per_s=3599940")
        p, ex = self.report(text)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("[MISSED] make run's set", p.stdout)

    def test_one_boot(self):
        """bench/report exact: a figure from one boot is unresolved (exit 3)"""
        p, _ = self.report("\n".join(ln for ln in raw().splitlines() if "boot=2" not in ln) + "\n")
        self.assertEqual(p.returncode, 3)
        self.assertIn("only 1 boot(s) measured it", p.stdout)

    def test_no_boot(self):
        """bench/report exact: a line without boot=N is refused in one line (exit 1)"""
        p, _ = self.report("bench exact-calls kernel=stock workload=gtod per_s=1\n", False)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)


if __name__ == "__main__":
    unittest.main()
