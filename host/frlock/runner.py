# SPDX-License-Identifier: GPL-2.0
"""host/run-guest: boot a kernel in QEMU with the frlock guest rootfs and
run one command in it (or a shell), in the manner of virtme-ng's vng.

The repository is shared read-only at /opt/frlock, --results DIR
read-write at /results, --add files appear under /opt/add, --carry files
at their own absolute path (a user's program and its libraries), --port
NAME=HOSTFILE gives the guest a virtio-serial port
/dev/virtio-ports/frlock.NAME whose output goes to HOSTFILE, and --hostfwd
HOSTPORT:GUESTPORT forwards 127.0.0.1:HOSTPORT on the host to the guest's
TCP GUESTPORT (QEMU user networking, restricted: the guest reaches
nothing, and nothing listens beyond the host's loopback). With --exec, the
command's stdout and stderr stream to ours over virtio-serial, the kernel
console goes to a log file under $FRLOCK_CACHE/logs (or --log FILE), and
we exit with the command's status. Without --exec: a shell on the serial
console, or, when stdin is not a terminal, a shell reading its commands
from our stdin. Modules appended from a kernel/build directory load with
modprobe; --append frlock.modules=a,b (or =all) loads them at boot.
--icount is the exact mode: QEMU's -icount shift=0,sleep=off under
single-threaded TCG with 1 vCPU, so that the guest's clock advances one
nanosecond per guest instruction and whatever the guest times in ns is
an instruction count, whatever the host's load.

Exit status: the command's (or the shell's); 2 for a usage error;
LIVELOCK (122) when the guest was stopped because QEMU's multi-threaded
TCG livelocked (vcpuwatch.py: not the guest's fault; --retry-livelock
boots it once more, and only a second livelock ends so); 123 when the
guest kernel panicked; 124 on timeout; 125 when QEMU or the guest failed
otherwise (no exit status came back), or --accel kvm found no usable KVM.
Each failure is one line on stderr, naming the console log.

--arch i386 boots an i386 kernel (kernel/build --arch i386) in
qemu-system-i386 under TCG with the i386 guest's rootfs (host/mkrootfs
--arch i386: busybox and the programs only; the repository's tools must
be built for i386, as bpf/'s are with make -C bpf ARCH=i386).

FRLOCK_KVM_DEV (default /dev/kvm) is the device that must open for KVM to
be tried; QEMU (default qemu-system-x86_64, with --arch i386
qemu-system-i386) the emulator; FRLOCK_ROOTFS a
prebuilt initramfs instead of host/mkrootfs's: the tests play a host
without KVM, a fake QEMU and a fake rootfs with them.
"""

import argparse
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time

from . import TOP, knobs, vcpuwatch

PROG = "run-guest"
HERE = os.path.join(TOP, "host")
USAGE, LIVELOCK, PANIC, TIMEOUT, FAILED = 2, 122, 123, 124, 125
LOGS_KEPT = 100


class Usage(Exception):
    pass


class Fail(Exception):
    """A failure: one line on stderr, and the exit status."""

    def __init__(self, msg, status=FAILED):
        super().__init__(msg)
        self.status = status


def say(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)


