# SPDX-License-Identifier: GPL-2.0
"""The project's tests (make test): the series and its build on the host,
then the frlock kernel booted in the QEMU guest. One line per check, "ok -
...", "not ok - ..." or "skip - ...", and a last line "N passed, N failed,
N skipped"; exit status 1 if any check failed.

usage: tests/run [--host-only | --guest-only | --long SECONDS]
  --long S  everything, plus the checker kernels built if missing, the
            arm64 and i386 kernels' KUnit runs (i386: frlockstat too) and a
            torture run of S seconds
            (make test-long)

The parts run in order, each a module of this package: the unittest
modules are run by frlock.tests and relayed; the guest jobs share one
protocol.Run, since each job's judges read what it left."""

import argparse
import os
import signal
import subprocess
import sys
import time

from frlock import TOP
from frlock.runner import cache_dir
from frlock.tests import guest_exact, guest_jobs
from frlock.tests.protocol import Run, kernel as build

def parse(argv):
    p = argparse.ArgumentParser(
        prog="tests/run", description=__doc__.split("\n\n")[0],
        epilog="exit status: 0 when every check passed, 1 when one failed, 2 for a "
        "usage error.")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--host-only", action="store_true", help="the host part only")
    which.add_argument("--guest-only", action="store_true", help="the guest part only")
    which.add_argument("--long", type=int, metavar="SECONDS",
                       help="everything, plus the checker kernels built if missing, the "
                       "arm64 and i386 kernels' KUnit runs (i386: frlockstat too) and a torture "
                       "run of SECONDS (make test-long)")
    a = p.parse_args(argv)
    if a.long is not None and not 1 <= a.long <= 99999:
        p.error("--long wants the torture length in seconds (1-99999), not '%d'" % a.long)
    return not a.guest_only, not a.host_only, a.long


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
    logs = os.path.join(cache_dir(), "logs", "test-" + time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(logs, exist_ok=True)
    run = Run(logs)
    print("# logs: " + logs, flush=True)
    run.check("every shell script parses (bash -n; busybox sh -n for the guest's)", scripts_parse)
    if host:
        # The series against the installed linux-source, its builds, the
        # tk_core layout, the fast path, sparse, kernel/build's usage.
        # make test-long: every prefix, the arm64 cross build, and
        # kernel/coverage's configurations (clang, i386, MODVERSIONS, arm64
        # without PRINTK, defconfig, noinstr validation, s390 on 6.1 only,
        # UML through kunit.py) on both bases: 6.1 with both series, 6.12
        # with its seqcount series.
        unit(run, "series", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_TEST_LONG": str(long_s or "")})
        if long_s:
            # Each failed build is its own not ok line; an exit without
            # one (a crash) must not pass for success.
            for base in ("6.1", "6.12"):
                run.part("kernel/coverage --base " + base,
                         [os.path.join(TOP, "kernel", "coverage"), "--base", base])
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
            # frlockstat and the other tools, which every guest below runs
            # from the share (a clean clone has none built).
            guest_jobs.bpf_tools(run, kernel)
            # The cost goals counted in guest instructions (run-guest
            # --icount): make run's set, the seqcount events compiled in.
            # First: it builds the stock kernel, which frlock_guests'
            # refusal check boots.
            guest_exact.exact(run, kernel)
            guest_jobs.frlock_guests(run, kernel)
            guest_jobs.scrape(run, kernel)
            # The teaching labs, quick, judged from their results, their
            # reports in Chromium; the runner with a real guest, its faults
            # and Ctrl-C in make run.
            unit(run, "guest_labs", env={"FRLOCK_TEST_LOGS": logs})
            unit(run, "guest_runner", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_KERNEL": kernel})
            # Real workloads through frlock-run (docs/workloads.md's rows
            # marked make test; make test-long: every row).
            unit(run, "guest_workloads", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_KERNEL": kernel,
                                              "FRLOCK_TEST_LONG": str(long_s or "")})
            guest_jobs.checkers(run, kernel, long_s)
            # make bench's recorded smoke run rendered (make test-long: a
            # smoke run), bad input to bench/run and bench/report.
            unit(run, "bench", env={"FRLOCK_TEST_LOGS": logs, "FRLOCK_TEST_LONG": str(long_s or "")})
            if long_s:
                guest_jobs.preempt_rt(run)
                guest_jobs.arm64(run)
                # The series' second architecture, as in 2003: i386 booted,
                # its KUnit suites, frlockstat built for i386 on tk_core.
                guest_jobs.i386(run)
    print("# logs: " + logs, flush=True)
    print("%d passed, %d failed, %d skipped" % (run.counts["ok"], run.counts["not ok"], run.counts["skip"]),
          flush=True)
    return 1 if run.counts["not ok"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
