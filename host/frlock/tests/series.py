# SPDX-License-Identifier: GPL-2.0
"""The two series and kernel/build, on the host: the cover letters and
sign-offs; git am on the installed linux-source at its base-commit, the
frlock series' prerequisites, checkpatch --strict (every report explained)
and kernel-doc; the two kernels the other checks use (the seqcount series
alone, both whole) and the frlock kernel's config; tk_core's layout
(host/tk-layout); the read fast path the seqcount events leave alone
(tests/fastpath.py on objects compiled here); sparse; kernel/build's bad
input and faults. FRLOCK_TEST_LONG (make test-long) adds every prefix of
both series and the arm64 cross build.

Run by tests/run's host part, as `python3 -m frlock.tests series`, in
this order (load_tests). Each check keeps its command's output in
$FRLOCK_TEST_LOGS/NAME.log, as protocol.Run's check does, and says every
30 s how long it has run."""

import collections
import functools
import glob
import hashlib
import inspect
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import unittest

from frlock import TOP
from frlock.runner import cache_dir
from frlock.tests import harness
from frlock.tests.protocol import Progress

BUILD = os.path.join(TOP, "kernel", "build")
FASTPATH = os.path.join(TOP, "tests", "fastpath.py")
NOINSTR_WRITERS = os.path.join(TOP, "kernel", "noinstr-writers")
LONG = os.environ.get("FRLOCK_TEST_LONG")
JOBS = len(os.sched_getaffinity(0))     # as nproc counts them
GIT_ID = ["-c", "user.name=test", "-c", "user.email=test@localhost"]


@functools.cache
def logs():
    d = os.environ.get("FRLOCK_TEST_LOGS") or tempfile.mkdtemp(prefix="frlock-series-")
    os.makedirs(d, exist_ok=True)
    return d


def patches(series):
    """The series' patches in the order git am applies them (the cover
    letter is not a patch)."""
    return sorted(p for p in glob.glob(os.path.join(TOP, "patches", series, "[0-9]" * 4 + "-*.patch"))
                  if not os.path.basename(p).startswith("0000-"))


SEQCOUNT, FRLOCK = patches("seqcount"), patches("frlock")
SERIES = SEQCOUNT + FRLOCK                  # the seqcount series first
# The seqcount series' port to 6.12, Debian's newest linux-source.
SEQCOUNT_612 = patches("seqcount-6.12")


def cover(series):
    return read(os.path.join(TOP, "patches", series, "0000-cover-letter.patch"))


