# SPDX-License-Identifier: GPL-2.0
"""The test protocol on the host, for the parts of make test that run in
order and hand each other their results (a guest job, then the judges of
what it left): one line per check, "ok - DESC", "not ok - DESC" or
"skip - DESC", "# ..." diagnostics; tests/run counts them and ends with
"N passed, N failed, N skipped". The guest's scripts print the same lines
through tests/guest/lib.sh.

Every command a check runs has its output in a log under the run's logs
folder; a long step prints a "# DESC: N s so far" line every 30 s, so that
a kernel build or a guest under TCG is never silent."""

import collections
import os
import re
import subprocess
import threading
import time

from frlock import TOP

PROTOCOL = re.compile(r"^(ok|not ok|skip) - (.*)$")


def print_check(verdict, desc):
    """The one printer of a check's line, "ok - DESC", "not ok - DESC" or
    "skip - DESC", for tests/run, frlock.tests and the judges."""
    print("%s - %s" % (verdict, desc), flush=True)


def print_diag(text, indent="# "):
    """Diagnostic lines: text's lines, each after indent."""
    for line in str(text).rstrip("\n").splitlines():
        print(indent + line, flush=True)


class Run:
    def __init__(self, logs):
        self.logs = logs
        self.prefix = ""
        self.counts = {"ok": 0, "not ok": 0, "skip": 0}

    def line(self, verdict, desc):
        self.counts[verdict] += 1
        print_check(verdict, self.prefix + desc)
        return verdict == "ok"

    def ok(self, desc):
        return self.line("ok", desc)

    def not_ok(self, desc):
        return self.line("not ok", desc)

    def skip(self, desc):
        return self.line("skip", desc)

    diag = staticmethod(print_diag)

    def relay(self, lines):
        """Another program's protocol lines, as our own checks; anything
        else as a diagnostic."""
        for line in lines:
            line = line.rstrip("\n")
            m = PROTOCOL.match(line)
            if m:
                self.line(m.group(1), m.group(2))
            else:
                print("# " + line, flush=True)

    def part(self, name, argv, **kw):
        """Run argv, a part of make test that prints its own checks,
        relaying its output line by line as it comes; its exit status. A
        part that exits non-zero without a failed check of its own (a
        crash, an exit at import), dies by a signal, or runs no check at
        all is one more not ok, naming the part and showing its last
        lines: as kunit.py counts "no tests ran" as a failure."""
        before = dict(self.counts)
        tail = collections.deque(maxlen=15)
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, text=True, errors="replace", **kw)
        for line in p.stdout:
            tail.append(line)
            self.relay([line])
        rc = p.wait()
        failed = self.counts["not ok"] > before["not ok"]
        why = None
        if rc < 0:
            why = "killed by signal %d" % -rc
        elif rc and not failed:
            why = "exited %d without a failed check" % rc
        elif self.counts == before:
            why = "ran no check (exit %d)" % rc
        if why:
            self.not_ok("%s: %s; its last lines:" % (name, why))
            self.diag("".join(tail) or "(no output)", "#   ")
        return rc

    def log_path(self, desc):
        return os.path.join(self.logs, re.sub(r"[^A-Za-z0-9_.-]", "_", desc)[:80] + ".log")

    def check(self, desc, what, **kw):
        """ok if what succeeds: an argv (exit 0) or a callable given the
        open log (a true result). Its output is in the check's log, whose
        last lines a failure shows."""
        path = self.log_path(desc)
        t0 = time.monotonic()
        with open(path, "w") as log, Progress(desc, path):
            try:
                if callable(what):
                    good = bool(what(log))
                else:
                    good = subprocess.run(what, stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, **kw).returncode == 0
            except Exception as e:  # a check that cannot run has failed
                log.write("%s: %s\n" % (type(e).__name__, e))
                good = False
        took = time.monotonic() - t0
        desc += " [%d s]" % took if took >= 2 else ""
        if good:
            return self.ok(desc)
        self.not_ok("%s (log: %s)" % (desc, path))
        with open(path, errors="replace") as f:
            self.diag("".join(f.readlines()[-15:]), "#   ")
        return False

    def guest_job(self, name, desc, args):
        """Boot a guest (host/run-guest with args, --exec among them), relay
        the lines its job printed, then ok if it exited 0. Its output is in
        guest-NAME.out and .err, its console in guest-NAME.console.

        --retry-livelock: a guest caught in QEMU's multi-threaded TCG
        livelock (a stale translation of kernel text patched while a tracer
        attached) is not the guest's fault: the job runs once more, and
        run-guest says so on stderr."""
        base = os.path.join(self.logs, "guest-" + name)
        t0 = time.monotonic()
        with open(base + ".out", "w") as out, open(base + ".err", "w") as err, \
                Progress("guest " + name, base + ".console"):
            rc = subprocess.run([os.path.join(TOP, "host", "run-guest"), "--retry-livelock",
                                 "--log", base + ".console"] + list(args),
                                stdout=out, stderr=err, stdin=subprocess.DEVNULL).returncode
        with open(base + ".err", errors="replace") as f:
            err_lines = f.read().splitlines()
        for line in err_lines:
            if "running the job again" in line:
                print("# guest %s: %s" % (name, line), flush=True)
        with open(base + ".out", errors="replace") as f:
            self.relay(f)
        took = " [%d s]" % (time.monotonic() - t0)
        if rc == 0:
            self.ok(desc + took)
        else:
            self.not_ok("%s: exit %d%s (log: %s.err)" % (desc, rc, took, base))
            self.diag("\n".join(err_lines[-5:]), "#   ")
        return rc

    def console_of(self, name):
        """The console log that run-guest named for guest job NAME."""
        named = None
        with open(os.path.join(self.logs, "guest-%s.err" % name), errors="replace") as f:
            for line in f:
                m = re.search(r"console log: (\S+)", line)
                if m:
                    named = m.group(1)
        return named


class Progress:
    """Every 30 s, "# DESC: N s so far; " and the log's last line."""

    def __init__(self, desc, log, every=30):
        self.desc, self.log, self.every = desc, log, every
        self.done = threading.Event()

    def __enter__(self):
        self.t0 = time.monotonic()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _run(self):
        while not self.done.wait(self.every):
            last = ""
            try:
                with open(self.log, "rb") as f:
                    f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
                    tail = f.read().decode(errors="replace").replace("\r", "").splitlines()
                    last = tail[-1][:100] if tail else ""
            except OSError:
                pass
            print("# %s: %d s so far; %s" % (self.desc, time.monotonic() - self.t0, last),
                  flush=True)


def kernel(*args, cached_only=False, err=None):
    """kernel/build's kernel folder for args (built if missing, unless
    cached_only), None if it has none; its stderr to err."""
    argv = [os.path.join(TOP, "kernel", "build")] + list(args) + ["--quiet"]
    if cached_only:
        argv.append("--cached-only")
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=err or subprocess.DEVNULL,
                       stdin=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None