def cache_dir():
    return os.environ.get("FRLOCK_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "frlock")


# --- the command line ---------------------------------------------------------

def parser():
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog="exit status: the command's (or the shell's); 2 for a usage error; "
        "%d when QEMU's TCG livelocked; %d when the guest kernel panicked; %d on "
        "timeout; %d when QEMU or the guest failed otherwise, or --accel kvm found "
        "no usable KVM" % (LIVELOCK, PANIC, TIMEOUT, FAILED))
    p.add_argument("--kernel", metavar="PATH", help="a bzImage or a kernel/build directory")
    p.add_argument("--arch", default="x86_64", metavar="x86_64|i386",
                   help="the kernel's architecture (default x86_64); i386: qemu-system-i386, "
                   "TCG, the i386 rootfs (host/mkrootfs --arch i386), --kernel required")
    p.add_argument("--smp", metavar="N", help="guest vCPUs (default 2; 1 with --icount)")
    p.add_argument("--mem", default="2048", metavar="MB", help="guest memory (default 2048)")
    p.add_argument("--timeout", metavar="S",
                   help="seconds before the guest is stopped (0: none; default 600 with --exec)")
    p.add_argument("--accel", default="auto", metavar="auto|kvm|tcg")
    p.add_argument("--tcg-thread", default="multi", metavar="multi|single",
                   help="TCG's threading (default multi: a host thread per vCPU); single: the "
                   "vCPUs take turns on one, for kernels whose live-patched jumps trap "
                   "after the patch under multi (6.12's text_poke: an int3 Oops)")
    p.add_argument("--icount", action="store_true",
                   help="exact mode: QEMU's -icount shift=0,sleep=off under single-threaded "
                   "TCG, 1 vCPU; the guest's clock advances 1 ns per guest instruction")
    p.add_argument("--check-qemu", action="store_true",
                   help="only check that QEMU is there and, with --icount, takes -icount; "
                   "boot nothing (bench/run --exact asks this before it builds)")
    p.add_argument("--add", dest="adds", action="append", default=[], metavar="HOSTFILE",
                   help="a file the guest sees under /opt/add")
    p.add_argument("--carry", dest="carries", action="append", default=[], metavar="/HOSTFILE",
                   help="a file the guest sees at the same absolute path (a program and its "
                   "libraries: host/frlock/carry.py)")
    p.add_argument("--port", dest="ports", action="append", default=[], metavar="NAME=HOSTFILE",
                   help="a virtio-serial port /dev/virtio-ports/frlock.NAME written to HOSTFILE")
    p.add_argument("--hostfwd", dest="fwds", action="append", default=[],
                   metavar="HOSTPORT:GUESTPORT", help="forward 127.0.0.1:HOSTPORT to the guest")
    p.add_argument("--append", action="append", default=[], metavar="KERNEL_ARGS",
                   help="kernel command line arguments")
    p.add_argument("--results", metavar="DIR", help="shared read-write at /results")
    p.add_argument("--log", metavar="FILE", help="the kernel console's log")
    p.add_argument("--exec", dest="cmd", metavar="CMD", help="the command to run in the guest")
    p.add_argument("--retry-livelock", action="store_true",
                   help="boot once more when QEMU's TCG livelocked")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def parse(argv):
    p = parser()
    a = p.parse_args(argv)
    a.append = "".join(" " + v for v in a.append)
    try:
        check(a)
    except Usage as e:
        p.error(str(e))
    return a


def is_bzimage(path):
    """A bzImage has "HdrS" at offset 0x202 (the x86 boot protocol header)."""
    try:
        with open(path, "rb") as f:
            f.seek(0x202)
            return f.read(4) == b"HdrS"
    except OSError:
        return False