def tagged(text, tag):
    """The values of the "TAG: value" lines of text, in order."""
    return re.findall(r"^%s: (.*)$" % re.escape(tag), text, re.M)


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def out(*cmd, **kw):
    """A command's stdout, stripped; None if it failed."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, **kw)
    return p.stdout.strip() if p.returncode == 0 else None


@functools.cache
def linux_source(base="6.1"):
    """The installed linux-source-BASE's git repository (kernel/build
    --source), None if it could not be extracted (its stderr in
    source-BASE.err)."""
    with open(os.path.join(logs(), "source-%s.err" % base), "w") as err:
        return out(BUILD, "--base", base, "--source", "--quiet", stderr=err) or None


def cached_kernel(series):
    return out(BUILD, "--series", series, "--cached-only", "--quiet", stderr=subprocess.DEVNULL)


def base_commit(base="6.1"):
    return out("git", "-C", linux_source(base), "rev-parse", "base")


def diffs(patch_files):
    """The diffs of the patches without their messages and signatures:
    what a cached object depends on."""
    text = ""
    for p in patch_files:
        inside = False
        for line in read(p).splitlines(keepends=True):
            inside = inside or line.startswith("diff --git ")
            if inside:
                text += line
            if inside and line == "-- \n":
                inside = False
    return text


def gcc_version():
    return subprocess.run(["gcc", "--version"], stdout=subprocess.PIPE, text=True).stdout.split("\n")[0]


class Check(unittest.TestCase):
    """A check with its output in a log (named as protocol.Run's check
    names it, the newline of its echo included) and a progress line every
    30 s with the log's last line: a kernel build or a compile is never
    silent."""

    def setUp(self):
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", self.shortDescription() + "\n")[:80]
        self.log_path = os.path.join(logs(), name + ".log")
        self.log = open(self.log_path, "w", buffering=1)
        self.addCleanup(self.log.close)
        progress = Progress(self.shortDescription(), self.log_path).__enter__()
        self.addCleanup(progress.__exit__)

    def say(self, *lines):
        for line in lines:
            self.log.write(line.rstrip("\n") + "\n")

    def run_logged(self, *cmd, **kw):
        """Run cmd with its stdout and stderr appended to the log; its exit status."""
        self.log.flush()
        return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                              stderr=subprocess.STDOUT, **kw).returncode

    def capture(self, *cmd, **kw):
        """Run cmd, its output (stdout and stderr) copied to the log; (status, output)."""
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", **kw)
        self.say(p.stdout)
        return p.returncode, p.stdout

    def failed(self, msg):
        """Fail with msg and the log's last lines."""
        self.log.flush()
        tail = read(self.log_path).splitlines()[-15:]
        self.fail("\n".join([msg, "log: " + self.log_path] + tail))

    def expect(self, cond, msg):
        if not cond:
            self.failed(msg)

    def source(self, base="6.1"):
        src = linux_source(base)
        if not src:
            self.failed("extracting linux-source-%s failed: %s"
                        % (base, read(os.path.join(logs(), "source-%s.err" % base)).strip()))
        return src

    def base_is_installed(self, series, base="6.1"):
        """SERIES' cover letter names the installed linux-source-BASE as its base-commit."""
        self.source(base)
        have = base_commit(base)
        want = tagged(cover(series), "base-commit")
        msg = "%s series base %s, installed linux-source-%s %s" % (series, " ".join(want), base, have)
        self.say(msg)
        self.expect(want == [have], msg)

    def apply(self, tree, patch_files, base="6.1"):
        """PATCH_FILES applied with git am in TREE, a new worktree of linux-source-BASE."""
        src = self.source(base)
        self.expect(self.run_logged("git", "-C", src, "worktree", "add", "-q", "--detach",
                                    tree, "base") == 0, "git worktree add failed")
        self.expect(self.run_logged("git", "-C", tree, *GIT_ID, "am", "-q", *patch_files) == 0,
                    "git am failed")

    def kernel_doc_silent(self, tree, files):
        """kernel-doc has no warning on FILES of TREE; TREE's kernel-doc."""
        self.expect(is_worktree(tree), "the series did not apply")
        kernel_doc = os.path.join(tree, "scripts", "kernel-doc")
        for f in files:
            _, text = self.capture(kernel_doc, "-none", os.path.join(tree, f))
            self.expect(not text.strip(), "%s: %s" % (f, text))
        return kernel_doc

    def no_noinstr_writers(self, tree):
        """kernel/noinstr-writers finds no traced writer in TREE, the series applied."""
        self.expect(is_worktree(tree), "the series did not apply")
        rc, text = self.capture(NOINSTR_WRITERS, tree)
        self.expect(rc == 0 and not text.strip(), "exit %d with the series: %s" % (rc, text))

    def checkpatch(self, patch_files, tree):
        """Every checkpatch report on PATCH_FILES (TREE's checkpatch.pl) is
        named, by type, in its commit message, and none is an error."""
        self.expect(is_worktree(tree), "the series did not apply")
        bad = []
        for p in patch_files:
            _, text = self.capture("./scripts/checkpatch.pl", "--strict", "--show-types", "-q", p,
                                   cwd=tree)
            reports = [ln for ln in text.splitlines() if re.match(r"(ERROR|WARNING|CHECK):", ln)]
            message = read(p).split("\n---\n")[0]
            for t in sorted({m.group(1) for m in map(re.compile(r"[A-Z]*:([A-Z_0-9]*):").match,
                                                          reports) if m}):
                if t not in message:
                    bad.append("%s: %s is not explained in the commit message" % (os.path.basename(p), t))
                    bad += [ln for ln in reports if ":%s:" % t in ln]
            if any(ln.startswith("ERROR") for ln in reports):
                bad.append("%s: errors" % os.path.basename(p))
        self.say(*bad)
        self.expect(not bad, "\n".join(bad))

    def expect_fail(self, code, pattern, *cmd, env=None):
        """cmd exits with code and says pattern (a regex) in a line of its
        stderr; that stderr, for its "log: FILE"."""
        return harness.expect_fail(self, code, re.compile(pattern), list(cmd), log=self.log,
                                   env=None if env is None else dict(os.environ, **env))

    def one_line_fault(self, code, text, *cmd):
        """cmd exits with code and says text in one line, the only line on
        its stderr; that line."""
        return harness.one_line_fault(self, code, text, list(cmd), log=self.log)

    def log_named(self, err):
        """The text of the file that the last "log: FILE" at a line's end
        of err names, which must be there and not empty."""
        named = re.findall(r"log: (\S+)$", err, re.M)
        self.expect(named and os.path.isfile(named[-1]) and os.path.getsize(named[-1]) > 0,
                    "no kept log named: %s" % named)
        return read(named[-1])


# --- The series as text -------------------------------------------------------

class Text(Check):
    def cover_complete(self, series):
        text = cover(series)
        placeholders = re.findall(r"^.*\*\*\* (?:SUBJECT|BLURB) HERE \*\*\*.*$", text, re.M)
        self.expect(not placeholders, "placeholders left: %s" % placeholders)
        self.expect(re.search(r"^base-commit: [0-9a-f]{40}$", text, re.M), "no base-commit")

    def test_cover_seqcount(self):
        """seqcount series: the cover letter has a subject, a text and a base-commit"""
        self.cover_complete("seqcount")

    def test_cover_frlock(self):
        """frlock series: the cover letter has a subject, a text and a base-commit"""
        self.cover_complete("frlock")

    def test_cover_seqcount_612(self):
        """seqcount series on 6.12: the cover letter has a subject, a text and a base-commit"""
        self.cover_complete("seqcount-6.12")

    def test_signed_off(self):
        """every patch of both series, and of the 6.12 port, carries Signed-off-by"""
        unsigned = [p for p in SERIES + SEQCOUNT_612
                    if not re.search(r"^Signed-off-by: .* <.*@.*>$", read(p), re.M)]
        self.expect(not unsigned, "no Signed-off-by: %s" % unsigned)


# --- The series against the installed linux-source ----------------------------

def applied():
    """A scratch worktree of linux-source with both series applied, for
    the checks below; the checks that break a patch on purpose use it last."""
    return os.path.join(logs(), "applied")


def is_worktree(d):
    return os.path.exists(os.path.join(d, ".git"))


