# SPDX-License-Identifier: GPL-2.0
"""make run's knobs: every bad value is refused in one line naming the
knob, with exit status 2, before anything is installed, built or booted;
the guest's frlock-watch (knob_check in guest-rootfs/knobs.sh, busybox sh)
and the host (knobs.py) read one table and word a refusal alike."""

import os
import re
import shutil
import subprocess
import time
import unittest

from frlock import TOP, knobs

BAD = [("DURATION", "abc", "DURATION wants whole seconds from 1 to 86400, not 'abc'"),
       ("DURATION", "0", "DURATION wants"), ("DURATION", "90000", "DURATION wants"),
       ("DURATION", "1.5", "DURATION wants"),
       ("DURATION", "1; echo injected", "DURATION wants whole seconds from 1 to 86400, "
        "not '1; echo injected'"),
       ("THREADS", "0", "THREADS wants a number of threads from 1 to 1024, not '0'"), ("THREADS", "2000", "THREADS wants"),
       ("VIA", "libc", "VIA wants syscall or vdso, not 'libc'"),
       ("WRITERS", "-1", "WRITERS wants"), ("WRITERS", "lots", "WRITERS wants"),
       ("INTERVAL", "0", "INTERVAL wants"),
       ("INTERVAL", "30", "INTERVAL wants whole seconds from 1 to the duration (20), not '30'"),
       ("SMP", "two", "SMP wants"),
       ("SMP", "256", "SMP wants a number of guest vCPUs from 1 to 255, not '256'"),
       ("MEM", "100", "MEM wants a size in MB from 1024 to"),
       ("ACCEL", "xen", "ACCEL wants auto, kvm or tcg, not 'xen'"),
       ("PROMETHEUS", "yes", "PROMETHEUS wants 0 or 1, not 'yes'"),
       ("WALK", "2", "WALK wants 0 or 1, not '2'")]


class Knobs(unittest.TestCase):
    def test_make_run_refuses(self):
        """knobs: make run refuses every bad knob in one line, exit 2, before anything is built or booted"""
        for knob, value, want in BAD:
            with self.subTest(knob=knob, value=value):
                t0 = time.monotonic()
                p = subprocess.run(["make", "-C", TOP, "--no-print-directory", "run",
                                    "%s=%s" % (knob, value)], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                # make's own closing line ("make: *** ... Error 2", or
                # "make[1]: ..." under make test) aside
                err = [ln for ln in p.stderr.splitlines()
                       if not re.match(r"make(\[\d+\])?: ", ln)]
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertTrue(err and err[0].startswith("usage: host/frlock-run"), err)
                self.assertTrue(err[-1].startswith("host/frlock-run: error: " + want), err)
                self.assertEqual(len([ln for ln in err if not ln.startswith(("usage:", " "))]),
                                 1, err)
                self.assertNotRegex(p.stdout + p.stderr, "booting|run-guest")
                self.assertLess(time.monotonic() - t0, 30)

    def test_frlock_run_check(self):
        """knobs: host/frlock-run --check takes the defaults and good values of every knob; --help on stdout, exit 0; an unknown option, a missing value, a bad FRLOCK_KERNEL: one line and the usage, exit 2"""
        run = os.path.join(TOP, "host", "frlock-run")
        self.assertEqual(subprocess.run([run, "--check"]).returncode, 0)
        self.assertEqual(subprocess.run(
            [run, "--check", "--duration", "5", "--threads", "1", "--via", "vdso", "--writers",
             "0", "--interval", "5", "--prometheus", "1", "--walk", "1"]).returncode, 0)
        p = subprocess.run([run, "--help"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertTrue(p.stdout.startswith("usage: host/frlock-run"), p.stdout)
        for args, env, want in (
                (["--bogus", "--duration", "5"], {}, "unrecognized arguments: --bogus"),
                (["--duration"], {}, "argument --duration: expected one argument"),
                (["--check"], {"FRLOCK_KERNEL": "/tmp"},
                 "FRLOCK_KERNEL wants a kernel/build directory, not '/tmp'")):
            p = subprocess.run([run] + args, env=dict(os.environ, **env), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            self.assertEqual((p.returncode, p.stdout), (2, ""), args)
            err = p.stderr.splitlines()
            self.assertTrue(err[0].startswith("usage: host/frlock-run"), p.stderr)
            self.assertEqual(err[-1], "host/frlock-run: error: " + want, p.stderr)
            self.assertEqual(len([ln for ln in err if not ln.startswith(("usage:", " "))]), 1,
                             p.stderr)

    @unittest.skipUnless(shutil.which("busybox"), "busybox-static not installed: make deps")
    def test_one_wording(self):
        """knobs: the guest's knob_check and the host's knobs.check read one table and say the same"""
        sh = os.path.join(TOP, "guest-rootfs", "knobs.sh")
        cases = [("duration", "0", None), ("threads", "9999", None), ("writers", "x", None),
                 ("interval", "30", "20"), ("smp", "256", None), ("mem", "100", None),
                 ("smp", "2", None), ("interval", "5", "20")]
        for name, value, most in cases:
            with self.subTest(name=name, value=value):
                p = subprocess.run(["busybox", "sh", "-c", '. "$1"; knob_check "$2" "$3" LABEL $4',
                                    "sh", sh, name, value, most or ""],
                                   stderr=subprocess.PIPE, text=True)
                host = knobs.check(name, value, "LABEL", int(most) if most else None)
                self.assertEqual(p.returncode, 0 if host is None else 1)
                self.assertEqual(p.stderr.strip(), host or "")
        self.assertEqual(set(knobs.table()),
                         {"duration", "threads", "writers", "interval", "smp", "mem"})


if __name__ == "__main__":
    unittest.main()
