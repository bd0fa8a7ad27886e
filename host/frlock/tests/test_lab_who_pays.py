# SPDX-License-Identifier: GPL-2.0
"""make lab NAME=who-pays grades a prediction against the run's own
who-cost-whom table: on a recorded run of the lab
(tests/fixtures/who-pays/run-mix.ndjson, labs/lab who-pays's feed), the
costliest writer is the view's pairs summed per (lock, task, site), a
right prediction is graded right and wrong ones wrong, part by part; a
prediction that is not one (an unknown lock, a writer that is no
function, too few words) is one line and exit status 2 before anything
is built or booted."""

import contextlib
import io
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import unittest.mock

from frlock import TOP, labs, workloads

FIXTURE = os.path.join(TOP, "tests", "fixtures", "who-pays", "run-mix.ndjson")
LAB = os.path.join(TOP, "labs", "lab")


def costliest(path):
    """The (lock, task, site) whose write sections cost readers the most
    read time in the feed, summed here from its pair records."""
    by = {}
    for (lock, _, wcomm, writer, _, _), (_, ns, _) in workloads.view_of(path).pairs.items():
        by[(lock, wcomm, writer)] = by.get((lock, wcomm, writer), 0) + ns
    return max(by, key=by.get)


class WhoPays(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="frlock-who-pays-")
        shutil.copyfile(FIXTURE, os.path.join(self.dir, "run-mix.ndjson"))
        stub = os.path.join(self.dir, "chart.js")
        with open(stub, "w") as f:
            f.write("/* stub */\n")
        self.env = unittest.mock.patch.dict(os.environ, {"FRLOCK_CHARTJS": stub})
        self.env.start()

    def tearDown(self):
        self.env.stop()
        shutil.rmtree(self.dir)

    def grade(self, text):
        with open(os.path.join(self.dir, "prediction.json"), "w") as f:
            json.dump(labs.prediction(text), f)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            labs.analyse("who-pays", self.dir)
        with open(os.path.join(self.dir, "result.json")) as f:
            return json.load(f), out.getvalue()

    def test_right(self):
        """lab who-pays: the run's costliest writer, predicted by function and task, is graded right"""
        lock, task, site = costliest(FIXTURE)
        res, out = self.grade("%s %s %s" % (lock, site.split("+")[0], task))
        self.assertEqual(res["top"]["lock"], lock)
        self.assertEqual((res["top"]["task"], res["top"]["site"]), (task, site))
        self.assertEqual(res["graded"], {"lock": True, "writer": True, "task": True,
                                         "right": True})
        self.assertIn("Your prediction is RIGHT.", out)
        self.assertIn("lab who-pays: the run shows what the lab teaches", out)
        # the very site, with its offset, is right too; the task is optional
        res, _ = self.grade("%s %s" % (lock, site))
        self.assertEqual(res["graded"], {"lock": True, "writer": True, "task": None,
                                         "right": True})

    def test_wrong(self):
        """lab who-pays: another lock, another writer, another task, or another site of the right function are graded wrong, part by part"""
        lock, task, site = costliest(FIXTURE)
        func = site.split("+")[0]
        other = sorted(lk for lk in labs.known_locks() if lk != lock)[0]
        res, out = self.grade("%s %s" % (other, func))
        self.assertEqual(res["graded"], {"lock": False, "writer": True, "task": None,
                                         "right": False})
        self.assertIn("Your prediction is WRONG", out)
        res, _ = self.grade("%s no_such_writer" % lock)
        self.assertEqual(res["graded"]["writer"], False)
        self.assertFalse(res["graded"]["right"])
        res, _ = self.grade("%s %s someone-else" % (lock, func))
        self.assertEqual(res["graded"], {"lock": True, "writer": True, "task": False,
                                         "right": False})
        res, _ = self.grade("%s %s+0x1" % (lock, func))
        self.assertFalse(res["graded"]["writer"])

    def test_bad_predictions(self):
        """lab who-pays: an unknown lock, a writer that is no function, a prediction of one word, or none without a terminal: one line and exit status 2, nothing booted"""
        for args, says in (
                (["--predict", "no_such_lock d_move"], "no lock 'no_such_lock'"),
                (["--predict", "rename_lock d-move!"], "is not a kernel function"),
                (["--predict", "rename_lock"], "a prediction is LOCK FUNCTION [TASK]"),
                ([], "who-pays grades a prediction")):
            with self.subTest(args=args):
                out = tempfile.mkdtemp(prefix="frlock-who-pays-bad-")
                os.rmdir(out)
                p = subprocess.run([LAB, "--out", out] + args + ["who-pays"],
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stdout, "")
                last = p.stderr.strip().split("\n")[-1]
                self.assertIn(says, last)
                self.assertFalse(os.path.exists(out), "a results folder was made")


if __name__ == "__main__":
    unittest.main()
