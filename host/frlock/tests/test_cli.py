# SPDX-License-Identifier: GPL-2.0
"""Every entry point on the host keeps one command-line convention: --help
prints the usage on stdout and exits 0; a bad option exits 2, with nothing
on stdout and, on stderr, the usage and one line that says what was wrong.

The entry points are found, not listed: every executable file git tracks
(or symlink to one), but for what runs in the guest (busybox sh scripts,
bpftrace tools) and the fake QEMU the tests play, which keeps QEMU's
command line. frlockstat (C, argp, built for the guest's kernel) is
checked in the guest by tests/guest/badinput.sh."""

import os
import subprocess
import unittest

from frlock import TOP

# Not host entry points: the fake QEMU answers as QEMU does.
PLAYS_ANOTHER = {"host/frlock/tests/fakeqemu.py"}
GUEST_SHEBANGS = ("#!/bin/sh", "#!/usr/bin/env bpftrace")


def entry_points():
    """(path, why not) for every executable file git tracks: why not is
    None for an entry point of the host, else why it is left out."""
    out = subprocess.run(["git", "-C", TOP, "ls-files", "-s"], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        mode, _, _, path = line.split(None, 3)
        full = os.path.join(TOP, path)
        if mode == "120000":
            if not os.access(full, os.X_OK):
                continue
        elif mode != "100755":
            continue
        with open(full, "rb") as f:
            first = f.readline().decode(errors="replace").strip()
        if path in PLAYS_ANOTHER:
            found.append((path, "plays QEMU's command line"))
        elif first.startswith(GUEST_SHEBANGS):
            found.append((path, "runs in the guest"))
        else:
            found.append((path, None))
    return found


def run(path, *args):
    return subprocess.run([os.path.join(TOP, path)] + list(args), stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors="replace", timeout=60, cwd=TOP)


class Convention(unittest.TestCase):
    def test_shebang(self):
        """cli: every executable file git tracks has a shebang (a module is not executable)"""
        for path, _ in entry_points():
            with self.subTest(path=path):
                with open(os.path.join(TOP, path), "rb") as f:
                    self.assertEqual(f.read(2), b"#!", "%s is executable but has no shebang" % path)

    def test_found(self):
        """cli: the walk finds the entry points (run-guest, tests/run, kernel/build, labs/lab, the judges)"""
        names = {p for p, why in entry_points() if why is None}
        for want in ("host/run-guest", "tests/run", "kernel/build", "labs/lab", "host/judge-events",
                     "dashboards/server", "bench/run", "host/frlock-run"):
            self.assertIn(want, names)

    def test_help(self):
        """cli: every entry point's --help prints its usage on stdout and exits 0"""
        for path, why in entry_points():
            if why:
                continue
            with self.subTest(path=path):
                p = run(path, "--help")
                self.assertEqual(p.returncode, 0, "%s --help: exit %d; stderr: %s"
                                 % (path, p.returncode, p.stderr))
                self.assertTrue(p.stdout.startswith("usage: "), "%s --help: %r" % (path, p.stdout[:200]))
                self.assertEqual(p.stderr, "", "%s --help wrote on stderr" % path)

    def test_bad_option(self):
        """cli: every entry point refuses an unknown option: exit 2, the usage and one line on stderr"""
        for path, why in entry_points():
            if why:
                continue
            with self.subTest(path=path):
                p = run(path, "--no-such-option")
                err = p.stderr.splitlines()
                said = [ln for ln in err if ln and not ln.startswith(("usage:", " "))]
                self.assertEqual(p.returncode, 2, "%s: exit %d; stderr: %s" % (path, p.returncode, p.stderr))
                self.assertEqual(p.stdout, "", "%s: a usage error with output on stdout" % path)
                self.assertTrue(any(ln.startswith("usage: ") for ln in err), "%s: no usage: %s" % (path, err))
                self.assertEqual(len(said), 1, "%s: wanted one line but the usage: %s" % (path, err))


class BpfMakefile(unittest.TestCase):
    def test_bad_arch(self):
        """cli: make -C bpf ARCH=mips is one line naming the guests' architectures, exit 2, nothing built"""
        p = subprocess.run(["make", "-s", "-C", os.path.join(TOP, "bpf"), "ARCH=mips", "KERNEL=/nonexistent"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        said = [ln for ln in p.stderr.splitlines() if ln.strip()]
        self.assertEqual(len(said), 1, said)
        self.assertIn("ARCH wants x86_64 or i386, not 'mips'", said[0])
        self.assertFalse(os.path.exists(os.path.join(TOP, "bpf", ".output-mips")))


if __name__ == "__main__":
    unittest.main()