class Applied(Check):
    def test_base(self):
        """both series' base-commit is the installed linux-source"""
        for s in ("seqcount", "frlock"):
            self.base_is_installed(s)

    def test_apply(self):
        """both series apply with git am to the installed linux-source, seqcount first"""
        self.apply(applied(), SERIES)

    def test_prerequisites(self):
        """the frlock series names the seqcount series as its prerequisite (each posted patch's stable patch-id)"""
        # as b4 and the 0-day bot compute them: git patch-id --stable of each posted patch
        want = tagged(cover("frlock"), "prerequisite-patch-id")
        have = []
        for p in SEQCOUNT:
            with open(p, "rb") as f:
                out = subprocess.run(["git", "patch-id", "--stable"], stdin=f, capture_output=True)
            have.append(out.stdout.decode().split()[0] if out.returncode == 0 and out.stdout else None)
        msg = ("frlock cover letter: %d prerequisites; the seqcount series: %d patches"
               % (len(want), len(have)))
        self.say(msg)
        self.expect(len(want) == len(SEQCOUNT) and want == have,
                    "%s\ncover letter: %s\ngit patch-id --stable: %s" % (msg, want, have))

    def test_checkpatch(self):
        """checkpatch --strict: no errors, every report explained"""
        self.checkpatch(SERIES, applied())

    def test_noinstr_writers(self):
        """no noinstr or __cpuidle function calls a traced seqcount writer (kernel/noinstr-writers); 6.1 itself has s390's idle"""
        self.no_noinstr_writers(applied())
        # The scan can fail: 6.1 without the series has the writer that
        # patch 1 converts.
        rc, text = self.capture(NOINSTR_WRITERS, self.source())
        self.expect(rc == 1 and "arch/s390/kernel/idle.c" in text,
                    "6.1 without the series: exit %d, %r (s390's arch_cpu_idle() expected)" % (rc, text))

    def test_kernel_doc(self):
        """kernel-doc: the frlock API and the seqcount events documented without warnings"""
        kernel_doc = self.kernel_doc_silent(applied(), (
            "include/linux/frlock.h", "include/trace/events/frlock.h", "kernel/locking/frlock.c",
            "kernel/locking/frlock_kunit.c", "kernel/locking/frlock_bench.c",
            "include/trace/events/seqcount.h", "kernel/locking/seqcount_trace.c",
            "include/linux/seqlock.h"))
        # The public API must actually be documented, not merely warning-free.
        self.log.flush()
        rst = out(kernel_doc, "-rst", os.path.join(applied(), "include/linux/frlock.h"),
                  stderr=self.log) or ""
        documented = len(re.findall(r"^\.\. c:(?:function|macro)::", rst, re.M))
        self.say("%d functions and macros documented in include/linux/frlock.h" % documented)
        self.expect(documented >= 15, "only %d functions and macros documented" % documented)

    @classmethod
    def tearDownClass(cls):
        # The series plus a patch that breaks the build, made in the scratch
        # tree for the failed-build check below; then the tree goes.
        if not is_worktree(applied()):
            return
        with open(os.path.join(logs(), "broken-patch.log"), "w") as log:
            make_broken_patch(log)
        subprocess.run(["git", "-C", linux_source(), "worktree", "remove", "--force", applied()],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_broken_patch(log):
    c = os.path.join(applied(), "kernel", "locking", "frlock.c")
    with open(c) as f:
        lines = f.read().split("\n")
    with open(c, "w") as f:
        f.write("\n".join(ln + ("\n#error this patch breaks the build on purpose"
                                if ln == "#include <linux/frlock.h>" else "") for ln in lines))
    broken = os.path.join(logs(), "broken-series")
    os.makedirs(broken, exist_ok=True)
    run = functools.partial(subprocess.run, stdout=log, stderr=subprocess.STDOUT)
    if (run(["git", "-C", applied(), *GIT_ID, "commit", "-q", "-a",
             "-m", "broken: a patch that does not compile"]).returncode == 0 and
            run(["git", "-C", applied(), "format-patch", "-q", "-1", "--start-number", "99",
                 "-o", broken]).returncode == 0):
        for p in glob.glob(os.path.join(broken, "0099-*.patch")):
            os.rename(p, os.path.join(broken, "0099-broken.patch"))


def applied_612():
    """A scratch worktree of linux-source-6.12 with the seqcount series'
    port applied."""
    return os.path.join(logs(), "applied-6.12")


class Applied612(Check):
    """The seqcount series' 6.12 port against the installed
    linux-source-6.12: its base, git am, checkpatch and kernel-doc there."""

    def test_base(self):
        """seqcount series on 6.12: its base-commit is the installed linux-source-6.12"""
        self.base_is_installed("seqcount-6.12", "6.12")

    def test_apply(self):
        """seqcount series on 6.12: it applies with git am to the installed linux-source-6.12"""
        self.apply(applied_612(), SEQCOUNT_612, "6.12")

    def test_checkpatch(self):
        """seqcount series on 6.12: checkpatch --strict (6.12's): no errors, every report explained"""
        self.checkpatch(SEQCOUNT_612, applied_612())

    def test_noinstr_writers(self):
        """seqcount series on 6.12: no noinstr or __cpuidle function calls a traced seqcount writer"""
        self.no_noinstr_writers(applied_612())

    def test_kernel_doc(self):
        """seqcount series on 6.12: kernel-doc on the events and the header, without warnings"""
        self.kernel_doc_silent(applied_612(), ("include/trace/events/seqcount.h",
                                               "kernel/locking/seqcount_trace.c",
                                               "include/linux/seqlock.h"))

    @classmethod
    def tearDownClass(cls):
        if is_worktree(applied_612()):
            subprocess.run(["git", "-C", linux_source("6.12"), "worktree", "remove", "--force",
                            applied_612()], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# --- Builds -------------------------------------------------------------------

class Build(Check):
    """kernel/build with these arguments builds (or has cached) its kernel.

    The kernels the checks below boot or read: the seqcount series alone
    (6.1's timekeeping: the layout check's reference) and both whole. They
    share one object directory and the compiler cache, so the second is
    incremental on the first, and each is cached by its inputs. make
    test-long builds every prefix too, the arm64 kernel, and the other
    configurations on both bases (kernel/coverage --base 6.1 and --base
    6.12, which tests/run relays)."""

    def __init__(self, desc, *cmd):
        super().__init__("test_build")
        self.desc, self.cmd = desc, cmd

    def shortDescription(self):
        return self.desc

    def test_build(self):
        self.expect(self.run_logged(*self.cmd) == 0, "%s failed" % " ".join(self.cmd))


def builds():
    yield Build("kernel builds with the seqcount series", BUILD, "--series", "seqcount")
    yield Build("kernel builds with both series whole", BUILD, "--series", "frlock")
    yield Build("kernel builds with the seqcount series on 6.12 (kernel/build --base 6.12)",
                BUILD, "--base", "6.12", "--series", "seqcount")
    if not LONG:
        return
    for n in range(1, len(SEQCOUNT_612)):
        yield Build("kernel builds with the 6.12 seqcount series' patches 1-%d" % n,
                    BUILD, "--base", "6.12", "--series", "seqcount", "--patches", str(n))
    # Every patch must build on its own: every other prefix, in order.
    for n in range(1, len(SEQCOUNT)):
        yield Build("kernel builds with the seqcount series' patches 1-%d" % n,
                    BUILD, "--series", "seqcount", "--patches", str(n))
    for n in range(1, len(FRLOCK)):
        yield Build("kernel builds with the seqcount series and the frlock series' patches 1-%d" % n,
                    BUILD, "--series", "frlock", "--patches", str(n))
    # The series on a weakly ordered architecture: the arm64 kernel that
    # guest_jobs.arm64 boots.
    yield Build("arm64: the series cross-builds (kernel/build --arch arm64, gcc-aarch64-linux-gnu)",
                BUILD, "--arch", "arm64", "--quiet")


class Config(Check):
    def test_config(self):
        """frlock kernel config has KUnit, BTF, hist triggers and BPF"""
        kernel = out(BUILD, "--series", "frlock", "--quiet", stderr=subprocess.DEVNULL)
        self.expect(kernel, "no frlock kernel")
        have = set(read(os.path.join(kernel, "config")).splitlines())
        for c in ("CONFIG_FRLOCK_KUNIT_TEST=m", "CONFIG_FRLOCK_BENCH=m", "CONFIG_DEBUG_INFO_BTF=y",
                  "CONFIG_HIST_TRIGGERS=y", "CONFIG_BPF_SYSCALL=y", "CONFIG_KUNIT=y"):
            self.expect(c in have, "missing %s" % c)


# --- tk_core's layout ---------------------------------------------------------

class Layout(Check):
    def test_layout(self):
        """layout: tk_core's reader cache lines no more than stock, writer lock out of them"""
        # tk_core's layout on the frlock kernel against the seqcount series
        # alone, whose timekeeping is 6.1's (tk_core.seq a
        # seqcount_raw_spinlock_t: the series traces it and leaves its layout
        # as it is): make test builds both kernels anyway.
        layouts = {}
        for name, series in (("stock", "seqcount"), ("frlock", "frlock")):
            kernel = cached_kernel(series)
            self.expect(kernel, "no %s kernel" % ("seqcount series" if series == "seqcount" else series))
            path = os.path.join(logs(), "layout." + name)
            self.log.flush()
            with open(path, "w") as f:
                rc = subprocess.run([os.path.join(TOP, "host", "tk-layout"), kernel], stdout=f,
                                    stderr=self.log).returncode
            self.expect(rc == 0, "host/tk-layout %s failed" % kernel)
            text = read(path)
            self.say({"stock": "stock timekeeping (the seqcount series alone):",
                      "frlock": "frlock:"}[name], text)
            layouts[name] = {ln.split()[0]: ln for ln in text.splitlines()}
            layouts[name]["spinlocks"] = [ln for ln in text.splitlines() if ln.startswith("spinlock")]
        stock, frlock = layouts["stock"], layouts["frlock"]
        ls, lf = (int(x["reader_lines"].split()[1]) for x in (stock, frlock))
        self.say("cache lines a ktime_get_real_ts64() reader touches: stock %d, frlock %d" % (ls, lf))
        self.expect(lf <= ls, "the reader touches more cache lines than on stock (%d, %d)" % (lf, ls))
        self.expect(not frlock["spinlocks"], "a spinlock lies inside tk_core: %s" % frlock["spinlocks"])
        self.expect(frlock.get("writer_lock_shares") == "writer_lock_shares 0",
                    "timekeeper_lock shares a cache line with tk_core's readers")
        # The same offsets as stock, as the issue asks: 6.1's layout kept.
        for member in ("tkr_mono", "xtime_sec"):
            self.expect(stock[member] == frlock[member], "stock %r, frlock %r"
                        % (stock[member], frlock[member]))


# --- Objects compiled for the checks, cached by their inputs -------------------

def cached_objects(kind, inputs, code, make, log):
    """The directory cache/checks/KIND-KEY, KEY hashed from inputs (the
    tree, the patches, the config, the compiler) and the source of code
    (the functions and classes that make it); make(dir) fills it. Made
    only when no complete one is there, so that a warm make test compares
    again without compiling. None if make failed."""
    h = hashlib.sha256()
    for part in inputs + [inspect.getsource(c) for c in code]:
        h.update(part.encode() + b"\0")
    d = os.path.join(cache_dir(), "checks", "%s-%s" % (kind, h.hexdigest()[:16]))
    if os.path.isfile(os.path.join(d, ".complete")):
        log("made earlier from the same inputs: %s" % d)
        return d
    shutil.rmtree(d + ".tmp", ignore_errors=True)
    os.makedirs(d + ".tmp")
    if not make(d + ".tmp"):
        return None
    open(os.path.join(d + ".tmp", ".complete"), "w").close()
    shutil.rmtree(d, ignore_errors=True)
    os.rename(d + ".tmp", d)
    return d


class Tree:
    """A worktree of linux-source at base with an object directory, under
    the logs (checks-tree, checks-obj), shared by the fast path's objects
    and sparse's reports: made once (git worktree add and make prepare
    cost 30-90 s cold), reset to base and configured anew for each user,
    and removed when the series checks end (tearDownModule), whatever
    happens, so that it never disturbs kernel/build's."""
    shared = None

    def __init__(self):
        self.src = linux_source()
        self.tree = os.path.join(logs(), "checks-tree")
        self.obj = os.path.join(logs(), "checks-obj")
        self.prepare_log = os.path.join(logs(), "checks-prepare.log")

    def remove(self):
        subprocess.run(["git", "-C", self.src, "worktree", "remove", "--force", self.tree],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.tree, ignore_errors=True)
        shutil.rmtree(self.obj, ignore_errors=True)

    @classmethod
    def configured(cls, kernel, log):
        """The shared tree at base, configured and prepared as kernel is;
        None if that failed (said through log)."""
        t = cls.shared
        git = functools.partial(subprocess.run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        if t is None:
            t = cls.shared = Tree()
            t.remove()
            p = git(["git", "-C", t.src, "worktree", "add", "-q", "--detach", t.tree, "base"])
        else:
            git(["git", "-C", t.tree, "am", "--abort"])
            p = git(["git", "-C", t.tree, "checkout", "-q", "-f", "--detach", "base"])
            if p.returncode == 0:
                p = git(["git", "-C", t.tree, "clean", "-q", "-f", "-d"])
        if p.returncode != 0:
            log("the checks' worktree: git failed: " + p.stdout)
            return None
        os.makedirs(t.obj, exist_ok=True)
        shutil.copy(os.path.join(kernel, "config"), os.path.join(t.obj, ".config"))
        if not (t.make("olddefconfig", log=t.prepare_log, mode="a") and
                t.make("-j%d" % JOBS, "prepare", log=t.prepare_log, mode="a")):
            log("preparing the tree failed; log: %s" % t.prepare_log)
            return None
        return t

    def make(self, *targets, log, mode="w"):
        with open(log, mode) as f:
            return subprocess.run(["make", "-C", self.tree, "O=" + self.obj, *targets],
                                  stdin=subprocess.DEVNULL, stdout=f,
                                  stderr=subprocess.STDOUT).returncode == 0

    def am(self, *patch_files):
        return subprocess.run(["git", "-C", self.tree, *GIT_ID, "am", "-q", *patch_files],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def tearDownModule():
    if Tree.shared:
        Tree.shared.remove()


# --- The read fast path -------------------------------------------------------
#
# The seqcount events add no instruction to a read that neither waits nor
# retries. The functions inline read_seqbegin()/read_seqretry() (d_lookup,
# on rename_lock) and read_seqcount_begin()/read_seqcount_retry() (the
# stock timekeeping readers, on tk_core.seq). Objects are compiled here,
# configured as the seqcount kernel is: the parent (the base tree), a
# reference, and the seqcount events' patch. With registers masked:
# allocation may differ.
#
# The reference is the parent with nothing but an empty asm statement on
# the failed-retry edge of do___read_seqcount_retry(), where the patch
# calls the event: GCC 12 hoists a zeroing xor of the timespec conversion
# in the two timespec readers (Fastpath.test_reference names them) as soon
# as that edge holds anything, so no retry hook avoids it; the others must
# match the parent itself.

RETRY = "\treturn unlikely(READ_ONCE(s->sequence) != start);"
EMPTY_HOOK = ("\tif (likely(READ_ONCE(s->sequence) == start))\n\t\treturn 0;\n"
              "\tasm volatile(\"\");\n\treturn 1;")
KTIME_READERS = ("ktime_get", "ktime_get_with_offset", "ktime_get_raw", "ktime_get_coarse_real_ts64")


def fastpath_objects_make(out_dir, kernel, log):
    """timekeeping.o and dcache.o of the parent, the reference and the
    patch, into out_dir/{parent,reference,patched}."""
    t = Tree.configured(kernel, log)
    compile_log = os.path.join(logs(), "fastpath-compile.log")
    if os.path.exists(compile_log):
        os.remove(compile_log)

    def compile_into(name):
        if not t.make("-j%d" % JOBS, "kernel/time/timekeeping.o", "fs/dcache.o",
                      log=compile_log, mode="a"):
            log("compiling failed; log: %s" % compile_log)
            return False
        os.makedirs(os.path.join(out_dir, name))
        for o in ("kernel/time/timekeeping.o", "fs/dcache.o"):
            shutil.copy(os.path.join(t.obj, o), os.path.join(out_dir, name))
        return True

    if not (t and compile_into("parent")):
        return False
    h = os.path.join(t.tree, "include", "linux", "seqlock.h")
    text = read(h)
    if text.split("\n").count(RETRY) != 1:
        log("the parent's do___read_seqcount_retry() is not the one this check edits")
        return False
    with open(h, "w") as f:
        f.write(text.replace(RETRY, EMPTY_HOOK))
    if not compile_into("reference"):
        return False
    subprocess.run(["git", "-C", t.tree, "checkout", "-q", "--", "include/linux/seqlock.h"],
                   check=True)
    if not t.am(SEQCOUNT[0]):
        log("the seqcount events' patch does not apply")
        return False
    # The patch changes the config (ARCH_HAS_SEQCOUNT_TRACE_THUNK).
    return t.make("olddefconfig", log=t.prepare_log, mode="a") and compile_into("patched")


@functools.cache
def fastpath_objects():
    """(the objects' directory or None, what was said making it)."""
    said = []
    if not linux_source():
        return None, ["no linux-source tree"]
    where = out(os.path.join(TOP, "kernel", "patch-number"), "*-locking-seqlock-Add-tracepoints-*")
    if not where:
        return None, ["no seqcount tracepoint patch"]
    if where != "seqcount 1":
        return None, ["the seqcount events are patch %s of the %s series, not the first"
                      % tuple(reversed(where.split()))]
    kernel = cached_kernel("seqcount")
    if not kernel:
        return None, ["no kernel with the seqcount series"]
    inputs = [base_commit(), diffs(SEQCOUNT[:1]), read(os.path.join(kernel, "config")),
              gcc_version()]
    d = cached_objects("fastpath", inputs, (fastpath_objects_make, Tree),
                       lambda d: fastpath_objects_make(d, kernel, said.append), said.append)
    return d, said


class Fastpath(Check):
    def objects(self):
        d, said = fastpath_objects()
        self.say(*said)
        self.expect(d, "no objects: %s" % "; ".join(said))
        return d

    def fastpath(self, base, new, obj, *functions):
        """tests/fastpath.py on the objects: its exit status and output."""
        d = self.objects()
        return self.capture(FASTPATH, os.path.join(d, base, obj), os.path.join(d, new, obj), *functions)

    def test_compile(self):
        """seqcount events: the parent, a reference and the patch compile (timekeeping.o, dcache.o)"""
        self.objects()

    def test_none_added(self):
        """seqcount events: a read that neither waits nor retries runs no added instruction (d_lookup, ktime_get, ktime_get_with_offset, ktime_get_raw, ktime_get_coarse_real_ts64 against the parent; tests/fastpath.py)"""
        rc, text = self.fastpath("parent", "patched", "timekeeping.o", *KTIME_READERS)
        self.expect(rc == 0, "an added instruction in timekeeping.o:\n" + text)
        rc, text = self.fastpath("parent", "patched", "dcache.o", "d_lookup")
        self.expect(rc == 0, "an added instruction in d_lookup:\n" + text)

    def test_sees_added(self):
        """tests/fastpath.py fails when the path gains a branch (parent and patch swapped)"""
        # The old d_lookup has a branch more on that path (a jump into its
        # wait loop): the comparison the other way round must fail, on it.
        rc, text = self.fastpath("patched", "parent", "dcache.o", "d_lookup")
        self.expect(rc == 1 and re.search(r"^FAIL d_lookup:", text, re.M),
                    "exit %d, no FAIL d_lookup" % rc)

    def test_reference(self):
        """seqcount events: ktime_get_real_ts64 and ktime_get_ts64 gain only the xor an empty retry hook gives them, and every reader matches that reference"""
        self.say("the parent against the patch: the xor must show")
        for f in ("ktime_get_real_ts64", "ktime_get_ts64"):
            rc, text = self.fastpath("parent", "patched", "timekeeping.o", f)
            self.expect(rc == 1 and re.search(r"^FAIL %s:" % f, text, re.M),
                        "%s: exit %d, no FAIL against the parent" % (f, rc))
        self.say("the reference against the patch: nothing added")
        rc, text = self.fastpath("reference", "patched", "timekeeping.o", *KTIME_READERS,
                                 "ktime_get_real_ts64", "ktime_get_ts64")
        self.expect(rc == 0, "an added instruction against the reference:\n" + text)
        rc, text = self.fastpath("reference", "patched", "dcache.o", "d_lookup")
        self.expect(rc == 0, "an added instruction in d_lookup against the reference:\n" + text)


# --- sparse -------------------------------------------------------------------
#
# sparse (make C=2) on the C files the series touches, on the tree without
# and with the series: the series must add no warning. Configured as the
# frlock kernel is.

def sparse_objects(kernel):
    """The objects the series' C files build into, those this config
    builds (KVM, for one, is not in the guest): kernel/build's object
    directories have them."""
    objs = sorted({m + ".o" for m in re.findall(r"^diff --git a/(.*)\.c b/",
                                                "".join(read(p) for p in SERIES), re.M)})
    built = glob.glob(os.path.join(os.path.dirname(os.path.dirname(kernel)), "obj", "guest-*"))
    return [o for o in objs if any(os.path.isfile(os.path.join(d, o)) for d in built)]


def sparse_run(t, objs, out, log):
    """sparse's reports on those of objs whose C file the tree has, one
    per line, as "file: message" (line and column dropped, so that lines
    the series moves do not count as new), sorted, into out."""
    objs = [o for o in objs if os.path.isfile(os.path.join(t.tree, o[:-2] + ".c"))]
    raw = []
    if objs:
        if not t.make("C=2", "-j%d" % JOBS, *objs, log=out + ".log"):
            log("make C=2 failed on %s; log: %s.log" % (" ".join(objs), out))
            log("\n".join(read(out + ".log").splitlines()[-5:]))
            return False
        raw = [ln for ln in read(out + ".log").splitlines()
               if re.match(r"[^ ]+:[0-9]+:[0-9]+: (warning|error):", ln)]
    with open(out + ".raw", "w") as f:
        f.writelines(ln + "\n" for ln in raw)
    reports = sorted(re.sub(r"^([^:]+):[0-9]+:[0-9]+: ", r"\1: ", ln.removeprefix(t.tree + "/"))
                     for ln in raw)
    with open(out, "w") as f:
        f.writelines(ln + "\n" for ln in reports)
    return True


def sparse_reports_make(out_dir, kernel, log):
    """sparse.stock and sparse.frlock into out_dir."""
    objs = sparse_objects(kernel)
    log("objects: " + " ".join(objs))
    t = Tree.configured(kernel, log)
    if not (t and sparse_run(t, objs, os.path.join(out_dir, "sparse.stock"), log)):
        return False
    if not t.am(*SERIES):
        log("the series does not apply")
        return False
    return sparse_run(t, objs, os.path.join(out_dir, "sparse.frlock"), log)


class Sparse(Check):
    def test_sparse(self):
        """sparse: the series' C files gain no sparse warning (make C=2)"""
        self.source()
        self.expect(shutil.which("sparse"), "sparse is missing: run 'make deps'")
        kernel = cached_kernel("frlock")
        self.expect(kernel, "no frlock kernel")
        inputs = [base_commit(), diffs(SERIES), read(os.path.join(kernel, "config")),
                  gcc_version(), out("sparse", "--version") or ""]
        d = cached_objects("sparse", inputs,
                           (sparse_reports_make, sparse_objects, sparse_run, Tree),
                           lambda d: sparse_reports_make(d, kernel, self.say), self.say)
        self.expect(d, "no sparse reports")
        stock, frlock = (read(os.path.join(d, f)).splitlines()
                         for f in ("sparse.stock", "sparse.frlock"))
        self.say("sparse reports: %d without the series, %d with it" % (len(stock), len(frlock)))
        new = list((collections.Counter(frlock) - collections.Counter(stock)).elements())
        self.expect(not new, "new sparse reports:\n" + "\n".join(new))


# --- Bad input to kernel/build, and its faults --------------------------------

STALE_PATCH = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: test <test@localhost>
Subject: [PATCH] stale: a patch whose context is gone

---
 init/main.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/init/main.c b/init/main.c
--- a/init/main.c
+++ b/init/main.c
@@ -1,3 +1,3 @@
-this line is not in init/main.c
+nor is this one
 context
 context
"""


def patch_dir(d, extra):
    """A FRLOCK_PATCH_DIR at d: both series, and the frlock series'
    patches extra after them."""
    for series, files in (("seqcount", SEQCOUNT), ("frlock", FRLOCK + extra)):
        os.makedirs(os.path.join(d, series), exist_ok=True)
        for p in files:
            shutil.copy(p, os.path.join(d, series))
    return d


def path_without(tool, *dirs):
    """A directory of links to every program in dirs but tool, for PATH."""
    d = os.path.join(logs(), "no" + tool)
    os.makedirs(d, exist_ok=True)
    for src in dirs:
        for name in os.listdir(src):
            if name != tool:
                link = os.path.join(d, name)
                if os.path.lexists(link):
                    os.remove(link)
                os.symlink(os.path.join(src, name), link)
    return d


class BadInput(Check):
    """Each refused, exit 1 (2 for usage), saying why on stderr; nothing
    built but the broken series, which must fail."""

    def test_arm64_no_cross_compiler(self):
        """kernel/build --arch arm64: a missing cross compiler is one line with the fix"""
        self.expect_fail(1, re.escape("is missing: run 'make deps'"),
                         BUILD, "--arch", "arm64",
                         env={"CROSS_COMPILE": "/nonexistent/aarch64-"})

    def test_unknown_option(self):
        """kernel/build: unknown option is one line with the usage, exit 2"""
        harness.usage_fault(self, "kernel/build: error: unrecognized arguments: --bogus",
                            [BUILD, "--bogus"], log=self.log)

    def test_unknown_variant(self):
        """kernel/build: unknown variant is one line with the usage, exit 2"""
        harness.usage_fault(self, "argument --variant: invalid choice: 'nope'", [BUILD, "--variant", "nope"],
                            log=self.log)

    def test_unknown_series(self):
        """kernel/build: unknown series is one line with the usage, exit 2"""
        harness.usage_fault(self, "argument --series: invalid choice: 'nope'", [BUILD, "--series", "nope"],
                            log=self.log)

    def test_prefix_past_end(self):
        """kernel/build: a prefix past the series' end is one line, exit 2"""
        self.one_line_fault(2, "the seqcount series has only %d patches" % len(SEQCOUNT),
                            BUILD, "--series", "seqcount", "--patches", "99")

    def test_unknown_config(self):
        """kernel/build: unknown config is one line with the usage, exit 2"""
        harness.usage_fault(self, "argument --config: invalid choice: 'nope'", [BUILD, "--config", "nope"],
                            log=self.log)

    def test_unknown_arch(self):
        """kernel/build: unknown architecture is one line with the usage, exit 2"""
        harness.usage_fault(self, "argument --arch: invalid choice: 'mips'", [BUILD, "--arch", "mips"],
                            log=self.log)

    def test_i386_alone(self):
        """kernel/build --arch i386: with --series, --base or --llvm is one line, exit 2"""
        self.one_line_fault(2, "--arch i386 builds both series on 6.1 with kernel/guest.config, "
                            "kernel/frlock.config, kernel/i386.config, kernel/i386-guest.config only",
                            BUILD, "--arch", "i386", "--series", "seqcount")
        self.one_line_fault(2, "--arch i386 builds both series on 6.1", BUILD, "--arch", "i386",
                            "--base", "6.12")
        self.one_line_fault(2, "--llvm goes with --arch arm64", BUILD, "--arch", "i386", "--llvm")

    def test_coverage_unknown(self):
        """kernel/coverage: an unknown configuration is one line, exit 2"""
        self.one_line_fault(2, "unknown configuration 'nope'", os.path.join(TOP, "kernel", "coverage"),
                            "nope")

    def test_coverage_unknown_base(self):
        """kernel/coverage: an unknown base is one line naming the known ones, exit 2"""
        self.one_line_fault(2, "unknown base '6.13' (want: 6.1, 6.12)",
                            os.path.join(TOP, "kernel", "coverage"), "--base", "6.13")

    def test_coverage_state_not_on_base(self):
        """kernel/coverage: the frlock state on 6.12 (no frlock series there) is one line, exit 2"""
        self.one_line_fault(2, "unknown state 'frlock' on 6.12",
                            os.path.join(TOP, "kernel", "coverage"), "--base", "6.12", "--states", "frlock")

    def test_coverage_config_not_on_base(self):
        """kernel/coverage: s390 on 6.12 (a 6.1-only configuration) is one line, exit 2"""
        self.one_line_fault(2, "configuration 's390' builds on 6.1 only, not 6.12",
                            os.path.join(TOP, "kernel", "coverage"), "--base", "6.12", "s390")

    def test_wrong_source(self):
        """kernel/build: wrong linux-source version is refused"""
        d = os.path.join(logs(), "wrong-source")
        os.makedirs(os.path.join(d, "linux-source-5.10"), exist_ok=True)
        with open(os.path.join(d, "linux-source-5.10", "Makefile"), "w") as f:
            f.write("VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 1\n")
        tarball = os.path.join(d, "linux-source-5.10.tar.xz")
        with tarfile.open(tarball, "w:xz") as tar:
            tar.add(os.path.join(d, "linux-source-5.10"), arcname="linux-source-5.10")
        self.expect_fail(1, re.escape("holds Linux '5.10.1', the series needs 6.1"), BUILD,
                         env={"LINUX_SOURCE_TARBALL": tarball})

    def test_missing_source(self):
        """kernel/build: missing linux-source is reported"""
        self.expect_fail(1, re.escape("apt-get install linux-source-6.1"), BUILD,
                         env={"LINUX_SOURCE_TARBALL": "/nonexistent.tar.xz"})

    def test_missing_tool(self):
        """kernel/build: a missing package is named, with the fix"""
        self.expect_fail(1, re.escape("'pahole' is missing: run 'make deps'"), BUILD,
                         env={"PATH": path_without("pahole", "/usr/bin")})

    def test_missing_depmod(self):
        """kernel/build: no depmod (Debian's kmod) is refused before building"""
        self.expect_fail(1, re.escape("'depmod' is missing: run 'make deps'"), BUILD,
                         env={"PATH": path_without("depmod", "/usr/bin", "/usr/sbin")})

    def test_bad_patch(self):
        """kernel/build: a patch that no longer applies is named, log kept"""
        d = patch_dir(os.path.join(logs(), "bad-series"), [])
        with open(os.path.join(d, "frlock", "0099-stale.patch"), "w") as f:
            f.write(STALE_PATCH)
        err = self.expect_fail(1, re.escape("does not apply to linux-source"), BUILD,
                               env={"FRLOCK_PATCH_DIR": d})
        self.log_named(err)

    def test_failed_build(self):
        """kernel/build: a failed build quotes the error, log kept"""
        # The series plus a patch that breaks the build, made in the
        # scratch tree (Applied.tearDownClass).
        broken = os.path.join(logs(), "broken-series", "0099-broken.patch")
        self.expect(os.path.isfile(broken) and os.path.getsize(broken) > 0, "no broken patch")
        d = patch_dir(os.path.join(logs(), "broken-series"), [broken])
        os.remove(broken)
        err = self.expect_fail(1, "build failed: .*breaks the build on purpose", BUILD, "--quiet",
                               env={"FRLOCK_PATCH_DIR": d})
        self.expect("on purpose" in self.log_named(err), "the kept log does not quote the error")


def load_tests(loader, standard_tests, pattern):
    """The checks in the order they build on each other: the scratch tree
    of the applied series before the failed build it makes, the kernels
    before the checks that read them."""
    suite = unittest.TestSuite()
    for cls in (Text, Applied, Applied612):
        suite.addTests(cls(name) for name in cls.__dict__ if name.startswith("test_"))
    suite.addTests(builds())
    for cls in (Config, Layout, Fastpath, Sparse, BadInput):
        suite.addTests(cls(name) for name in cls.__dict__ if name.startswith("test_"))
    return suite
