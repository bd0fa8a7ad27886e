# SPDX-License-Identifier: GPL-2.0
"""docs/workloads.md cannot drift from its recorded runs: its table is
what host/workloads-table makes of docs/workloads/*.ndjson (through the
host's one view), every row's recording is a complete frlock-run of the
row's command, headed by its command, kernel and date, in which the row's
lock retried or waited and every who-cost-whom row joins; enough rows,
locks and make test rows."""

import os
import re
import shlex
import tempfile
import unittest

from frlock import workloads


class Table(unittest.TestCase):
    def test_table_is_the_recordings(self):
        """workloads: docs/workloads.md's table is host/workloads-table's output from the recorded runs (--check)"""
        with open(workloads.DOC) as f:
            text = f.read()
        self.assertEqual(workloads.rewrite(text, workloads.table()), text,
                         "host/workloads-table rewrites it")
        self.assertEqual(workloads.main(["--check"]), 0)

    def test_check_sees_a_changed_figure(self):
        """workloads: a figure changed in the table is one --check refuses"""
        with open(workloads.DOC) as f:
            text = f.read()
        new = workloads.table()
        m = re.search(r"\(\d+\.\d, ", new)
        changed = new[:m.start() + 1] + "9" + new[m.start() + 1:]
        self.assertNotEqual(workloads.rewrite(text, changed), workloads.rewrite(text, new))

    def test_rows(self):
        """workloads: twelve rows or more, three of them run by make test; eight distinct locks or more held back across them; every lock these runs wrote is held back in a row or has its why in docs/workloads.md"""
        self.assertGreaterEqual(len(workloads.ROWS), 12)
        self.assertGreaterEqual(sum(t == "test" for _, _, t in workloads.ROWS), 3)
        held, written = set(), set()
        for name, _, _ in workloads.ROWS:
            v = workloads.read(name)
            held.update(lk for lk, _ in workloads.held(v))
            written.update(lk for lk, x in v.locks.items() if x.sums["writes"])
        with open(workloads.DOC) as f:
            why = f.read().split("## The locks no packaged workload made retry, and why")[1]
        explained = set(re.findall(r"^- \*\*`([^`]+)`\*\*", why, re.M))
        print("#   %d locks held back: %s; written only: %s" % (
            len(held), sorted(held), sorted(written - held)))
        self.assertEqual(written - held - explained, set(), "written, never held back, "
                         "and not explained")
        self.assertGreaterEqual(len(held), 8, "distinct locks held back across the table")

    def test_recordings(self):
        """workloads: each recording: the row's lock retried or waited, every who-cost-whom row joins, its text headed by the same command, the kernel and the date"""
        for name, lock, _ in workloads.ROWS:
            with self.subTest(row=name):
                v = workloads.read(name)
                lk = v.locks[lock]
                self.assertGreater(lk.sums["retries"] + lk.sums["waits"], 0)
                wrong, pairs = workloads.unjoined(
                    os.path.join(workloads.RECORDS, name + ".ndjson"))
                self.assertEqual(wrong, [])
                self.assertTrue(any(k[0] == lock for k in v.pairs), lock)
                self.assertEqual(v.workload["end"]["status"], 0)
                with open(os.path.join(workloads.RECORDS, name + ".txt")) as f:
                    head = dict(ln.split(": ", 1) for ln in f.read().split("\n\n")[0].split("\n"))
                self.assertEqual(shlex.split(head["command"]), v.workload["argv"])
                self.assertRegex(head["date"], r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ")
                self.assertIn("Linux version 6.1", head["guest kernel"])

    def test_unjoined(self):
        """workloads: a pair whose writer site wrote no section of its lock, and more lost reads than caused, are both named"""
        lines = [
            '{"type":"frlockstat_caller","v":2,"lock":"rename_lock","lock_kind":"seqcount",'
            '"kind":"causedwait","caller":"d_move+0x4e","count":2,"total_ns":0,"from":"?"}',
            '{"type":"frlockstat_pair","v":2,"lock":"rename_lock","lock_kind":"seqcount",'
            '"kind":"wait","writer_comm":"a","writer":"d_move+0x4e","reader_comm":"b",'
            '"reader":"path_init+0x146","count":3,"ns":10,"bound":false}',
            '{"type":"frlockstat_pair","v":2,"lock":"rename_lock","lock_kind":"seqcount",'
            '"kind":"retry","writer_comm":"a","writer":"d_move+0x4e","reader_comm":"b",'
            '"reader":"d_lookup+0x68","count":1,"ns":10,"bound":true}']
        with tempfile.NamedTemporaryFile("w", suffix=".ndjson") as f:
            f.write("\n".join(lines) + "\n")
            f.flush()
            wrong, n = workloads.unjoined(f.name)
        self.assertEqual(n, 2)
        self.assertEqual(len(wrong), 2, wrong)
        self.assertIn("wrote no section", wrong[0])
        self.assertIn("3 lost reads in pairs, 2 caused", wrong[1])


if __name__ == "__main__":
    unittest.main()
