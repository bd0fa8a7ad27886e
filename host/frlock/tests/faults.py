# SPDX-License-Identifier: GPL-2.0
"""Faults in the harness, and bad input to its host tools, produced on
purpose; nothing here boots a guest (guest_runner.py does). Each fault must
end quickly with one clear line, a non-zero exit and its logs kept; each
bad input with one line and exit 2. Run by tests/run's host part, as
`python3 -m frlock.tests faults`; files in $FRLOCK_TEST_LOGS/faults.

kernel/build's faults use a scratch cache and a stand-in linux-source: a
tarball whose Makefile does in a moment what kernel/build asks of Linux's,
or stalls, or fills the disk, as FAKE_KBUILD says. The full-disk checks
mount a small tmpfs, unmounted at once (root only; else they are skipped)."""

import glob
import os
import re
import signal
import subprocess
import tarfile
import tempfile
import unittest

from frlock import TOP
from frlock.tests.harness import (expect_fail, group_left, log_kept, logs, one_line_fault,
                                  start_group, wait_for)

BUILD = os.path.join(TOP, "kernel", "build")

# A stand-in for Linux 6.1's Makefile. FAKE_KBUILD: sleep (the compile
# hangs), fill (it fills the disk), install-sleep (installing the modules
# hangs), nodepmod (modules_install as on a machine without depmod: no
# modules.dep); else every target works.
FAKE_MAKEFILE = """\
VERSION = 6
PATCHLEVEL = 1
SUBLEVEL = 99
O ?= .
tinyconfig:
	mkdir -p $(O)
	echo CONFIG_FAKE=y >$(O)/.config
olddefconfig:
	@true
bzImage:
	@echo "  CC      fake/compile.o"
ifeq ($(FAKE_KBUILD),sleep)
	@echo "fake: compiling forever"
	@sleep 600
endif
ifeq ($(FAKE_KBUILD),fill)
	@dd if=/dev/zero of=$(O)/filler bs=1M
endif
	mkdir -p $(O)/arch/x86/boot
	echo bzImage >$(O)/arch/x86/boot/bzImage
	echo vmlinux >$(O)/vmlinux
	echo System.map >$(O)/System.map
modules:
	@true
modules_install:
ifeq ($(FAKE_KBUILD),install-sleep)
	@echo "fake: installing forever"
	@sleep 600
endif
	mkdir -p $(INSTALL_MOD_PATH)/lib/modules/6.1.99-fake
ifeq ($(FAKE_KBUILD),nodepmod)
	@echo "Warning: 'depmod' not found"
else
	touch $(INSTALL_MOD_PATH)/lib/modules/6.1.99-fake/modules.dep
endif
"""

# merge_config.sh -m -O DIR BASE FRAGMENT...: all of them, concatenated.
FAKE_MERGE_CONFIG = """\
#!/usr/bin/python3
import os, sys
args = sys.argv[1:]
if args[0] == "-m":
    args = args[1:]
if args[0] == "-O":
    out, args = args[1], args[2:]
text = "".join(open(f).read() for f in args)
with open(os.path.join(out, ".config.new"), "w") as f:
    f.write(text)
os.rename(os.path.join(out, ".config.new"), os.path.join(out, ".config"))
"""


def make_fake_source(d, line="6.1", sublevel="99"):
    """The stand-in linux-source-LINE tarball (Linux LINE.SUBLEVEL), made
    in D; its path."""
    name = "linux-source-" + line
    src = os.path.join(d, "fake-source-" + line, name)
    os.makedirs(os.path.join(src, "scripts", "kconfig"), exist_ok=True)
    with open(os.path.join(src, "Makefile"), "w") as f:
        f.write(FAKE_MAKEFILE.replace("PATCHLEVEL = 1\nSUBLEVEL = 99\n",
                                      "PATCHLEVEL = %s\nSUBLEVEL = %s\n"
                                      % (line.split(".")[1], sublevel)))
    merge = os.path.join(src, "scripts", "kconfig", "merge_config.sh")
    with open(merge, "w") as f:
        f.write(FAKE_MERGE_CONFIG)
    os.chmod(merge, 0o755)
    tarball = os.path.join(d, "fake-%s.tar.xz" % name)
    with tarfile.open(tarball, "w:xz") as t:
        t.add(src, arcname=name)
    return tarball


