# SPDX-License-Identifier: GPL-2.0
"""Real workloads through host/frlock-run, in the guest part of make test:
every row of docs/workloads.md runs as `host/frlock-run -- COMMAND` (the
host's own program carried into the guest), and its results must show the
row's lock with retries or waits, the command and its exit status, and a
who-cost-whom table whose every row joins: its writer site wrote that lock
in the same run. Boots guests: run by tests/run's guest part, as
`python3 -m frlock.tests guest_workloads`. FRLOCK_KERNEL names the
kernel/build directory."""

import os
import re
import shlex
import shutil
import subprocess
import unittest

from frlock import TOP, feed
from frlock.report import read_feed

RUN = os.path.join(TOP, "host", "frlock-run")
KERNEL = os.environ.get("FRLOCK_KERNEL")
TABLE = os.path.join(TOP, "docs", "workloads.md")


def rows():
    """(command, lock) of each row of docs/workloads.md's table."""
    out = []
    with open(TABLE) as f:
        for line in f:
            m = re.match(r"\| `([^`]+)` \| `([^`]+)` \|", line)
            if m:
                out.append((m.group(1), m.group(2)))
    return out


def results_dir(stdout):
    m = re.search(r"results in (results/[^/\s]+)/", stdout)
    return os.path.join(TOP, m.group(1)) if m else None


def records(path, kind):
    with open(path, "rb") as f:
        for raw in f:
            what, rec, _ = feed.classify(raw.rstrip(b"\n"))
            if what == "record" and rec["type"] == kind:
                yield rec


@unittest.skipUnless(KERNEL, "FRLOCK_KERNEL names no kernel")
class Workloads(unittest.TestCase):
    def test_table(self):
        """workloads: docs/workloads.md has rows, each a command on the host's PATH"""
        r = rows()
        self.assertGreaterEqual(len(r), 3, TABLE)
        for cmd, _ in r:
            self.assertTrue(shutil.which(shlex.split(cmd)[0]), "%s: not on PATH (make deps)" % cmd)

    def test_rows(self):
        """workloads: each row of docs/workloads.md through frlock-run: its lock retried or waited, the command and its status reported, every who-cost-whom row joined to a writer of its lock"""
        for cmd, lock in rows():
            with self.subTest(workload=cmd):
                p = subprocess.run([RUN, "--duration", "60", "--"] + shlex.split(cmd),
                                   env=dict(os.environ, FRLOCK_KERNEL=KERNEL),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True, timeout=600)
                res = results_dir(p.stdout)
                print("#   %s: exit %d, results %s" % (cmd, p.returncode, res))
                self.assertEqual(p.returncode, 0, p.stdout[-2000:])
                self.assertTrue(res and not os.path.exists(os.path.join(res, "INCOMPLETE")),
                                p.stdout[-2000:])
                fd = read_feed(os.path.join(res, "feed.ndjson"))
                snap = fd.final
                w = snap["workload"]
                self.assertEqual(w["command"], " ".join(
                    [shutil.which(shlex.split(cmd)[0])] + shlex.split(cmd)[1:]))
                self.assertTrue(w["ended"].startswith("exited 0 after"), w)
                self.assertIn("its last lines of output:", fd_text(res))
                lk = fd.view.locks.get(lock)
                self.assertIsNotNone(lk, "%s not in the feed" % lock)
                print("#   %s: %s retries %d, waits %d" % (cmd, lock, lk.sums["retries"],
                                                            lk.sums["waits"]))
                self.assertGreater(lk.sums["retries"] + lk.sums["waits"], 0)
                self.joined(os.path.join(res, "feed.ndjson"), lock)

    def joined(self, path, lock):
        """Every pair's writer site began a write section of its lock in
        this run (the lock's "caused" or "causedwait" sites, which name the
        begin's site), and no (lock, writer site, kind) has more lost reads
        in pairs than its caused records count."""
        caused = {}
        for c in records(path, "frlockstat_caller"):
            if c["kind"] in ("caused", "causedwait"):
                k = (c["lock"], c["caller"], "retry" if c["kind"] == "caused" else "wait")
                caused[k] = caused.get(k, 0) + c["count"]
        paired, n = {}, 0
        for pr in records(path, "frlockstat_pair"):
            n += 1
            k = (pr["lock"], pr["writer"], pr["kind"])
            self.assertIn(k, caused, "a pair whose writer site wrote no section of its lock "
                          "in this run: %s" % pr)
            paired[k] = paired.get(k, 0) + pr["count"]
        for k, count in paired.items():
            self.assertLessEqual(count, caused[k], k)
        self.assertTrue(any(k[0] == lock for k in paired), "no who-cost-whom row for %s" % lock)
        print("#   %d pair records, %d (lock, writer, kind) joined" % (n, len(paired)))


def fd_text(res):
    with open(os.path.join(res, "output.txt"), errors="replace") as f:
        return f.read()


if __name__ == "__main__":
    unittest.main()
