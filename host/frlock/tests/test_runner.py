# SPDX-License-Identifier: GPL-2.0
"""The runner (host/run-guest) and its livelock watcher, against a fake
QEMU and its fake monitor (fakeqemu.py): the watcher names the livelock
seen in session logs and nothing else; the runner stops such a guest with
its own exit status, in one line naming the console log, and
--retry-livelock boots it once more, showing only the second attempt's
output; a panic and a timeout keep their statuses."""

import hashlib
import os
import stat
import subprocess
import tempfile
import threading
import time
import unittest

from frlock import runner, vcpuwatch
from frlock.tests import fakeqemu

HOST = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Watcher(unittest.TestCase):
    def verdict(self, scenario):
        with tempfile.TemporaryDirectory() as d:
            sysmap = os.path.join(d, "System.map")
            fakeqemu.system_map(sysmap, scenario)
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

    def test_livelock_i386(self):
        """vcpuwatch on i386: EIP and 8-digit addresses; int3 handled through handle_exception"""
        v = self.verdict("livelock-i386")
        self.assertIsNotNone(v)
        self.assertIn("tick_periodic+0x3a", v)
        self.assertIn("0xe9", v)

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

    def test_icount(self):
        """run-guest --icount: QEMU gets -icount shift=0,sleep=off, single-threaded TCG and 1 vCPU"""
        rc, out, err = self.run_guest(["args"], "--icount")
        self.assertEqual((rc, err), (0, []))
        args = out.split()
        for opt, val in (("-icount", "shift=0,sleep=off"), ("-accel", "tcg,thread=single"),
                         ("-smp", "1")):
            self.assertEqual(args[args.index(opt) + 1], val, out)
        self.assertEqual(args.count("-accel"), 1, out)
        rc, out, err = self.run_guest(["args"])
        self.assertNotIn("-icount", out.split())
        self.assertEqual(out.split()[out.split().index("-smp") + 1], "2")

    def test_no_icount(self):
        """run-guest --icount on a QEMU without -icount: one line, exit 2, nothing booted"""
        self.env["FAKE_QEMU_NO_ICOUNT"] = "1"
        rc, out, err = self.run_guest(["args"], "--icount")
        self.assertEqual((rc, out), (2, ""))
        self.assertEqual(len(err), 1, err)
        self.assertRegex(err[0], r"^run-guest: --icount: '.*fakeqemu.py' has no -icount option")
        with open(self.plan) as f:
            self.assertEqual(f.read().split(), ["args"])

    def test_panic(self):
        """run-guest: a kernel panic ends in one line, exit status 123, the log kept"""
        rc, _, err = self.run_guest(["panic"])
        self.assertEqual(rc, runner.PANIC)
        self.assertEqual(len(err), 1, err)
        self.assertRegex(err[0], r"guest kernel panicked \(Kernel panic - not syncing: "
                         r"Attempted to kill init!\); console log: ")
        with open(err[0].split("console log: ")[1]) as f:
            self.assertIn("Kernel panic", f.read())

    def test_console(self):
        """run-guest without --exec on a terminal: the guest's console is the terminal's"""
        import pty
        with open(self.plan, "w") as f:
            f.write("ok\n")
        master, slave = pty.openpty()
        p = subprocess.Popen([os.path.join(HOST, "run-guest"), "--kernel", self.kernel],
                             env=self.env, stdin=slave, stdout=slave, stderr=slave)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        rc = p.wait(60)
        os.close(master)
        self.assertEqual(rc, 0, out)
        self.assertIn(b"console: hello", out)

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


