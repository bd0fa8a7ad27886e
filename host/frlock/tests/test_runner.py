# SPDX-License-Identifier: GPL-2.0
"""The runner (host/run-guest) and its livelock watcher, against a fake
QEMU and its fake monitor (fakeqemu.py): the watcher names the livelock
seen in session logs and nothing else; the runner stops such a guest with
its own exit status, in one line naming the console log, and
--retry-livelock boots it once more, showing only the second attempt's
output; a panic and a timeout keep their statuses."""

import os
import subprocess
import tempfile
import threading
import unittest

from frlock import runner, vcpuwatch
from frlock.tests import fakeqemu

HOST = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Watcher(unittest.TestCase):
    def verdict(self, scenario):
        with tempfile.TemporaryDirectory() as d:
            sysmap = os.path.join(d, "System.map")
            fakeqemu.system_map(sysmap)
            mon = os.path.join(d, "monitor")
            stop = threading.Event()
            t = threading.Thread(target=fakeqemu.serve, args=(mon, scenario, stop), daemon=True)
            t.start()
            old = vcpuwatch.PERIOD, vcpuwatch.CONFIRM_AFTER, vcpuwatch.SAMPLE_GAP
            vcpuwatch.PERIOD, vcpuwatch.CONFIRM_AFTER, vcpuwatch.SAMPLE_GAP = 0.05, 0.05, 0.0
            got = []
            w = threading.Thread(target=lambda: got.append(
                vcpuwatch.watch(mon, vcpuwatch.Symbols(sysmap), stop)), daemon=True)
            try:
                w.start()
                w.join(3)
            finally:
                stop.set()
                w.join(2)
                vcpuwatch.PERIOD, vcpuwatch.CONFIRM_AFTER, vcpuwatch.SAMPLE_GAP = old
            return got[0] if got else None

    def test_livelock(self):
        """vcpuwatch: a vCPU back at one address between int3 traps, memory there not 0xcc, is a livelock"""
        v = self.verdict("livelock")
        self.assertIsNotNone(v)
        self.assertIn("copy_page_range+0xe4a", v)
        self.assertIn("0xeb", v)

    def test_not_livelock(self):
        """vcpuwatch: an idle guest, a legitimate int3 and a vCPU that moves on are not livelocks"""
        for scenario in ("idle", "legit", "transient"):
            with self.subTest(scenario=scenario):
                self.assertIsNone(self.verdict(scenario))


class Runner(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="frlock-runner.")
        d = self.d = self.tmp.name
        self.kernel = os.path.join(d, "kernel")
        os.mkdir(self.kernel)
        with open(os.path.join(self.kernel, "bzImage"), "wb") as f:
            f.write(b"\0" * 0x202 + b"HdrS" + b"\0" * 64)
        fakeqemu.system_map(os.path.join(self.kernel, "System.map"))
        with open(os.path.join(d, "rootfs.cpio"), "wb") as f:
            f.write(b"070701fake")
        self.plan = os.path.join(d, "plan")
        self.env = dict(os.environ, QEMU=os.path.abspath(fakeqemu.__file__),
                        FAKE_QEMU_PLAN=self.plan, FRLOCK_ROOTFS=os.path.join(d, "rootfs.cpio"),
                        FRLOCK_CACHE=os.path.join(d, "cache"),
                        FRLOCK_KVM_DEV=os.path.join(d, "no-kvm"),
                        FRLOCK_VCPU_WATCH_PERIOD="0.5", TMPDIR=d)

    def tearDown(self):
        self.tmp.cleanup()

    def run_guest(self, plan, *args):
        with open(self.plan, "w") as f:
            f.write("\n".join(plan) + "\n")
        p = subprocess.run([os.path.join(HOST, "run-guest"), "--kernel", self.kernel,
                            "--timeout", "60"] + list(args) + ["--exec", "true"],
                           env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, text=True, timeout=120)
        err = [ln for ln in p.stderr.splitlines() if not ln.startswith("run-guest: accel=")]
        return p.returncode, p.stdout, err

    def test_ok(self):
        """run-guest: the job's output and exit status come back"""
        rc, out, err = self.run_guest(["ok"])
        self.assertEqual((rc, out, err), (0, "hello\n", []))

    def test_livelock_status(self):
        """run-guest: a guest caught in QEMU's TCG livelock is stopped in one line, with exit status 122"""
        rc, out, err = self.run_guest(["livelock"])
        self.assertEqual(rc, runner.LIVELOCK)
        self.assertEqual(len(err), 1, err)
        self.assertRegex(err[0], r"^run-guest: guest stopped \(livelock .*\): livelock in "
                         r"QEMU's TCG: .*copy_page_range\+0xe4a.*; console log: \S+$")
        self.assertEqual(out, "partial\n")

    def test_retry_livelock(self):
        """run-guest --retry-livelock: the job runs once more; only the second attempt's output is shown"""
        rc, out, err = self.run_guest(["livelock", "ok"], "--retry-livelock")
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, "hello\n")
        self.assertEqual(len(err), 1, err)
        self.assertIn("livelock in QEMU's TCG; running the job again (first attempt: ", err[0])
        first = err[0].split("first attempt: ")[1].split(",")[0]
        with open(first + ".out") as f:
            self.assertEqual(f.read(), "partial\n")

    def test_retry_livelock_twice(self):
        """run-guest --retry-livelock: a second livelock ends with exit status 122"""
        rc, _, err = self.run_guest(["livelock", "livelock"], "--retry-livelock")
        self.assertEqual(rc, runner.LIVELOCK)
        self.assertEqual(len(err), 2, err)

    def test_panic(self):
        """run-guest: a kernel panic ends in one line, exit status 123, the log kept"""
        rc, _, err = self.run_guest(["panic"])
        self.assertEqual(rc, runner.PANIC)
        self.assertEqual(len(err), 1, err)
        self.assertRegex(err[0], r"guest kernel panicked \(Kernel panic - not syncing: "
                         r"Attempted to kill init!\); console log: ")
        with open(err[0].split("console log: ")[1]) as f:
            self.assertIn("Kernel panic", f.read())

    def test_timeout(self):
        """run-guest: a hung guest is killed at --timeout, exit status 124, its vCPUs in the log"""
        with open(self.plan, "w") as f:
            f.write("hang\n")
        p = subprocess.run([os.path.join(HOST, "run-guest"), "--kernel", self.kernel,
                            "--timeout", "3", "--exec", "true"], env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, text=True, timeout=120)
        err = [ln for ln in p.stderr.splitlines() if not ln.startswith("run-guest: accel=")]
        self.assertEqual(p.returncode, runner.TIMEOUT, err)
        self.assertEqual(len(err), 1, err)
        self.assertIn("guest timed out after 3 s; console log: ", err[0])
        with open(err[0].split("console log: ")[1]) as f:
            self.assertIn("CPU0 RIP=ffffffff8102a21a amd_e400_idle+0x3a", f.read())


if __name__ == "__main__":
    unittest.main()