def check(a):
    a.stdin_job = a.cmd is None and not sys.stdin.isatty()
    if a.stdin_job:
        # Commands piped in with no --exec go to a shell that reads them
        # over virtio-serial: a serial console drops what arrives before
        # the guest opens it.
        a.cmd = "exec sh -s"
    if a.timeout is None:
        a.timeout = "600" if a.cmd is not None else "0"
    if a.smp is None:
        a.smp = "1" if a.icount else "2"
    why = knobs.check("smp", a.smp, "--smp") or knobs.check("mem", a.mem, "--mem")
    if why:
        raise Usage(why)
    a.smp, a.mem = int(a.smp), int(a.mem)
    if a.icount and a.smp > 1:
        raise Usage("--icount runs 1 vCPU, not %d: under QEMU 7.2's -icount a second vCPU "
                    "never comes up (it spins in cpu_init while the first waits for it)" % a.smp)
    if a.icount and a.accel == "kvm":
        raise Usage("--icount counts instructions under TCG, not --accel kvm")
    if not re.fullmatch(r"[0-9]{1,7}", a.timeout):
        raise Usage("--timeout wants seconds (0 for none), not '%s'" % a.timeout)
    a.timeout = int(a.timeout)
    if a.accel not in ("auto", "kvm", "tcg"):
        raise Usage("--accel wants auto, kvm or tcg, not '%s'" % a.accel)
    if a.arch not in ("x86_64", "i386"):
        raise Usage("--arch wants x86_64 or i386, not '%s'" % a.arch)
    if a.arch == "i386":
        if a.accel == "kvm" or a.icount:
            raise Usage("--arch i386 runs under TCG only, not %s"
                        % ("--icount" if a.icount else "--accel kvm"))
        if not a.kernel:
            raise Usage("--arch i386 wants --kernel (kernel/build --arch i386)")
        a.accel = "tcg"
    if a.tcg_thread not in ("multi", "single"):
        raise Usage("--tcg-thread wants multi or single, not '%s'" % a.tcg_thread)
    ports = []
    for p in a.ports:
        m = re.fullmatch(r"([a-z][a-z0-9_]{0,30})=(.+)", p)
        if not m:
            raise Usage("--port wants NAME=HOSTFILE with a lowercase NAME, not '%s'" % p)
        if m.group(1) in ("status", "stdout", "stderr", "stdin"):
            raise Usage("--port: '%s' is taken" % m.group(1))
        d = os.path.dirname(m.group(2)) or "."
        if not os.path.isdir(d) or os.path.isdir(m.group(2)):
            raise Usage("--port: cannot write '%s' (no such directory, or a directory)"
                        % m.group(2))
        ports.append((m.group(1), os.path.abspath(m.group(2))))
    a.ports = ports
    for f in a.fwds:
        m = re.fullmatch(r"([1-9][0-9]{0,4}):([1-9][0-9]{0,4})", f)
        if not m or int(m.group(1)) > 65535 or int(m.group(2)) > 65535:
            raise Usage("--hostfwd wants HOSTPORT:GUESTPORT (1-65535), not '%s'" % f)
    seen = set()
    for f in a.adds:
        if not os.path.exists(f):
            raise Usage("--add: no such file '%s'" % f)
        b = os.path.basename(os.path.normpath(f))
        if b in seen:
            raise Usage("--add: two files named '%s'" % b)
        seen.add(b)
    for f in a.carries:
        if not (os.path.isabs(f) and os.path.isfile(f)):
            raise Usage("--carry wants an absolute path to a file, not '%s'" % f)
    if a.kernel:
        k = a.kernel
        if os.path.isdir(k):
            if not is_bzimage(os.path.join(k, "bzImage")):
                raise Usage("--kernel: '%s' holds no bzImage (not a kernel/build directory)" % k)
        elif os.path.isfile(k):
            if not is_bzimage(k):
                raise Usage("--kernel: '%s' is not a bzImage" % k)
        else:
            raise Usage("--kernel wants a bzImage or a kernel/build directory, not '%s'" % k)
    if a.results:
        if os.path.exists(a.results) and not os.path.isdir(a.results):
            raise Usage("--results: '%s' is not a directory" % a.results)
        try:
            os.makedirs(a.results, exist_ok=True)
        except OSError:
            pass
        if not os.path.isdir(a.results) or not os.access(a.results, os.W_OK):
            raise Usage("--results: cannot create or write the directory '%s'" % a.results)
        a.results = os.path.abspath(a.results)


def has_icount(qemu):
    """Does this QEMU take -icount (its -help lists it)?"""
    try:
        out = subprocess.run([qemu, "-help"], stdout=subprocess.PIPE, text=True,
                             stderr=subprocess.DEVNULL).stdout
    except OSError:
        return False
    return re.search(r"^-icount ", out, re.M) is not None


# --- KVM ------------------------------------------------------------------------

class Accel:
    """Whether KVM may be tried (the device opens), and the verdict of an
    earlier probe, cached per QEMU version and host kernel."""

    def __init__(self, qemu, cache):
        dev = os.environ.get("FRLOCK_KVM_DEV", "/dev/kvm")
        self.ok, self.why = False, None
        if not os.path.exists(dev):
            self.why = "kvm: no %s" % dev
        elif stat.S_ISCHR(os.stat(dev).st_mode):
            try:
                os.close(os.open(dev, os.O_RDWR))
                self.ok = True
            except OSError as e:
                self.why = "kvm: cannot open %s: %s" % (dev, e.strerror)
        else:
            self.why = "kvm: %s is not a device" % dev
        version = subprocess.run([qemu, "--version"], stdout=subprocess.PIPE, text=True,
                                 stderr=subprocess.DEVNULL).stdout.splitlines()[:1]
        key = "\n".join(version + [os.uname().release]) + "\n"
        self.file = os.path.join(cache, "accel", hashlib.sha256(key.encode()).hexdigest()[:16])

    def verdict(self):
        try:
            with open(self.file) as f:
                v = f.readline().strip().split(" ", 1)
        except OSError:
            return None
        return (v[0], v[1] if len(v) > 1 else "") if v and v[0] else None

    def no_kvm(self, why):
        return Fail("--accel kvm: no usable KVM (%s); use --accel auto or tcg" % why)


