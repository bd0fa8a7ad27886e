# SPDX-License-Identifier: GPL-2.0
"""carry: a user's COMMAND is found as the host's shell finds it, carried
with the libraries the host's loader maps for it, and refused in one line
when it cannot run in the guest."""

import os
import shutil
import stat
import subprocess
import tempfile
import unittest

from frlock import TOP, carry


class Carry(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="frlock-carry-")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def script(self, name, first_line):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(first_line + "\necho hi\n")
        os.chmod(path, 0o755)
        return path

    def test_path_lookup(self):
        """carry: a bare name is found on PATH, in PATH's order, and its libraries are the loader's"""
        argv, files = carry.plan(["ls", "-l", "a b;c"], path="/nonexistent:/usr/bin:/bin")
        self.assertEqual(argv, ["/usr/bin/ls", "-l", "a b;c"])
        self.assertEqual(files[0], "/usr/bin/ls")
        ldd = subprocess.run(["ldd", "/usr/bin/ls"], stdout=subprocess.PIPE, text=True).stdout
        libc = [w for w in ldd.split() if "/libc.so" in w]
        self.assertEqual(len(libc), 1, ldd)
        self.assertIn(libc[0], files)
        self.assertTrue(any("ld-linux" in f for f in files), files)
        for f in files:
            self.assertTrue(os.path.isabs(f) and os.path.isfile(f), f)

    def test_not_found(self):
        """carry: a COMMAND not on PATH is refused naming it and where it was looked for"""
        with self.assertRaises(carry.Refused) as cm:
            carry.plan(["no-such-program-xyz"], path="/usr/bin:/bin")
        self.assertEqual(str(cm.exception), "COMMAND 'no-such-program-xyz' not found on the "
                         "host's PATH (/usr/bin:/bin)")
        with self.assertRaises(carry.Refused) as cm:
            carry.plan([os.path.join(self.tmp, "missing")])
        self.assertIn("not found (no such file", str(cm.exception))

    def test_not_executable(self):
        """carry: a path that is not executable is refused"""
        path = self.script("plain", "#!/bin/sh")
        os.chmod(path, 0o644)
        with self.assertRaises(carry.Refused) as cm:
            carry.plan([path])
        self.assertIn("is not executable", str(cm.exception))

    def test_unresolved_library(self):
        """carry: a library the host's loader cannot resolve is named in one line"""
        if not shutil.which("gcc"):
            self.skipTest("no gcc to link a program against a missing library")
        src = os.path.join(self.tmp, "lib.c")
        with open(src, "w") as f:
            f.write("int frlock_carry_lib(void) { return 1; }\n")
        lib = os.path.join(self.tmp, "libfrlockcarry.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", lib, src], check=True)
        main = os.path.join(self.tmp, "main.c")
        with open(main, "w") as f:
            f.write("int frlock_carry_lib(void);\nint main(void) { return frlock_carry_lib(); }\n")
        prog = os.path.join(self.tmp, "prog")
        subprocess.run(["gcc", "-o", prog, main, "-L" + self.tmp, "-lfrlockcarry"], check=True)
        os.remove(lib)
        with self.assertRaises(carry.Refused) as cm:
            carry.plan([prog])
        self.assertEqual(str(cm.exception), "COMMAND %s needs libfrlockcarry.so, which the "
                         "host's dynamic loader cannot resolve" % prog)

    def test_scripts(self):
        """carry: a /bin/sh script is carried alone; a script for an interpreter the guest lacks is refused"""
        sh = self.script("ok.sh", "#!/bin/sh -e")
        self.assertEqual(carry.plan([sh, "x"]), ([sh, "x"], [sh]))
        py = self.script("tool.py", "#!/usr/bin/python3")
        with self.assertRaises(carry.Refused) as cm:
            carry.plan([py])
        self.assertIn("is a script for /usr/bin/python3, which the guest does not have",
                      str(cm.exception))

    def test_repository_path(self):
        """carry: a program under the repository runs from the guest's share, nothing carried"""
        prog = os.path.join(TOP, "tests", "run")
        self.assertTrue(os.stat(prog).st_mode & stat.S_IXUSR)
        argv, files = carry.plan([prog, "--x"])
        self.assertEqual((argv, files), (["/opt/frlock/tests/run", "--x"], []))


class FrlockRunRefuses(unittest.TestCase):
    def run_(self, *args):
        before = set(os.listdir(RESULTS)) if os.path.isdir(RESULTS) else set()
        p = subprocess.run([os.path.join(TOP, "host", "frlock-run")] + list(args),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        after = set(os.listdir(RESULTS)) if os.path.isdir(RESULTS) else set()
        self.assertEqual(after, before, "a results folder was made: something booted")
        return p

    def test_not_found(self):
        """frlock-run: a COMMAND not found is one line naming it and PATH, exit 2, nothing booted"""
        p = self.run_("--", "no-such-program-xyz", "arg")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stderr.splitlines(), [
            "make run: COMMAND 'no-such-program-xyz' not found on the host's PATH (%s)"
            % os.environ.get("PATH", "")])

    def test_cmd_is_words(self):
        """frlock-run: CMD is split into words, never given to a shell: its metacharacters are words of the command"""
        marker = os.path.join(tempfile.mkdtemp(prefix="frlock-cmd-"), "ran")
        p = self.run_("--check", "--cmd", "true; touch %s" % marker)
        self.assertEqual(p.returncode, 0, p.stderr)
        p = self.run_("--cmd", "no-such-program-xyz; touch %s" % marker)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("COMMAND 'no-such-program-xyz;' not found", p.stderr)
        self.assertFalse(os.path.exists(marker))
        p = self.run_("--cmd", "ls 'unterminated")
        self.assertEqual(p.returncode, 2)
        self.assertIn("CMD: No closing quotation", p.stderr)


RESULTS = os.path.join(TOP, "results")


if __name__ == "__main__":
    unittest.main()
