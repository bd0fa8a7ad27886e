# SPDX-License-Identifier: GPL-2.0
"""The project's tests (make test): the series and its build on the host,
then the frlock kernel booted in the QEMU guest. One line per check, "ok -
...", "not ok - ..." or "skip - ...", and a last line "N passed, N failed,
N skipped"; exit status 1 if any check failed.

usage: tests/run [--host-only | --guest-only | --long SECONDS]
  --long S  everything, plus the checker kernels built if missing, the
            arm64 kernel's KUnit run and a torture run of S seconds
            (make test-long)

The parts run in order, each a module of this package: the unittest
modules are run by frlock.tests and relayed; the guest jobs share one
protocol.Run, since each job's judges read what it left."""

import os
import signal
import subprocess
import sys
import time

from frlock import TOP
from frlock.tests import guest_jobs
from frlock.tests.protocol import Run, kernel as build

USAGE = "usage: tests/run [--host-only | --guest-only | --long SECONDS]"


def usage(msg=None):
    if msg:
        print("tests/run: " + msg, file=sys.stderr)
    print(USAGE, file=sys.stderr)
    sys.exit(2)


def parse(argv):
    host, guest, long_s = True, True, None
    if len(argv) > 2 or (len(argv) == 2 and argv[0] != "--long"):
        usage()
    if argv[:1] == ["--host-only"]:
        guest = False
    elif argv[:1] == ["--guest-only"]:
        host = False
    elif argv[:1] == ["--long"]:
        s = argv[1] if len(argv) == 2 else ""
        if not (s.isdigit() and s[0] != "0" and len(s) <= 5):
            usage("--long wants the torture length in seconds (1-99999), not '%s'" % s)
        long_s = int(s)
    elif argv:
        usage()
    return host, guest, long_s


def unit(run, *modules, env=None):
    """frlock.tests' unittest modules (all test_*.py without a name),
    relayed as one part: a crash or an empty run is a not ok."""
    run.part("python3 -m frlock.tests " + (" ".join(modules) or "(every test_*.py)"),
             ["/usr/bin/python3", "-B", "-m", "frlock.tests"] + list(modules),
             cwd=os.path.join(TOP, "host"), env=dict(os.environ, **(env or {})))


def scripts_parse(log):
    """Every shell script parses: a syntax error in a part skips that
    part's checks without a word. The guest's scripts are parsed by
    busybox's sh, which runs them."""
    files = subprocess.run(["git", "-C", TOP, "ls-files"], stdout=subprocess.PIPE,
                           text=True, check=True).stdout.split("\n")
    bad = 0
    for f in filter(None, files):
        path = os.path.join(TOP, f)
        try:
            with open(path, "rb") as fh:
                first = fh.readline().decode(errors="replace")
        except OSError:
            continue
        if f.startswith(("tests/guest/", "guest-rootfs/")):
            if not (f.endswith(".sh") or first.startswith("#!/bin/sh")):
                continue
            argv = ["busybox", "sh", "-n", path]
        elif f.endswith(".sh") or (first.startswith("#!") and "bash" in first):
            argv = ["bash", "-n", path]
        else:
            continue
        p = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT)
        if p.returncode:
            log.write("%s: does not parse\n" % f)
            bad += 1
    return bad == 0


def main(argv):
    host, guest, long_s = parse(argv)
    # The fault checks interrupt builds and runs with SIGINT on purpose; a
    # SIGINT ignored when we started (nohup, a background job) would stay
    # ignored in every child.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    cache = os.environ.get("FRLOCK_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "frlock")
    logs = os.path.join(cache, "logs", "test-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(logs, exist_ok=True)
    run = Run(logs)
    print("# logs: " + logs, flush=True)
    run.check("every shell script parses (bash -n; busybox sh -n for the guest's)", scripts_parse)
    if host:
        # The series against the installed linux-source, its builds, the
        # tk_core layout, the fast path, sparse, kernel/build's usage.
        # make test-long: every prefix, the arm64 cross build, and
        # kernel/coverage's configurations (clang, i386, MODVERSIONS, arm64
        # without PRINTK, defconfig, UML through kunit.py).
        unit(run, "series", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_TEST_LONG": str(long_s or "")})
        if long_s:
            # Each failed build is its own not ok line; an exit without
            # one (a crash) must not pass for success.
            run.part("kernel/coverage", [os.path.join(TOP, "kernel", "coverage")])
        # The host's Python package: the feed, the view, the runner, the
        # dashboards in headless Chromium.
        unit(run, env={"FRLOCK_TEST_LOGS": os.path.join(logs, "python")})
        # The Prometheus rules, alerts and console, scraped on loopback;
        # faults of the harness, and bad input to its host tools.
        unit(run, "prometheus", "faults", env={"FRLOCK_TEST_LOGS": logs})
    if guest:
        kernel = build("--variant", "frlock")
        if not kernel:
            run.not_ok("the frlock kernel builds (make kernel)")
        else:
            guest_jobs.frlock_guests(run, kernel)
            guest_jobs.scrape(run, kernel)
            # The teaching labs, quick, judged from their results, their
            # reports in Chromium; the runner with a real guest, its faults
            # and Ctrl-C in make run.
            unit(run, "guest_labs", env={"FRLOCK_TEST_LOGS": logs})
            unit(run, "guest_runner", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_KERNEL": kernel})
            guest_jobs.checkers(run, kernel, long_s)
            # make bench's recorded smoke run rendered (make test-long: a
            # smoke run), bad input to bench/run and bench/report.
            unit(run, "bench", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_TEST_LONG": str(long_s or "")})
            if long_s:
                guest_jobs.arm64(run)
    print("# logs: " + logs, flush=True)
    print("%d passed, %d failed, %d skipped" % (run.counts["ok"], run.counts["not ok"], run.counts["skip"]),
          flush=True)
    return 1 if run.counts["not ok"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