class BadInput(unittest.TestCase):
    """Refused before anything is built or booted: exit 2, the first line
    on stderr names the fault, the rest is the usage, nothing on stdout,
    within 10 s."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="frlock-runner-usage.")
        self.d = self.tmp.name
        self.notbz = os.path.join(self.d, "not-a-bzimage")
        with open(self.notbz, "w") as f:
            f.write("not a kernel\n")

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, want, *args, env=None):
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(HOST, "run-guest")] + list(args), env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        err = p.stderr.splitlines()
        self.assertEqual(p.returncode, 2, p.stderr)
        said = [ln for ln in err if not ln.startswith(("usage:", " "))]
        self.assertEqual(len(said), 1, err)
        self.assertIn(want, said[0])
        self.assertTrue(err[0].startswith("usage:"), err)
        self.assertEqual(p.stdout, "")
        self.assertLess(time.monotonic() - t0, 10)

    def test_usage(self):
        """run-guest: bad options and files are refused in one line with the usage (exit 2)"""
        d, nb = self.d, self.notbz
        for want, args in (
                ("unrecognized arguments: --bogus", ["--bogus"]),
                ("--kernel: '%s' is not a bzImage" % nb, ["--kernel", nb]),
                ("holds no bzImage", ["--kernel", d]),
                ("--kernel wants a bzImage or a kernel/build directory", ["--kernel", d + "/none"]),
                ("argument --kernel: expected one argument", ["--kernel", "--exec", "true"]),
                ("--smp wants a number of guest vCPUs from 1 to 255, not '256'", ["--smp", "256"]),
                ("--smp wants", ["--smp", "0"]), ("--smp wants", ["--smp", "two"]),
                ("--mem wants a size in MB from 1024", ["--mem", "512"]),
                ("(the host's memory)", ["--mem", "9999999"]),
                ("--timeout wants seconds", ["--timeout", "abc"]),
                ("--accel wants auto, kvm or tcg, not 'xen'", ["--accel", "xen"]),
                ("--add: no such file", ["--add", d + "/none"]),
                ("--results: '%s' is not a directory" % nb, ["--results", nb]),
                ("--port: cannot write '%s/none/feed'" % d, ["--port", "feed=%s/none/feed" % d]),
                ("--port wants NAME=HOSTFILE", ["--port", "Feed=x"]),
                ("--port: 'status' is taken", ["--port", "status=%s/x" % d]),
                ("--hostfwd wants HOSTPORT:GUESTPORT", ["--hostfwd", "0.0.0.0:9100:9100"]),
                ("--icount runs 1 vCPU, not 2: under QEMU 7.2's -icount a second vCPU never "
                 "comes up", ["--icount", "--smp", "2"]),
                ("--icount counts instructions under TCG, not --accel kvm",
                 ["--icount", "--accel", "kvm"]),
                ("--arch wants x86_64 or i386, not 'arm64'", ["--arch", "arm64"]),
                ("--arch i386 runs under TCG only, not --accel kvm",
                 ["--arch", "i386", "--accel", "kvm", "--exec", "true"]),
                ("--arch i386 runs under TCG only, not --icount",
                 ["--arch", "i386", "--icount", "--smp", "1", "--exec", "true"]),
                ("--arch i386 wants --kernel (kernel/build --arch i386)",
                 ["--arch", "i386", "--exec", "true"])):
            with self.subTest(args=args):
                self.refused(want, *args)

    def test_mkrootfs_arch(self):
        """mkrootfs --arch: an unknown architecture is one line with the usage (exit 2), nothing built"""
        p = subprocess.run([os.path.join(HOST, "mkrootfs"), "--arch", "arm64"],
                           env=dict(os.environ, FRLOCK_CACHE=self.d + "/cache"), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        err = p.stderr.splitlines()
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout, "")
        self.assertTrue(err and err[0].startswith("usage:"), err)
        self.assertIn("argument --arch: invalid choice: 'arm64'", err[-1])
        self.assertFalse(os.path.exists(self.d + "/cache"))

    def no_kvm(self, dev, why, cache=None):
        env = dict(os.environ, FRLOCK_KVM_DEV=dev, FRLOCK_CACHE=cache or self.d + "/cache")
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(HOST, "run-guest"), "--accel", "kvm", "--exec", "true"],
                           env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=60)
        self.assertEqual(p.returncode, runner.FAILED, p.stderr)
        self.assertEqual(p.stderr.splitlines(), ["run-guest: --accel kvm: no usable KVM (%s); "
                                                 "use --accel auto or tcg" % why])
        self.assertLess(time.monotonic() - t0, 10)

    def test_no_kvm_nodev(self):
        """run-guest --accel kvm: a /dev/kvm with no driver behind it: one line (exit 125)"""
        nodev = os.path.join(self.d, "kvm-nodev")
        try:
            os.mknod(nodev, 0o600 | stat.S_IFCHR, os.makedev(0, 0))
        except PermissionError:
            self.skipTest("mknod is not allowed here")
        try:
            os.close(os.open(nodev, os.O_RDWR))
            why = None
        except OSError as e:
            why = e.strerror
        self.assertIsNotNone(why, "a 0:0 device node opened")
        self.no_kvm(nodev, "kvm: cannot open %s: %s" % (nodev, why))

    def test_no_kvm(self):
        """run-guest --accel kvm: a /dev/kvm missing, not a device or found unusable: one line (exit 125) before anything is built"""
        self.no_kvm(self.d + "/none", "kvm: no %s/none" % self.d)
        self.no_kvm(self.d, "kvm: %s is not a device" % self.d)
        # A device that opens, but an earlier probe found that guests do
        # not boot on it (a nested KVM that crawls): the cached verdict.
        cache = os.path.join(self.d, "cache-kvm")
        os.makedirs(os.path.join(cache, "accel"))
        qemu = os.environ.get("QEMU", "qemu-system-x86_64")
        version = subprocess.run([qemu, "--version"], stdout=subprocess.PIPE,
                                 text=True).stdout.splitlines()[0]
        f = os.path.join(cache, "accel", hashlib.sha256(
            (version + "\n" + os.uname().release + "\n").encode()).hexdigest()[:16])
        with open(f, "w") as out:
            out.write("tcg kvm: -cpu host: no boot within 20 s (nested KVM too slow?)\n")
        self.no_kvm("/dev/null", "kvm: -cpu host: no boot within 20 s (nested KVM too slow?); "
                    "verdict cached in %s, delete it to probe again" % f, cache)


if __name__ == "__main__":
    unittest.main()
