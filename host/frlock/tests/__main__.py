# SPDX-License-Identifier: GPL-2.0
"""The package's tests, in the project's one test protocol: one line per
test, "ok - ...", "not ok - ..." or "skip - ..." (its docstring's first
line), "# ..." diagnostics, as tests/run relays them.

usage: cd host && python3 -m frlock.tests [MODULE...]   (default: every
test_*.py here). FRLOCK_TEST_LOGS=DIR keeps the tests' files there.
Exit status 1 if a test failed or none ran.
"""

import sys
import time
import unittest

from frlock.tests.protocol import print_check, print_diag


class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.t0 = {}
        self.failed_subtests = set()

    def startTest(self, test):
        super().startTest(test)
        self.t0[test] = time.monotonic()

    def _desc(self, test):
        took = time.monotonic() - self.t0.get(test, time.monotonic())
        d = test.shortDescription() or test.id()
        return d + (" [%d s]" % took if took >= 2 else "")

    def _diag(self, err, test):
        text = self._exc_info_to_string(err, test)
        print_diag("\n".join(text.rstrip().splitlines()[-20:]), "#   ")

    def addSuccess(self, test):
        super().addSuccess(test)
        print_check("ok", self._desc(test))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.failed_subtests.discard(test)
        print_check("not ok", self._desc(test))
        self._diag(err, test)

    def addError(self, test, err):
        super().addError(test, err)
        self.failed_subtests.discard(test)
        print_check("not ok", self._desc(test))
        self._diag(err, test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        print_check("skip", "%s (%s)" % (self._desc(test), reason))

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.failed_subtests.add(test)
            print_diag("%s: %s" % (subtest._subDescription(), err[1]), "#   ")

    def stopTest(self, test):
        # A failed subtest fails its test, which unittest then neither
        # passes nor fails: its not ok line is ours to print.
        super().stopTest(test)
        if test in self.failed_subtests:
            print_check("not ok", self._desc(test))


def main(argv):
    loader = unittest.TestLoader()
    if argv:
        suite = loader.loadTestsFromNames(["frlock.tests." + m for m in argv])
    else:
        suite = loader.discover("frlock.tests", pattern="test_*.py", top_level_dir=".")
    res = Result()
    suite.run(res)
    if not res.testsRun:
        # As kunit.py: a run that tested nothing has failed.
        print("frlock.tests: no test ran", file=sys.stderr)
        return 1
    return 0 if res.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