def entries(cache):
    """The kernel entries in CACHE, 'complete: DIR' (with .complete) or
    'half-written: DIR'."""
    out = []
    for e in sorted(glob.glob(cache + "/kernels/*")) + sorted(glob.glob(cache + "/kernels/.tmp.*")):
        if os.path.isdir(e):
            out.append(("complete: " if os.path.isfile(e + "/.complete") else "half-written: ") + e)
    return out


def log_says(cache, text):
    """A build log in CACHE says TEXT."""
    for log in glob.glob(cache + "/logs/build-stock-*.log"):
        with open(log, errors="replace") as f:
            if text in f.read():
                return True
    return False


class Faults(unittest.TestCase):
    """In the order of the shell checks they replace: the stand-in builds
    first (an entry the later checks reuse)."""

    @classmethod
    def setUpClass(cls):
        cls.d = logs("faults")
        cls.tarball = make_fake_source(cls.d)

    def env(self, cache=None, **more):
        env = dict(os.environ, LINUX_SOURCE_TARBALL=self.tarball, **more)
        if cache:
            env["FRLOCK_CACHE"] = cache
        return env

    def fake_build(self, cache, *args, **more):
        """kernel/build --variant stock --quiet of the stand-in: (exit status, stdout)."""
        p = subprocess.run([BUILD, "--variant", "stock", "--quiet"] + list(args),
                           env=self.env(cache, **more), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return p.returncode, p.stdout.rstrip("\n"), p.stderr

    def built(self, cache):
        """The stand-in built into CACHE: its entry."""
        rc, out, err = self.fake_build(cache)
        self.assertEqual(rc, 0, "the build failed: " + err)
        return out

    def test_01_builds(self):
        """kernel/build: the stand-in linux-source builds (for the fault checks)"""
        out = self.built(os.path.join(self.d, "cache-ok"))
        self.assertTrue(os.path.isfile(out + "/.complete"), out)

    # --- An interrupted build ---

    def interrupted(self, sig, how, mark):
        """Start a build that stalls where the log says MARK, send SIG to its
        group; then nothing may be cached, no process left, and the next
        build must go through and be cached."""
        cache = os.path.join(self.d, "cache-%s-%s" % (how, sig.name[3:]))
        err = os.path.join(self.d, "int.err")
        with open(os.path.join(self.d, "int.out"), "w") as out, open(err, "w") as errf:
            p = start_group([BUILD, "--variant", "stock", "--quiet"],
                            env=self.env(cache, FAKE_KBUILD=how), stdout=out, stderr=errf)
        try:
            self.assertTrue(wait_for(60, lambda: log_says(cache, mark)),
                            "the build never reached '%s'" % mark)
            running = entries(cache)
            os.killpg(p.pid, sig)
            rc = p.wait()
        finally:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        said = open(err).read()
        why = "exit %d after %s; entries while it ran: %s; stderr:\n%s" % (rc, sig.name, running, said)
        self.assertTrue(wait_for(10, lambda: not group_left(p.pid)),
                        "left running: %s" % group_left(p.pid))
        self.assertNotEqual(rc, 0, why)
        if sig == signal.SIGINT:
            self.assertEqual(rc, 130, why)
            self.assertEqual([ln for ln in said.splitlines() if ln],
                             ["kernel/build: interrupted by SIGINT; nothing was cached"], why)
        after = entries(cache)
        self.assertFalse([e for e in after if e.startswith("complete")],
                         "an interrupted build was cached: %s" % after)
        if sig == signal.SIGINT:
            self.assertEqual(after, [], "a half-written entry was left")
        rc, _, _ = self.fake_build(cache, "--cached-only")
        self.assertEqual(rc, 3, "--cached-only: exit %d" % rc)
        # The log of the interrupted build was kept.
        self.assertTrue(log_says(cache, mark), "its log is gone")
        out = self.built(cache)
        self.assertTrue(os.path.isfile(out + "/.complete"), out)
        self.assertGreater(os.path.getsize(out + "/bzImage"), 0, out)

    def test_02_ctrl_c_compile(self):
        """kernel/build: Ctrl-C during the compile caches nothing, one line (exit 130); the next run builds"""
        self.interrupted(signal.SIGINT, "sleep", "fake: compiling forever")

    def test_03_ctrl_c_saving(self):
        """kernel/build: Ctrl-C while saving the kernel leaves no half-written entry; the next run builds"""
        self.interrupted(signal.SIGINT, "install-sleep", "fake: installing forever")

    def test_04_kill_saving(self):
        """kernel/build: SIGKILL while saving: the half-written entry is never reused; the next run builds"""
        self.interrupted(signal.SIGKILL, "install-sleep", "fake: installing forever")

    def test_05_half_written(self):
        """kernel/build: an entry without .complete is rebuilt, not reused"""
        # (a crash between the copy and the mark)
        cache = os.path.join(self.d, "cache-ok")
        out = self.built(cache)
        os.remove(out + "/.complete")
        open(out + "/bzImage", "w").close()
        rc, _, _ = self.fake_build(cache, "--cached-only")
        self.assertNotEqual(rc, 0, "--cached-only took it")
        p = subprocess.run([BUILD, "--variant", "stock"], env=self.env(cache),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.rstrip("\n"), out)
        self.assertTrue(os.path.isfile(out + "/.complete"))
        self.assertGreater(os.path.getsize(out + "/bzImage"), 0)
        self.assertIn("building the stock kernel", p.stderr)

    def test_06_no_modules_dep(self):
        """kernel/build: no modules.dep after modules_install: one line, nothing cached; an entry without it is rebuilt"""
        # modules_install without depmod only warns: kernel/build must
        # refuse to publish, and an entry cached without modules.dep must
        # be rebuilt.
        cache = os.path.join(self.d, "cache-nodepmod")
        line = one_line_fault(self, 1, "wrote no modules.dep (depmod missing?); nothing was cached; log: ",
                              [BUILD, "--variant", "stock", "--quiet"],
                              env=self.env(cache, FAKE_KBUILD="nodepmod"))
        log_kept(self, line, "depmod' not found")
        self.assertEqual(entries(cache), [], "it left an entry")
        out = self.built(cache)
        os.remove(out + "/modules.dep")
        rc, _, _ = self.fake_build(cache, "--cached-only")
        self.assertNotEqual(rc, 0, "--cached-only took an entry without modules.dep")
        self.assertEqual(self.built(cache), out)
        self.assertTrue(os.path.isfile(out + "/modules.dep"))

    # --- A full disk ---

    def full_disk(self, size, env):
        """kernel/build --variant stock --quiet with the cache on a tmpfs of
        SIZE, unmounted after. Its one line on stderr must say "disk full",
        nothing may be cached, and the build log it names must be kept (on
        the full disk it may have lost its last lines)."""
        m = tempfile.mkdtemp(prefix="frlock-full.")
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0755" % size, "frlock-full", m],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            os.rmdir(m)
            self.skipTest("cannot mount a tmpfs: " + p.stdout.strip())
        try:
            line = one_line_fault(self, 1, "failed: disk full under %s; log: " % m,
                                  [BUILD, "--variant", "stock", "--quiet"],
                                  env=dict(env, FRLOCK_CACHE=m))
            self.assertEqual(entries(m), [], "it left an entry")
            self.assertEqual(glob.glob(m + "/src/.extract.*"), [], "it left a half-extracted tree")
            log = re.search(r"log: (\S*)$", line)
            self.assertTrue(log and os.path.isfile(log.group(1)), "no log kept: " + line)
        finally:
            subprocess.run(["umount", m], check=True)
            os.rmdir(m)

    def test_07_disk_full_compile(self):
        """kernel/build: a disk that fills during the compile: 'disk full' in one line, log kept"""
        self.full_disk("16m", self.env(FAKE_KBUILD="fill"))

    def test_08_disk_full_extract(self):
        """kernel/build: a disk that fills while extracting linux-source: 'disk full' in one line"""
        # The real linux-source: 64 MB fill up early in its extraction.
        tarball = os.environ.get("LINUX_SOURCE_TARBALL") or "/usr/src/linux-source-6.1.tar.xz"
        if not os.access(tarball, os.R_OK):
            self.skipTest("no " + tarball)
        self.full_disk("64m", dict(os.environ, LINUX_SOURCE_TARBALL=tarball))

    # --- Bad input to kernel/build ---

    def test_09_patches_0(self):
        """kernel/build: --patches 0 is a usage error"""
        expect_fail(self, 2, "kernel/build: --patches wants a number from 1 to 99, not '0'",
                    [BUILD, "--patches", "0"])

    def test_10_patches_abc(self):
        """kernel/build: --patches abc is a usage error"""
        expect_fail(self, 2, "kernel/build: --patches wants a number from 1 to 99, not 'abc'",
                    [BUILD, "--patches", "abc"])

    def test_11_variant_no_value(self):
        """kernel/build: --variant without a value is a usage error"""
        expect_fail(self, 2, re.compile("^usage: kernel/build"), [BUILD, "--variant"])

    def test_12_garbage_source(self):
        """kernel/build: a garbage linux-source tarball is refused in one line"""
        garbage = os.path.join(self.d, "garbage.tar.xz")
        with open(garbage, "wb") as f:
            f.write(os.urandom(4096))
        one_line_fault(self, 1, "holds Linux 'unknown', the series needs 6.1.x", [BUILD, "--quiet"],
                       env=dict(os.environ, LINUX_SOURCE_TARBALL=garbage,
                                FRLOCK_CACHE=os.path.join(self.d, "cache-garbage")))

    def test_13_base_unknown(self):
        """kernel/build: --base 6.13 is refused in one line naming the bases it knows"""
        one_line_fault(self, 2, "kernel/build: --base 6.13: the bases are 6.1 and 6.12",
                       [BUILD, "--base", "6.13"])

    def test_14_frlock_on_612(self):
        """kernel/build: the frlock series on 6.12 (--series frlock, --variant lockdep) is refused in one line"""
        for how in (["--series", "frlock"], ["--variant", "lockdep"]):
            one_line_fault(self, 2, "the frlock series is on 6.1 only",
                           [BUILD, "--base", "6.12"] + how)

    def test_15_612_other_version(self):
        """kernel/build: a linux-source-6.12 of another version than the 6.12 series' base is refused, both named"""
        cover = os.path.join(TOP, "patches", "seqcount-6.12", "0000-cover-letter.patch")
        with open(cover) as f:
            based = re.search(r"^Base: linux-source (\S+)", f.read(), re.M)
        self.assertTrue(based, "%s has no 'Base: linux-source 6.12.N' line" % cover)
        self.assertNotEqual(based.group(1), "6.12.99999")
        cache = os.path.join(self.d, "cache-612")
        one_line_fault(self, 1, "holds Linux '6.12.99999', the 6.12 series is based on %s"
                       % based.group(1), [BUILD, "--base", "6.12", "--quiet"],
                       env=dict(os.environ, FRLOCK_CACHE=cache,
                                LINUX_SOURCE_TARBALL=make_fake_source(self.d, "6.12", "99999")))
        self.assertFalse(glob.glob(cache + "/src/*"), "a refused source was extracted")


# run-guest's and make run's bad input, and a missing or unusable KVM:
# test_runner.py and test_knobs.py.

if __name__ == "__main__":
    unittest.main()
