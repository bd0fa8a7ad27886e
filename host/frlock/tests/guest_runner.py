# SPDX-License-Identifier: GPL-2.0
"""run-guest and make run with a real guest (the frlock kernel, TCG):
the job's status, --add, --results and --port; a panic and a hung guest
end in one line with their statuses and keep their logs; --accel auto
without KVM falls back to TCG; Ctrl-C during make run stops it at once,
leaves no QEMU and marks its results INCOMPLETE. Boots guests: run by
tests/run's guest part, as `python3 -m frlock.tests guest_runner`.
FRLOCK_KERNEL names the kernel/build directory (tests/run's $kernel)."""

import os
import re
import signal
import subprocess
import tempfile
import time
import unittest

from frlock import TOP
from frlock.tests.harness import group_left, logs, start_group

RG = os.path.join(TOP, "host", "run-guest")
KERNEL = os.environ.get("FRLOCK_KERNEL")


def guest(*args, env=None, timeout=300):
    p = subprocess.run([RG, "--kernel", KERNEL] + list(args), env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    err = [ln for ln in p.stderr.splitlines()
           if not ln.startswith(("run-guest: accel=", "run-guest: probing KVM"))]
    return p.returncode, p.stdout, err, p.stderr


@unittest.skipUnless(KERNEL, "FRLOCK_KERNEL names no kernel")
class Runner(unittest.TestCase):
    def test_status(self):
        """run-guest returns the job's exit status, and its stdout and stderr apart"""
        rc, out, err, _ = guest("--exec", "echo out; echo err >&2; exit 3")
        self.assertEqual((rc, out, err), (3, "out\n", ["err"]))

    def test_add_results_port(self):
        """run-guest --add puts a host file under /opt/add, --results keeps guest files, --port streams a port into a host file"""
        d = tempfile.mkdtemp(dir=logs("runner"))
        with open(os.path.join(d, "added.txt"), "w") as f:
            f.write("frlock-added-%d\n" % os.getpid())
        feed = os.path.join(d, "port.out")
        rc, out, err, _ = guest(
            "--add", os.path.join(d, "added.txt"), "--results", os.path.join(d, "results"),
            "--port", "feed=" + feed, "--exec",
            'cat /opt/add/added.txt; echo kept >/results/out.txt; '
            'echo "{\\"n\\":1}" >/dev/virtio-ports/frlock.feed')
        self.assertEqual((rc, out, err), (0, "frlock-added-%d\n" % os.getpid(), []))
        self.assertEqual(open(os.path.join(d, "results", "out.txt")).read(), "kept\n")
        self.assertEqual(open(feed).read(), '{"n":1}\n')

    def test_panic(self):
        """run-guest: a guest kernel panic ends the run in one line (exit 123), log kept"""
        rc, _, err, _ = guest("--timeout", "120", "--append", "rdinit=/bin/false", "--exec", "true")
        self.assertEqual(rc, 123, err)
        self.assertEqual(len(err), 1, err)
        m = re.fullmatch(r"run-guest: guest kernel panicked \(Kernel panic - not syncing: .*\); "
                         r"console log: (\S+)", err[0])
        self.assertTrue(m, err[0])
        self.assertIn("Kernel panic - not syncing", open(m.group(1), errors="replace").read())

    def test_hang(self):
        """run-guest: a hung guest is killed after --timeout in one line (exit 124), its vCPUs' instruction pointers in its kept log"""
        t0 = time.monotonic()
        rc, _, err, _ = guest("--timeout", "10", "--exec", "sleep 600")
        self.assertEqual(rc, 124, err)
        self.assertLess(time.monotonic() - t0, 60)
        self.assertEqual(len(err), 1, err)
        m = re.fullmatch(r"run-guest: guest timed out after 10 s; console log: (\S+)", err[0])
        self.assertTrue(m, err[0])
        log = open(m.group(1), errors="replace").read()
        self.assertIn("Linux version", log)
        # where each vCPU was, named from System.map (the idle loop, as the
        # job sleeps), three times
        self.assertGreaterEqual(len(re.findall(r"^  CPU[01] RIP=[0-9a-f]+ [a-z_0-9.]+\+0x", log,
                                               re.M)), 6, log[-1500:])
        left = subprocess.run(["pgrep", "-f", "qemu-system.*" + re.escape(m.group(1))],
                              stdout=subprocess.PIPE, text=True).stdout
        self.assertEqual(left, "", "the killed QEMU still runs")

    def test_kvm_fallback(self):
        """run-guest --accel auto without /dev/kvm falls back to TCG, says why, and runs"""
        dev = os.path.join(logs("runner"), "no-kvm")
        rc, out, err, full = guest("--accel", "auto", "--exec", "echo guest-ran",
                                   env=dict(os.environ, FRLOCK_KVM_DEV=dev))
        self.assertEqual((rc, out, err), (0, "guest-ran\n", []))
        self.assertIn("run-guest: accel=tcg (kvm: no %s)" % dev, full.splitlines())
        self.assertFalse(os.path.exists(dev))


@unittest.skipUnless(KERNEL, "FRLOCK_KERNEL names no kernel")
class MakeRunCtrlC(unittest.TestCase):
    def test_ctrl_c(self):
        """make run: Ctrl-C stops it at once, leaves no QEMU, marks the results INCOMPLETE"""
        d = logs("runner")
        out, err = os.path.join(d, "make-run.out"), os.path.join(d, "make-run.err")
        # The whole foreground group gets SIGINT, as from a terminal. make
        # run builds nothing: it boots FRLOCK_KERNEL.
        p = start_group(["make", "-C", TOP, "--no-print-directory", "run", "DURATION=60"],
                        env=dict(os.environ, FRLOCK_KERNEL=KERNEL),
                        stdout=open(out, "w"), stderr=open(err, "w"))
        try:
            deadline = time.monotonic() + 400
            while "frlock-watch: attached" not in open(out).read():
                self.assertIsNone(p.poll(), "make run ended before it was under way: " +
                                  open(err).read())
                self.assertLess(time.monotonic(), deadline, "the run never got under way")
                time.sleep(0.2)
            self.assertTrue(any("qemu-system" in ln for ln in group_left(p.pid)),
                            "no QEMU was running")
            t0 = time.monotonic()
            os.killpg(p.pid, signal.SIGINT)
            while group_left(p.pid):
                self.assertLess(time.monotonic() - t0, 60, "the group did not end within 60 s "
                                "of SIGINT: %s" % group_left(p.pid))
                time.sleep(0.1)
            rc = p.wait(10)
            took = time.monotonic() - t0
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        m = re.search(r"results in (results/[0-9-]+)/$", open(out).read(), re.M)
        self.assertTrue(m, "no results folder named")
        folder = os.path.join(TOP, m.group(1))
        try:
            self.assertNotEqual(rc, 0)
            self.assertLess(took, 30)
            left = subprocess.run(["pgrep", "-f", "qemu-system.*" + re.escape(folder)],
                                  stdout=subprocess.PIPE, text=True).stdout
            self.assertEqual(left, "", "a QEMU of this run is still running")
            self.assertTrue(open(os.path.join(folder, "INCOMPLETE")).read().startswith(
                "interrupted by SIGINT"))
            # One line of make run's own on stderr, beside run-guest's
            # accel note and make's own "***" line.
            own = [ln for ln in open(err).read().splitlines()
                   if not re.match(r"run-guest: accel=|make(\[\d+\])?: \*\*\*", ln)]
            self.assertEqual(own, ["make run: interrupted; the partial results in %s/ are marked "
                                   "INCOMPLETE" % m.group(1)])
        finally:
            subprocess.run(["rm", "-rf", folder])


if __name__ == "__main__":
    unittest.main()
