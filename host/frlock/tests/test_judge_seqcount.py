# SPDX-License-Identifier: GPL-2.0
"""The seqcount workloads' judge (seqcount.py): the heap's retried locks
are told apart by their writers in the write hist."""

import unittest

from frlock.judges import seqcount

# Two dentries and a per-CPU hrtimer base, as the hist triggers print them.
RETRY = """\
{ lock: [ff11000001000040] 0xff11000001000040 , caller: [ffffffff81200000] d_alloc_parallel+0x1a/0x300 } hitcount:         30
{ lock: [ff11000001000080] 0xff11000001000080 , caller: [ffffffff81200000] lookup_fast+0x1a/0x300 } hitcount:          5
{ lock: [ff1100006e81cb10] 0xff1100006e81cb10 , caller: [ffffffff810cc000] hrtimer_active+0x2a/0x60 } hitcount:          1
{ lock: [ffffffff82009500] rename_lock , caller: [ffffffff81200000] d_path+0x1a/0x300 } hitcount:          7

Totals:
    Hits: 43
    Entries: 4
    Dropped: 0
"""
WRITE = """\
{ lock: [ff11000001000040] 0xff11000001000040 , caller: [ffffffff81208000] __d_move+0x4e/0x500 } hitcount:        100
{ lock: [ff11000001000080] 0xff11000001000080 , caller: [ffffffff81208000] __d_drop.part.0+0x4e/0x90 } hitcount:         10
{ lock: [ff1100006e81cb10] 0xff1100006e81cb10 , caller: [ffffffff810cca90] __hrtimer_run_queues+0x147/0x300 } hitcount:       2043
{ lock: [ffffffff82009500] rename_lock , caller: [ffffffff8120852d] d_move+0x4e/0x90 } hitcount:        251

Totals:
    Hits: 2404
    Entries: 4
    Dropped: 0
"""


class Workload(seqcount.Workload):
    def __init__(self, retry, write):
        self.name = "rename"
        self.retry, self.write = seqcount.Hist(retry), seqcount.Hist(write)


class SeqJudge(unittest.TestCase):
    def test_heap_by_writer(self):
        """judges/seqcount: a retried per-CPU hrtimer base is not counted as a dentry's d_seq"""
        heap = Workload(RETRY, WRITE).heap_retries()
        self.assertEqual(heap["dentry"], {"ff11000001000040": 30, "ff11000001000080": 5})
        self.assertEqual(heap["other"], {"ff1100006e81cb10": 1})
        self.assertEqual(heap["mixed"], {})
        self.assertEqual(seqcount.Hist(RETRY).count("rename_lock"), 7)

    def test_mixed_writers(self):
        """judges/seqcount: a retried lock written by dcache and by other code is mixed, and a lock with no write is unwritten"""
        write = WRITE.replace("__hrtimer_run_queues", "__d_move").replace(
            "ff11000001000080] 0xff11000001000080 , caller: [ffffffff81208000] __d_drop.part.0",
            "ff11000001000040] 0xff11000001000040 , caller: [ffffffff81208000] inode_set_flags")
        heap = Workload(RETRY, write).heap_retries()
        self.assertEqual(heap["mixed"], {"ff11000001000040": 30})
        self.assertEqual(heap["unwritten"], {"ff11000001000080": 5})
        self.assertEqual(heap["dentry"], {"ff1100006e81cb10": 1})


if __name__ == "__main__":
    unittest.main()
