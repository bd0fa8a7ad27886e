# SPDX-License-Identifier: GPL-2.0
"""tests/run's parts: a part that crashes, is killed or runs no check is a
not ok naming it, with its last lines (kunit.py counts "no tests ran" as a
failure); a part that fails its own checks is not counted twice."""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import unittest

from frlock.tests.protocol import Run


def run_part(argv, cwd=None):
    """Run argv as a part; its exit status, the counts and what was printed."""
    out = io.StringIO()
    with tempfile.TemporaryDirectory() as logs, contextlib.redirect_stdout(out):
        run = Run(logs)
        rc = run.part("the part", argv, cwd=cwd)
    return rc, run.counts, out.getvalue()


class Parts(unittest.TestCase):
    def test_exit_at_import(self):
        """protocol: a test module that calls sys.exit(3) at import is not ok, with the part's name and last lines"""
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "exits_at_import.py"), "w") as f:
                f.write("import sys\nprint('importing the module')\nsys.exit(3)\n")
            rc, counts, out = run_part([sys.executable, "-B", "-c", "import exits_at_import"], cwd=d)
        self.assertEqual(rc, 3)
        self.assertEqual(counts, {"ok": 0, "not ok": 1, "skip": 0}, out)
        self.assertIn("not ok - the part: exited 3 without a failed check; its last lines:\n", out)
        self.assertIn("#   importing the module\n", out)

    def test_killed(self):
        """protocol: a part killed by a signal is not ok, even after checks that passed"""
        rc, counts, out = run_part([sys.executable, "-B", "-c",
                                    "import os, signal\nprint('ok - first check', flush=True)\n"
                                    "print('about to die', flush=True)\n"
                                    "os.kill(os.getpid(), signal.SIGKILL)\n"])
        self.assertEqual(rc, -9)
        self.assertEqual(counts, {"ok": 1, "not ok": 1, "skip": 0}, out)
        self.assertIn("not ok - the part: killed by signal 9; its last lines:\n", out)
        self.assertIn("#   about to die\n", out)

    def test_no_check(self):
        """protocol: a part that exits 0 and prints no result is not ok"""
        rc, counts, out = run_part([sys.executable, "-B", "-c", "print('nothing to test')"])
        self.assertEqual(rc, 0)
        self.assertEqual(counts, {"ok": 0, "not ok": 1, "skip": 0}, out)
        self.assertIn("not ok - the part: ran no check (exit 0); its last lines:\n", out)
        self.assertIn("#   nothing to test\n", out)

    def test_own_failure_counted_once(self):
        """protocol: a part that reports its own failed check and exits 1 adds no second not ok"""
        rc, counts, out = run_part([sys.executable, "-B", "-c",
                                    "import sys\nprint('ok - a')\nprint('not ok - b')\nsys.exit(1)"])
        self.assertEqual(rc, 1)
        self.assertEqual(counts, {"ok": 1, "not ok": 1, "skip": 0}, out)
        self.assertNotIn("the part:", out)

    def test_clean_part(self):
        """protocol: a part whose checks pass and that exits 0 is only its own checks"""
        rc, counts, out = run_part([sys.executable, "-B", "-c", "print('ok - a')\nprint('skip - b (why)')"])
        self.assertEqual((rc, counts), (0, {"ok": 1, "not ok": 0, "skip": 1}))
        self.assertEqual(out, "ok - a\nskip - b (why)\n")

    def unit_part(self, module_text):
        """frlock.tests' own runner, run as tests/run's unit part on a
        package that holds it, what it imports, and one test module."""
        with tempfile.TemporaryDirectory() as d:
            pkg = os.path.join(d, "frlock", "tests")
            os.makedirs(pkg)
            open(os.path.join(pkg, "__init__.py"), "w").close()
            here = os.path.dirname(__file__)
            for src, dst in ((os.path.join(here, "..", "__init__.py"), os.path.join(d, "frlock")),
                             (os.path.join(here, "__main__.py"), pkg),
                             (os.path.join(here, "protocol.py"), pkg)):
                shutil.copy(src, dst)
            with open(os.path.join(pkg, "test_part.py"), "w") as f:
                f.write(module_text)
            return run_part([sys.executable, "-B", "-m", "frlock.tests", "test_part"], cwd=d)

    def test_unit_module_exit_at_import(self):
        """protocol: tests/run's unit part, given a module that exits 3 at import, is not ok with its name"""
        rc, counts, out = self.unit_part("import sys\nsys.exit(3)\n")
        self.assertEqual(rc, 3)
        self.assertEqual(counts["not ok"], 1, out)
        self.assertIn("not ok - the part: exited 3 without a failed check", out)

    def test_unit_failed_subtest(self):
        """protocol: a test whose subtest fails prints its own not ok line (unittest neither passes nor fails it)"""
        rc, counts, out = self.unit_part(
            "import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n"
            "        \"\"\"the test with subtests\"\"\"\n"
            "        for i in (1, 2):\n            with self.subTest(i=i):\n"
            "                self.assertEqual(i, 1)\n")
        self.assertEqual(rc, 1)
        self.assertEqual(counts, {"ok": 0, "not ok": 1, "skip": 0}, out)
        self.assertIn("not ok - the test with subtests\n", out)
        self.assertNotIn("the part:", out)

    def test_unit_no_test(self):
        """protocol: frlock.tests given a module without tests exits 1, and the part is not ok"""
        rc, counts, out = self.unit_part("VALUE = 1\n")
        self.assertEqual(rc, 1)
        self.assertEqual(counts["not ok"], 1, out)
        self.assertIn("not ok - the part: exited 1 without a failed check", out)
        self.assertIn("no test ran", out)

if __name__ == "__main__":
    unittest.main()
