# SPDX-License-Identifier: GPL-2.0
"""frlock.ktap, the one parser of KUnit's console output (make test-long's
arm64 and i386 guests), on a console captured from the frlock kernel
(2026-12-07) and on that console edited: a skipped case, a failed case, a
parameterised case, a suite that never closed."""

import unittest

from frlock import ktap

# guest-frlock-kernel.console of a make test run, its suites' lines, with
# the kernel's other lines and the serial console's \r as they came.
CONSOLE = """[    1.092055] KTAP version 1\r
[    1.092124] 1..0\r
[    2.100000] random: crng init done\r
[    2.297109]     KTAP version 1\r
[    2.297109]     # Subtest: frlock\r
[    2.297109]     1..4\r
[    2.298639]     ok 1 frlock_test_static_init\r
[    2.301546]     ok 2 frlock_test_trylock\r
[    2.381821]     ok 3 frlock_test_tracepoints\r
[    3.461296]     # frlock_test_stress: writer=hardirq writes=909 hold_max_ns=40480\r
[    3.462432]     ok 4 frlock_test_stress\r
[    3.462489] # frlock: pass:4 fail:0 skip:0 total:4\r
[    3.462596] # Totals: pass:4 fail:0 skip:0 total:4\r
[    3.462739] ok 1 frlock\r
[    3.557610]     KTAP version 1\r
[    3.557743]     # Subtest: seqcount_trace\r
[    3.557809]     1..2\r
[    3.613373]     ok 1 seqcount_test_write_events\r
[    3.893349]     ok 2 seqcount_test_probe_reads_own_lock\r
[    3.893404] # seqcount_trace: pass:2 fail:0 skip:0 total:2\r
[    3.893669] ok 1 seqcount_trace\r
"""


class Parse(unittest.TestCase):
    def test_captured(self):
        """ktap: a captured console: both suites, their plans, every case passed"""
        suites = ktap.parse(CONSOLE.splitlines())
        self.assertEqual([s.name for s in suites], ["frlock", "seqcount_trace"])
        fr = ktap.find(suites, "frlock")
        self.assertEqual((fr.plan, fr.status), (4, "pass"))
        self.assertEqual([(c.name, c.status) for c in fr.cases],
                         [("frlock_test_static_init", "pass"), ("frlock_test_trylock", "pass"),
                          ("frlock_test_tracepoints", "pass"), ("frlock_test_stress", "pass")])
        self.assertEqual(len(ktap.find(suites, "seqcount_trace").cases), 2)
        self.assertIsNone(ktap.find(suites, "nope"))

    def test_skip_is_not_pass(self):
        """ktap: an "ok ... # SKIP" case and suite are skipped, not passed, with their reason"""
        text = CONSOLE.replace("ok 2 frlock_test_trylock", "ok 2 frlock_test_trylock # SKIP only on SMP")
        text = text.replace("ok 1 seqcount_trace", "ok 1 seqcount_trace # SKIP")
        suites = ktap.parse(text.splitlines())
        case = ktap.find(suites, "frlock").cases[1]
        self.assertEqual((case.name, case.status, case.reason), ("frlock_test_trylock", "skip", "only on SMP"))
        self.assertEqual(ktap.find(suites, "seqcount_trace").status, "skip")

    def test_failed(self):
        """ktap: a "not ok" case fails, and so does its suite's "not ok" line"""
        text = CONSOLE.replace("    ok 4 frlock_test_stress", "    not ok 4 frlock_test_stress")
        text = text.replace("] ok 1 frlock", "] not ok 1 frlock")
        fr = ktap.find(ktap.parse(text.splitlines()), "frlock")
        self.assertEqual((fr.cases[3].status, fr.status), ("fail", "fail"))

    def test_unclosed(self):
        """ktap: a suite cut off (the kernel hung or stopped in it) has no status, and its cases so far"""
        cut = CONSOLE.split("[    3.461296]")[0]
        fr = ktap.find(ktap.parse(cut.splitlines()), "frlock")
        self.assertIsNone(fr.status)
        self.assertEqual(len(fr.cases), 3)

    def test_parameterised(self):
        """ktap: a parameterised case's subtests stay its own; its result line is one case of the suite"""
        text = CONSOLE.replace(
            "[    2.301546]     ok 2 frlock_test_trylock\r\n",
            "        KTAP version 1\n        # Subtest: frlock_test_trylock\n"
            "        ok 1 param-0\n        not ok 2 param-1\n    not ok 2 frlock_test_trylock\n")
        fr = ktap.find(ktap.parse(text.splitlines()), "frlock")
        self.assertEqual([(c.name, c.status) for c in fr.cases][:3],
                         [("frlock_test_static_init", "pass"), ("frlock_test_trylock", "fail"),
                          ("frlock_test_tracepoints", "pass")])
        self.assertEqual((len(fr.cases), fr.status), (4, "pass"))


if __name__ == "__main__":
    unittest.main()
