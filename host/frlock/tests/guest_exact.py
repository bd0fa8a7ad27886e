# SPDX-License-Identifier: GPL-2.0
"""make test's exact cost check: the cost goals counted in guest
instructions under run-guest --icount (QEMU's -icount shift=0,sleep=off,
1 vCPU), each figure from two boots that must agree within its tolerance
(host/frlock/benchreport.py computes and judges every figure, as for
make bench EXACT=1):

- make run's set (frlockstat -j -c 1) takes at most 1% of the
  instructions of a gettimeofday(2) load at make run's 200 adjtimex
  writes a second (gtod-load -t 1: one thread on the one vCPU; make run's
  2 threads would share it), 2 guest seconds with and without it;
- the seqcount events compiled in (and off: the seqcount series, whose
  other patches add tests, a refscale type and a verifier check, none on
  these paths) change gettimeofday(2)'s and a stat() path lookup's
  instructions per call by at most 0.05% against the stock tree.

Six boots: the frlock, seqcount and stock kernels, twice each. The
stock kernel is built if missing (a full build from cold). Run by
tests/run's guest part (frlock.tests.runner) with its protocol.Run."""

import os
import time

from frlock import benchreport
from frlock.tests.protocol import kernel as build

GUEST = "/opt/frlock/bench/guest.sh"
BOOTS = 2
# The goals this check holds the tree to (benchreport.exact_goals' ids).
GOALS = ("makerun", "events-gtod", "events-paths")


def exact(run, frlock):
    logs = os.path.join(run.logs, "exact")
    os.makedirs(logs, exist_ok=True)
    err = os.path.join(logs, "build.err")
    with open(err, "w") as f:
        stock = build("--variant", "stock", err=f)
        events = build("--variant", "seqcount", err=f)
    if not stock or not events:
        run.not_ok("exact cost check: the stock and seqcount kernels build (log: %s)" % err)
        return
    boots = (("exact-tracing", frlock, "%s exact-tracing 2 200 makerun" % GUEST),
             ("exact-calls-events", events, "%s exact-calls events 1" % GUEST),
             ("exact-calls-stock", stock, "%s exact-calls stock 1" % GUEST))
    raw_path = os.path.join(logs, "raw.txt")
    t0 = time.monotonic()
    with open(raw_path, "w") as raw:
        for boot in range(1, BOOTS + 1):
            for name, kernel, cmd in boots:
                job = "%s-%d" % (name, boot)
                # The results share is where benchreport looks for
                # frlockstat's records: beside raw.txt, exact-tracing-N/.
                res = os.path.join(logs, job)
                if run.guest_job(job, "exact: guest %s ran (run-guest --icount)" % job,
                                 ["--icount", "--kernel", kernel, "--results", res,
                                  "--timeout", "600", "--exec", cmd]):
                    return
                with open(os.path.join(run.logs, "guest-%s.out" % job), errors="replace") as f:
                    raw.writelines("%s boot=%d\n" % (ln.rstrip("\n"), boot) for ln in f
                                   if ln.startswith("bench "))
    took = time.monotonic() - t0
    rows, _ = benchreport.parse(raw_path)
    ex = benchreport.exact(rows, raw_path)
    goals = {g["id"]: g for g in benchreport.exact_goals(ex)}
    run.diag("exact cost check: %d boots in %d s of wall time; raw lines: %s"
             % (BOOTS * len(boots), took, raw_path))
    for gid in GOALS:
        g = goals.get(gid)
        if g is None:
            run.not_ok("exact: the figures of goal '%s' were measured (raw lines: %s)"
                       % (gid, raw_path))
        elif g.get("unresolved"):
            run.not_ok("exact: %s (%s)" % (g["goal"], g["why"]))
        elif g["met"]:
            run.ok("exact: " + g["goal"])
        else:
            run.not_ok("exact: %s (%s)" % (g["goal"], g["why"] or "over the bound"))
    # Both boots' values of every figure the goals rest on.
    with open(os.path.join(logs, "report.txt"), "w") as f:
        benchreport.print_exact(ex, p=lambda *a: print(*a, file=f))
    run.diag("the figures, each boot's value: %s" % os.path.join(logs, "report.txt"))