# --- output of the guest's ports --------------------------------------------------

class Pump(threading.Thread):
    """Copy a pipe (a virtio-serial port QEMU writes) to a file object, as
    it comes; should that file close (run-guest ... | head), keep draining
    the pipe, so that QEMU never blocks on a port nobody reads."""

    def __init__(self, rfd, out):
        super().__init__(daemon=True)
        self.rfd, self.out = rfd, out

    def run(self):
        broken = False
        while True:
            try:
                chunk = os.read(self.rfd, 65536)
            except OSError:
                break
            if not chunk:
                break
            if broken:
                continue
            try:
                self.out.write(chunk)
                self.out.flush()
            except (OSError, ValueError):
                broken = True
        os.close(self.rfd)


# --- one boot -------------------------------------------------------------------

class Boot:
    """One QEMU run: its arguments, its outcome."""

    def __init__(self, r, accel_args, watcher):
        self.r, self.accel_args, self.watcher = r, accel_args, watcher
        self.outcome = "exited"     # exited, timeout, slow, livelock
        self.booted_at = None
        self.livelock = None
        self.qrc = None

    def run(self, qargs, status, timeout, deadline=0, stdin=subprocess.DEVNULL,
            pass_fds=(), monitor=None, stdout=subprocess.DEVNULL):
        r = self.r
        open(status, "w").close()
        if monitor and os.path.exists(monitor):
            os.remove(monitor)      # a boot before this one's
        err = open(os.path.join(r.run, "qemu.err"), "w")
        start = time.monotonic()
        q = subprocess.Popen([r.qemu] + r.base_args + self.accel_args + qargs, stdin=stdin,
                             stdout=stdout, stderr=err, pass_fds=pass_fds)
        r.qemu_proc = q
        err.close()
        stop, verdict = threading.Event(), []
        if self.watcher and monitor and r.sysmap:
            t = threading.Thread(target=lambda: verdict.append(
                vcpuwatch.watch(monitor, vcpuwatch.Symbols(r.sysmap), stop)), daemon=True)
            t.start()
        while True:
            try:
                self.qrc = q.wait(0.2)
                break
            except subprocess.TimeoutExpired:
                pass
            if verdict and verdict[0]:
                self.outcome, self.livelock = "livelock", verdict[0]
                break
            if self.booted_at is None and self._booted(status):
                self.booted_at = time.monotonic() - start
            gone = time.monotonic() - start
            if deadline and self.booted_at is None and gone >= deadline:
                self.outcome = "slow"
                break
            if timeout and gone >= timeout:
                self.outcome = "timeout"
                break
        stop.set()
        if self.outcome == "timeout" and monitor and os.path.exists(monitor):
            # Where each vCPU was, named from System.map, at the end of the
            # console log: a vCPU spinning in one place, or QEMU's livelock.
            with open(r.log, "a") as f:
                self.livelock = vcpuwatch.dump(monitor, vcpuwatch.Symbols(r.sysmap), f)
        if self.outcome != "exited":
            q.kill()
            self.qrc = q.wait()
        r.qemu_proc = None
        if self.booted_at is None and self._booted(status):
            self.booted_at = time.monotonic() - start
        return self

    @staticmethod
    def _booted(status):
        try:
            with open(status) as f:
                return "booted" in f.read()
        except OSError:
            return False


def port(qargs, name, spec):
    qargs += ["-chardev", "%s,id=%s" % (spec, name),
              "-device", "virtserialport,bus=vser.0,chardev=%s,name=frlock.%s" % (name, name)]


