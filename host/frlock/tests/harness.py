# SPDX-License-Identifier: GPL-2.0
"""Helpers of the tests that run the project's tools as processes: where
their files go, a fault that must end in one line, a command run in a
process group of its own (as a terminal runs a job, to be interrupted as
Ctrl-C does), and waiting for a condition."""

import contextlib
import io
import os
import re
import signal
import subprocess
import tempfile
import time

# run-guest's notes of the accelerator it chose: not a fault's line.
ACCEL_NOTE = re.compile(r"run-guest: (accel=|probing KVM)")


def logs(name):
    """$FRLOCK_TEST_LOGS/NAME (tests/run's logs), or a new folder in /tmp."""
    d = os.path.join(os.environ.get("FRLOCK_TEST_LOGS") or tempfile.mkdtemp(prefix="frlock-tests."),
                     name)
    os.makedirs(d, exist_ok=True)
    return d


def found(want, text):
    """WANT (a str: as it is; a compiled regex: searched) in TEXT."""
    return bool(want.search(text)) if isinstance(want, re.Pattern) else want in text


def _run(cmd, env, cwd, log, timeout=None):
    p = subprocess.run(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace", timeout=timeout)
    if log:
        log.write(p.stdout + p.stderr)
    return p


def one_line_fault(test, code, want, cmd, env=None, cwd=None, log=None):
    """CMD must exit with CODE and say WANT on stderr in one line: the only
    line there but for run-guest's note of its accelerator (stdout and
    stderr copied to LOG, if given). The line."""
    p = _run(cmd, env, cwd, log)
    lines = [ln for ln in p.stderr.splitlines() if ln and not ACCEL_NOTE.match(ln)]
    test.assertEqual(p.returncode, code, "exit %d, wanted %d; stderr:\n%s"
                     % (p.returncode, code, p.stderr))
    test.assertEqual(len(lines), 1, "%d lines on stderr, wanted one:\n%s"
                     % (len(lines), p.stderr))
    test.assertTrue(found(want, lines[0]), "not %r: %s" % (want, lines[0]))
    return lines[0]


def usage_fault(test, want, cmd, env=None, cwd=None, log=None):
    """CMD is refused as argparse refuses bad usage: exit 2, nothing on
    stdout, and on stderr the usage and one line that says WANT. The
    line."""
    p = _run(cmd, env, cwd, log)
    err = p.stderr.splitlines()
    said = [ln for ln in err if ln and not ln.startswith(("usage:", " "))]
    test.assertEqual(p.returncode, 2, "exit %d, wanted 2; stderr:\n%s" % (p.returncode, p.stderr))
    test.assertEqual(p.stdout, "", "usage error with output on stdout")
    test.assertTrue(err and err[0].startswith("usage: "), "no usage on stderr:\n%s" % p.stderr)
    test.assertEqual(len(said), 1, "%d lines on stderr but the usage, wanted one:\n%s"
                     % (len(said), p.stderr))
    test.assertTrue(found(want, said[0]), "not %r: %s" % (want, said[0]))
    return said[0]


def expect_fail(test, code, want, cmd, env=None, cwd=None, log=None, timeout=None):
    """CMD exits with CODE and says WANT in a line of its stderr (stdout
    and stderr copied to LOG, if given). Its stderr."""
    p = _run(cmd, env, cwd, log, timeout)
    test.assertEqual(p.returncode, code, "exit %d, wanted %d; stderr:\n%s"
                     % (p.returncode, code, p.stderr))
    test.assertTrue(any(found(want, ln) for ln in p.stderr.splitlines()),
                    "not %r on stderr:\n%s" % (want, p.stderr))
    return p.stderr


def log_kept(test, line, text):
    """The log that a fault's LINE names ("log: FILE") was kept and holds TEXT."""
    named = re.findall(r"log: ([^ ;)]*)", line)
    test.assertTrue(named and named[-1], "no log named: " + line)
    f = named[-1]
    test.assertTrue(os.path.isfile(f) and os.path.getsize(f) > 0, "log %s is gone or empty" % f)
    with open(f, errors="replace") as log:
        test.assertIn(text, log.read(), "log " + f)


def start_group(cmd, **popen):
    """CMD started in a process group (and session) of its own, whose id is
    its pid, with SIGINT at its default, so that os.killpg(pid, SIGINT)
    interrupts the whole job as Ctrl-C in a terminal does."""
    # A signal ignored at exec stays ignored (under nohup, or in a shell's
    # background job); one Python handles is reset to its default.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return subprocess.Popen(cmd, start_new_session=True, stdin=subprocess.DEVNULL, **popen)


def group_left(pgid):
    """The processes of group PGID still alive (not zombies), as ps lines."""
    ps = subprocess.run(["ps", "-eo", "pgid=,pid=,stat=,args="], stdout=subprocess.PIPE,
                        text=True).stdout.splitlines()
    return [ln for ln in ps if ln.split()[0] == str(pgid) and not ln.split()[2].startswith("Z")]


def wait_for(seconds, cond):
    """Call COND every 0.1 s until it is true; False if it never was."""
    deadline = time.monotonic() + seconds
    while not cond():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


def run_judge(main, files, args=(), missing=False):
    """A judge's main() on a results directory holding FILES ({name:
    text}), or on a directory that does not exist (MISSING): (its exit
    status, what it printed on stdout; stderr is dropped)."""
    with tempfile.TemporaryDirectory() as d:
        for name, text in files.items():
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            rc = main([os.path.join(d, "none") if missing else d] + list(args))
    return rc, out.getvalue()
