# SPDX-License-Identifier: GPL-2.0
"""frlockstat's judge (frlockstat.py) on runs shaped as the guest leaves
them: the table's helpers read frlockstat's own text; a run that left
nothing, or printed records of another schema, fails its checks."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from frlock.judges import frlockstat

TABLE = """Tracing frlock and seqcount locks... Hit Ctrl-C to end.

LOCK                        KIND     WRITES/s HOLD50 HOLD99    MAX RETRY/s  WAIT/s   LOST/s  LOST99
tk_core                     frlock      241.5    <8K  <128K    <1M     3.0     9.5   ≥257us   ≥256K
jiffies_seq                 seqcount    250.4   <32K  <256K    <1M     0.0     0.0      0ns       -
(2 more locks: -n 4 shows them)

"""


def judge(files):
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = frlockstat.main([d if files else os.path.join(d, "none")])
    return rc, out.getvalue()


class StatJudge(unittest.TestCase):
    def test_table(self):
        """judges/frlockstat: the first table's rows, its lock rows, and sort -g's reading of a cell"""
        header, rows = frlockstat.table(TABLE)
        self.assertTrue(header.startswith("LOCK "))
        self.assertEqual(len(rows), 3)
        self.assertEqual(len(frlockstat.lock_rows(rows)), 2)
        self.assertEqual(frlockstat.num("241.5"), 241.5)
        self.assertEqual(frlockstat.num("-"), float("-inf"))

    def test_nothing_left(self):
        """judges/frlockstat: no runs in the results share is one not ok; a v1 record fails the schema check"""
        rc, out = judge({})
        self.assertEqual(rc, 1)
        self.assertIn("not ok - frlockstat: the guest left its runs in", out)
        rec = {"type": "frlockstat", "v": 1, "lock": "tk_core", "writes": 3}
        rc, out = judge({"rc": "tp_btf 0\n", "tp_btf.json": json.dumps(rec) + "\n"})
        self.assertEqual(rc, 1)
        self.assertIn("ok - frlockstat (tp_btf) ran (exit 0)", out)
        self.assertIn("not ok - frlockstat (tp_btf): every record is schema version 2", out)
        self.assertIn("not ok - frlockstat -h shows examples", out)


if __name__ == "__main__":
    unittest.main()