class Runner:
    def __init__(self, a):
        self.a = a
        self.cache = cache_dir()
        self.qemu = os.environ.get("QEMU", "qemu-system-i386" if a.arch == "i386" else
                                   "qemu-system-x86_64")
        self.qemu_proc = None
        self.run = None
        self.sysmap = None

    def check_qemu(self):
        a = self.a
        if not shutil.which(self.qemu):
            raise Fail("'%s' is missing: run 'make deps'" % self.qemu)
        if a.icount and not has_icount(self.qemu):
            raise Fail("--icount: '%s' has no -icount option (its -help does not list it)"
                       % self.qemu, USAGE)

    def prepare(self):
        a = self.a
        self.check_qemu()
        if not shutil.which("cpio"):
            raise Fail("'cpio' is missing: run 'make deps'")
        try:
            os.makedirs(os.path.join(self.cache, "logs"), exist_ok=True)
            os.makedirs(os.path.join(self.cache, "accel"), exist_ok=True)
        except OSError:
            raise Fail("cannot create %s/logs" % self.cache)
        # KVM: decided before anything is built, whenever it can be.
        self.accel = Accel(self.qemu, self.cache)
        if a.accel == "kvm":
            if not self.accel.ok:
                raise self.accel.no_kvm(self.accel.why)
            v = self.accel.verdict()
            if v and v[0] == "tcg":
                raise self.accel.no_kvm("%s; verdict cached in %s, delete it to probe again"
                                        % (v[1], self.accel.file))
        kernel = a.kernel
        if not kernel:
            k = subprocess.run([os.path.join(TOP, "kernel/build"), "--variant", "frlock"],
                               stdout=subprocess.PIPE, text=True)
            if k.returncode:
                raise Fail("kernel/build failed")
            kernel = k.stdout.strip()
        self.modules = None
        if os.path.isdir(kernel):
            m, s = os.path.join(kernel, "modules.cpio.gz"), os.path.join(kernel, "System.map")
            self.modules = m if os.path.isfile(m) else None
            self.sysmap = s if os.path.isfile(s) else None
            kernel = os.path.join(kernel, "bzImage")
        if not os.path.isfile(kernel):
            raise Fail("no kernel image at '%s'" % kernel)
        self.kernel = kernel
        rootfs = os.environ.get("FRLOCK_ROOTFS")
        if not rootfs:
            cmd = [os.path.join(HERE, "mkrootfs"), "--uncompressed", "--arch", a.arch] + (
                ["--verbose"] if a.verbose else [])
            mk = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
            if mk.returncode:
                raise Fail("host/mkrootfs failed")
            rootfs = mk.stdout.strip()
        self.rootfs = rootfs
        logs = os.path.join(self.cache, "logs")
        old = sorted((os.path.join(logs, f) for f in os.listdir(logs)
                      if f.startswith("guest-") and f.endswith(".log")),
                     key=lambda p: os.stat(p).st_mtime, reverse=True)
        for p in old[LOGS_KEPT - 1:]:
            try:
                os.remove(p)
            except OSError:
                pass
        self.log = a.log or os.path.join(logs, "guest-%s-%d.log" % (
            time.strftime("%Y%m%d-%H%M%S", time.gmtime()), os.getpid()))
        self.run = tempfile.mkdtemp(prefix="run-guest.", dir=os.environ.get("TMPDIR", "/tmp"))
        self.initrd = os.path.join(self.run, "initrd")
        self.pack()
        self.base_args = ["-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
                          "-smp", str(a.smp), "-m", str(a.mem), "-kernel", self.kernel,
                          "-initrd", self.initrd, "-device", "virtio-serial-pci,id=vser"]
        if a.fwds:
            netdev = "user,id=net0,restrict=on" + "".join(
                ",hostfwd=tcp:127.0.0.1:%s-:%s" % tuple(f.split(":")) for f in a.fwds)
            self.base_args += ["-netdev", netdev, "-device", "virtio-net-pci,netdev=net0"]

    def pack(self):
        """The initrd: the rootfs, the kernel's modules and the run's own
        cpio (the command, the shell's settings, the --add files), each
        archive on a 4-byte boundary (the kernel skips zeros between)."""
        a = self.a
        job = os.path.join(self.run, "job")
        os.makedirs(os.path.join(job, "run/frlock"))
        os.makedirs(os.path.join(job, "opt/add"))
        for d in ("", "run", "run/frlock", "opt", "opt/add"):
            os.chmod(os.path.join(job, d), 0o755)
        if a.cmd is not None:
            with open(os.path.join(job, "run/frlock/cmd"), "w") as f:
                f.write(a.cmd + "\n")
        if a.stdin_job:
            open(os.path.join(job, "run/frlock/stdin"), "w").close()
        with open(os.path.join(job, "run/frlock/env"), "w") as f:
            if sys.stdin.isatty():
                try:
                    size = os.get_terminal_size(sys.stdin.fileno())
                    f.write("FRLOCK_ROWS=%d\nFRLOCK_COLS=%d\n" % (size.lines, size.columns))
                except OSError:
                    pass
        for src in a.adds:
            dst = os.path.join(job, "opt/add", os.path.basename(os.path.normpath(src)))
            try:
                if os.path.isdir(src):
                    shutil.copytree(src, dst, symlinks=False)
                else:
                    shutil.copy(src, dst)
            except OSError:
                raise Fail("cannot copy '%s'" % src)
        for src in a.carries:
            # At the path the host's loader named: the rootfs keeps the
            # host's libraries at those paths, in plain directories.
            rel = os.path.normpath(src).lstrip("/")
            dst = os.path.join(job, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            parts = rel.split("/")[:-1]
            for i in range(len(parts)):
                os.chmod(os.path.join(job, *parts[:i + 1]), 0o755)
            try:
                shutil.copy(src, dst)
            except OSError:
                raise Fail("cannot copy '%s'" % src)
        with open(self.initrd, "wb") as out:
            for part in (self.rootfs, self.modules):
                if part:
                    with open(part, "rb") as f:
                        shutil.copyfileobj(f, out)
                    out.write(b"\0" * (-out.tell() % 4))
            files = sorted(os.path.relpath(os.path.join(d, n), job)
                           for d, dirs, names in os.walk(job) for n in dirs + names)
            out.flush()
            cp = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=job,
                                input="\n".join(files) + "\n", text=True, stdout=out)
            if cp.returncode:
                raise Fail("packing the run's cpio failed")

    def choose_accel(self):
        """(accelerator flags, what ran, a note)."""
        a, ac = self.a, self.accel
        # i386: QEMU's max CPU says AuthenticAMD, family 6 (an Athlon), which
        # the kernel warns is "not suitable for SMP" (and taints): Intel's.
        tcg = ["-accel", "tcg,thread=" + a.tcg_thread, "-cpu",
               "max,vendor=GenuineIntel" if a.arch == "i386" else "max"]
        if a.icount:
            # One instruction, one ns of guest time; sleep=off: an idle
            # guest's clock jumps to its next timer instead of waiting.
            return (["-accel", "tcg,thread=single", "-icount", "shift=0,sleep=off", "-cpu", "max"],
                    "tcg-icount", "exact: 1 guest ns per guest instruction")
        if a.accel == "tcg":
            return tcg, "tcg", "i386: TCG only" if a.arch == "i386" else "forced by --accel tcg"
        if not ac.ok:
            return tcg, "tcg", ac.why
        if ac.verdict() is None:
            say("probing KVM (once per QEMU version and host kernel; at most about 20 s)")
            v = self.kvm_probe()
            with open(ac.file + ".%d" % os.getpid(), "w") as f:
                f.write(v + "\n")
            os.replace(ac.file + ".%d" % os.getpid(), ac.file)
        kind, rest = ac.verdict()
        if kind == "kvm":
            return ["-accel", "kvm", "-cpu", rest.split()[0]], "kvm", None
        if a.accel == "kvm":
            # A KVM that crawls or that QEMU refuses would hang the run.
            raise ac.no_kvm("%s; verdict cached in %s, delete it to probe again" % (rest, ac.file))
        return tcg, "tcg", "%s; verdict cached in %s" % (rest, ac.file)

    def kvm_probe(self):
        """Can this host run the guest under KVM, and with which -cpu? A
        short boot that stops as soon as init runs tells."""
        why = []
        probe_log = os.path.join(self.cache, "logs", "kvm-probe-%d.log" % os.getpid())
        try:
            for cpu in ("host", "host,-arch-capabilities"):
                status = os.path.join(self.run, "probe-status")
                qargs = ["-chardev", "file,id=con,path=" + probe_log, "-serial", "chardev:con",
                         "-append", "console=ttyS0 panic=-1 frlock.probe"]
                port(qargs, "status", "file,path=" + status)
                b = Boot(self, ["-accel", "kvm", "-cpu", cpu], False).run(
                    qargs, status, timeout=60, deadline=20)
                if b.booted_at is not None:
                    return "kvm %s booted in %ds" % (cpu, b.booted_at)
                if b.outcome == "exited":
                    # QEMU refused this -cpu (e.g. "failed to set MSR"): the next.
                    with open(os.path.join(self.run, "qemu.err")) as f:
                        first = next((ln.strip() for ln in f if ln.strip()), None)
                    why.append("-cpu %s: %s" % (cpu, (first or "exit status %d" % b.qrc)
                                                .replace("qemu-system-x86_64: ", "")))
                    continue
                why.append("-cpu %s: no boot within 20 s (nested KVM too slow?)" % cpu)
                break
        finally:
            if os.path.exists(probe_log):
                os.remove(probe_log)
        return "tcg kvm: " + "; ".join(why)

    def boot(self, accel_args, used, buffered):
        """The real run; (outcome, exit status from the guest or None)."""
        a = self.a
        status = os.path.join(self.run, "status")
        monitor = os.path.join(self.run, "monitor")
        # no_timer_check: under TCG on a loaded host the IO-APIC timer
        # check at boot can see too few ticks and panic ("IO-APIC + timer
        # doesn't work!"): seen twice in one afternoon, on the stock and
        # the seqcount kernels; QEMU's timer routing is not under test.
        qargs = ["-append", "console=ttyS0 panic=-1 no_timer_check" + a.append]
        port(qargs, "status", "file,path=" + status)
        pumps, fds, stdin = [], [], subprocess.DEVNULL
        outs = []
        if a.cmd is not None:
            qargs += ["-chardev", "file,id=con,path=" + self.log, "-serial", "chardev:con"]
            # The job's stdout and stderr: pipes that QEMU writes through
            # /proc/self/fd (as vng does), pumped to ours as they come, or
            # to files kept until the boot is known not to have livelocked.
            for name, ours in (("stdout", sys.stdout.buffer), ("stderr", sys.stderr.buffer)):
                rfd, wfd = os.pipe()
                out = tempfile.TemporaryFile(dir=self.run) if buffered else ours
                outs.append((out, ours))
                pumps.append(Pump(rfd, out))
                fds.append(wfd)
                port(qargs, name, "file,path=/proc/self/fd/%d" % wfd)
            qargs += ["-monitor", "unix:%s,server=on,wait=off" % monitor]
            if a.stdin_job:
                port(qargs, "stdin", "stdio,signal=off")
                stdin = None        # ours
        else:
            # The console on our terminal, with QEMU's monitor behind
            # Ctrl-A c (Ctrl-A x quits); Ctrl-C goes to the guest.
            qargs += ["-chardev", "stdio,id=con,mux=on,signal=off,logfile=" + self.log,
                      "-serial", "chardev:con", "-mon", "chardev=con,mode=readline"]
            stdin = None
        # What the guest writes to /dev/virtio-ports/frlock.NAME lands in
        # HOSTFILE as it is written.
        for name, path in a.ports:
            port(qargs, name, "file,path=" + path)
        qargs += ["-virtfs", "local,path=%s,mount_tag=frlock,security_model=none,readonly=on,"
                  "id=frlock" % TOP]
        if a.results:
            qargs += ["-virtfs", "local,path=%s,mount_tag=results,security_model=none,"
                      "id=results" % a.results]
        if a.verbose:
            say("console log: " + self.log)
            say(" ".join([self.qemu] + self.base_args + accel_args + qargs))
        for p in pumps:
            p.start()
        # Under multi-threaded TCG a watcher looks for its livelock while the
        # job runs (single-threaded TCG, as under --icount, has none).
        watcher = used == "tcg" and a.tcg_thread == "multi" and a.cmd is not None
        try:
            # Without a command the console is QEMU's stdio: ours.
            b = Boot(self, accel_args, watcher).run(
                qargs, status, a.timeout, stdin=stdin, pass_fds=fds, monitor=monitor,
                stdout=None if a.cmd is None else subprocess.DEVNULL)
        finally:
            for fd in fds:
                os.close(fd)
        for p in pumps:
            p.join(5)
        if buffered and b.outcome != "livelock":
            for out, ours in outs:
                out.seek(0)
                shutil.copyfileobj(out, ours)
                ours.flush()
        elif buffered:
            for (out, _), name in zip(outs, ("out", "err")):
                out.seek(0)
                with open(self.log + ".livelock." + name, "wb") as f:
                    shutil.copyfileobj(out, f)
        if b.booted_at is not None and a.verbose:
            say("guest init ran %ds after QEMU started" % b.booted_at)
        rc = None
        with open(status) as f:
            for line in f:
                m = re.fullmatch(r"exit ([0-9]+)\s*", line)
                if m:
                    rc = int(m.group(1))
        return b, rc

    def verdict(self, b, rc):
        """The exit status, and the one line that says why when it is no
        status of the job's."""
        if rc is not None:
            if b.outcome != "exited":
                say("warning: the guest did not power off after the job; QEMU was killed")
            if self.a.verbose:
                with open(os.path.join(self.run, "qemu.err")) as f:
                    for line in f:
                        print("qemu: " + line, end="", file=sys.stderr)
                say("exit status %d; console log: %s" % (rc, self.log))
            return rc
        log = ""
        try:
            with open(self.log, errors="replace") as f:
                log = f.read()
        except OSError:
            pass
        if b.outcome == "livelock" or (b.outcome == "timeout" and b.livelock):
            raise Fail("guest stopped (%s after %s): %s; console log: %s" % (
                "livelock" if b.outcome == "livelock" else "timed out",
                "%d s" % self.a.timeout if b.outcome == "timeout" else "the watcher's check",
                b.livelock, self.log), LIVELOCK)
        if b.outcome == "timeout":
            raise Fail("guest timed out after %d s; console log: %s" % (self.a.timeout, self.log),
                       TIMEOUT)
        m = re.search(r"Initramfs unpacking failed.*", log)
        if m:
            raise Fail("the guest could not unpack its initramfs (%s); try a larger --mem; "
                       "console log: %s" % (m.group(0).strip(), self.log))
        m = re.search(r"Kernel panic - not syncing.*", log)
        if m:
            raise Fail("guest kernel panicked (%s); console log: %s" % (
                m.group(0).replace("\r", "").strip(), self.log), PANIC)
        with open(os.path.join(self.run, "qemu.err")) as f:
            qerr = next((ln.strip() for ln in f if ln.strip()), None)
        if b.booted_at is None and b.qrc:
            raise Fail("QEMU failed to start (exit status %d: %s); console log: %s" % (
                b.qrc, qerr or "no message", self.log))
        raise Fail("the guest exited without reporting the job's exit status%s; console log: %s"
                   % (" (%s)" % qerr if qerr else "", self.log))

    def main(self):
        if self.a.check_qemu:
            self.check_qemu()
            return 0
        self.prepare()
        accel_args, used, note = self.choose_accel()
        say("accel=%s%s" % (used, " (%s)" % note if note else ""))
        retry = self.a.retry_livelock and self.a.cmd is not None
        b, rc = self.boot(accel_args, used, buffered=retry)
        if retry and b.outcome == "livelock" and rc is None:
            # Not the guest's fault: the job runs once more, and says so.
            first = self.log + ".livelock"
            if os.path.exists(self.log):
                os.replace(self.log, first)
            say("%s; running the job again (first attempt: %s, .out, .err)" % (
                b.livelock.split(":")[0], first))
            b, rc = self.boot(accel_args, used, buffered=True)
        return self.verdict(b, rc)

    def cleanup(self):
        if self.qemu_proc is not None:
            self.qemu_proc.kill()
            self.qemu_proc.wait()
        if self.run:
            shutil.rmtree(self.run, ignore_errors=True)


def main(argv):
    a = parse(argv)
    r = Runner(a)
    term = None
    if sys.stdin.isatty():
        import termios
        try:
            term = termios.tcgetattr(sys.stdin.fileno())
        except termios.error:
            term = None

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)

    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        return r.main()
    except Fail as e:
        say(str(e))
        return e.status
    finally:
        r.cleanup()
        if term is not None:
            import termios
            termios.tcsetattr(sys.stdin.fileno(), termios.TCSADRAIN, term)
