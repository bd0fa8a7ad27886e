# SPDX-License-Identifier: GPL-2.0
"""Real workloads through host/frlock-run, in the guest part of make test:
the rows of docs/workloads.md (frlock/workloads.py's ROWS) marked "make
test" run as `host/frlock-run -- COMMAND` (the host's own program carried
into the guest; the command is the one the row's recording ran), every
row under make test-long (FRLOCK_TEST_LONG set). Each run's results must
show the row's lock with retries or waits, the command and its exit
status, and a who-cost-whom table whose every row joins: its writer site
wrote that lock in the same run (workloads.unjoined, which
test_workloads applies to the recordings). Boots guests: run by
tests/run's guest part, as `python3 -m frlock.tests guest_workloads`.
FRLOCK_KERNEL names the kernel/build directory."""

import os
import re
import shlex
import shutil
import subprocess
import time
import unittest

from frlock import TOP, workloads
from frlock.report import read_feed

RUN = os.path.join(TOP, "host", "frlock-run")
KERNEL = os.environ.get("FRLOCK_KERNEL")
LONG = bool(os.environ.get("FRLOCK_TEST_LONG"))


def rows():
    """(command, lock, frlock-run's knobs) of each row this target runs:
    --walk 1 for a row recorded with frlockstat -W."""
    out = []
    for name, lock, tier in workloads.ROWS:
        if LONG or tier == "test":
            v = workloads.read(name)
            out.append((workloads.command(v), lock, ["--walk", "1"] if v.with_walk else []))
    return out


def results_dir(stdout):
    m = re.search(r"results in (results/[^/\s]+)/", stdout)
    return os.path.join(TOP, m.group(1)) if m else None


@unittest.skipUnless(KERNEL, "FRLOCK_KERNEL names no kernel")
class Workloads(unittest.TestCase):
    def test_table(self):
        """workloads: the rows to run (3 or more), each a command on the host's PATH"""
        r = rows()
        self.assertGreaterEqual(len(r), 3, workloads.DOC)
        for cmd, _, _ in r:
            self.assertTrue(shutil.which(shlex.split(cmd)[0]), "%s: not on PATH (make deps)" % cmd)

    def test_rows(self):
        """workloads: each row through frlock-run (make test: its "make test" rows; make test-long: all): its lock retried or waited, the command and its status reported, every who-cost-whom row joined to a writer of its lock"""
        for cmd, lock, knobs in rows():
            with self.subTest(workload=cmd):
                t0 = time.monotonic()
                p = subprocess.run([RUN, "--duration", "60"] + knobs + ["--"] + shlex.split(cmd),
                                   env=dict(os.environ, FRLOCK_KERNEL=KERNEL),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=600)
                res = results_dir(p.stdout)
                print("#   %s: exit %d, results %s, %.0f s" % (cmd, p.returncode, res,
                                                              time.monotonic() - t0))
                self.assertEqual(p.returncode, 0, p.stdout[-2000:])
                self.assertTrue(res and not os.path.exists(os.path.join(res, "INCOMPLETE")),
                                p.stdout[-2000:])
                fd = read_feed(os.path.join(res, "feed.ndjson"))
                snap = fd.final
                w = snap["workload"]
                self.assertEqual(w["command"], shlex.join(
                    [shutil.which(shlex.split(cmd)[0])] + shlex.split(cmd)[1:]))
                self.assertTrue(w["ended"].startswith("exited 0 after"), w)
                self.assertIn("its last lines of output:", fd_text(res))
                lk = fd.view.locks.get(lock)
                self.assertIsNotNone(lk, "%s not in the feed" % lock)
                print("#   %s: %s retries %d, waits %d" % (cmd, lock, lk.sums["retries"],
                                                            lk.sums["waits"]))
                self.assertGreater(lk.sums["retries"] + lk.sums["waits"], 0)
                wrong, pairs = workloads.unjoined(os.path.join(res, "feed.ndjson"))
                self.assertEqual(wrong, [])
                self.assertTrue(any(k[0] == lock for k in fd.view.pairs),
                                "no who-cost-whom row for %s" % lock)
                print("#   %d pair records, all joined" % pairs)


def fd_text(res):
    with open(os.path.join(res, "output.txt"), errors="replace") as f:
        return f.read()


if __name__ == "__main__":
    unittest.main()
