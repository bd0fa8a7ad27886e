# SPDX-License-Identifier: GPL-2.0
"""make fixtures: record dashboards/fixtures/frlock-run.ndjson from a run
of the current kernel and tools, and say what a fixture must hold.

The run: the frlock kernel in the QEMU guest, frlock-watch with a
gettimeofday load (2 threads, 500 adjtimex writes/s) and a rename storm
(--renames), DURATION seconds, frlockstat -j -c 1. A fixture must hold
both kinds of lock, waits, call sites, a lost event and the load's lines:
problems() says what one lacks, and a recording that lacks any is not
kept (exit 1).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

from . import TOP, view
from .server import DASH

FIXTURE = os.path.join(DASH, "fixtures", "frlock-run.ndjson")

PROG = "host/record-fixtures"


def problems(path):
    """What the feed at path lacks of what a fixture must hold: []."""
    v = view.View()
    with open(path, "rb") as f:
        for raw in f:
            v.add_line(raw.rstrip(b"\n"))
    v.end()
    kinds = {lk.kind for lk in v.locks.values()}
    out = []
    if kinds != {"frlock", "seqcount"}:
        out.append("locks of both kinds (has %s)" % (sorted(kinds) or "none"))
    if not any(lk.sums["waits"] for lk in v.locks.values()):
        out.append("a seqcount reader that waited")
    if not v.with_callers:
        out.append("call sites (frlockstat -c)")
    if not (v.missed and v.missed["missed"]) and not (v.drops and v.drops["drops"]):
        out.append("a lost event (missed or dropped)")
    if len(v.loads) < 3 or v.summary is None:
        out.append("gtod-load's lines and summary")
    if v.detail_lock()[0] not in view.GTOD_LOCKS:
        out.append("the lock gettimeofday reads")
    if sum(v.skipped().values()):
        out.append("no skipped line (%s)" % v.skipped_line())
    if not v.ended:
        out.append("its end")
    return out


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=int, default=12, help="seconds of load (default 12)")
    p.add_argument("--out", default=FIXTURE, help="the fixture (default %(default)s)")
    a = p.parse_args(argv)
    if not 3 <= a.duration <= 120:
        p.error("--duration wants 3 to 120 seconds")
    kernel = subprocess.run([os.path.join(TOP, "kernel/build"), "--variant", "frlock"],
                            stdout=subprocess.PIPE, text=True)
    if kernel.returncode:
        print(PROG + ": kernel/build failed", file=sys.stderr)
        return 1
    kernel = kernel.stdout.strip()
    if subprocess.run(["make", "-s", "-C", os.path.join(TOP, "bpf"), "KERNEL=" + kernel],
                      stdout=subprocess.DEVNULL).returncode:
        print(PROG + ": building frlockstat (make -C bpf) failed", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="frlock-fixture.") as d:
        feed = os.path.join(d, "feed.ndjson")
        open(feed, "w").close()
        cmd = [os.path.join(TOP, "host/run-guest"), "--kernel", kernel, "--timeout",
               str(a.duration + 300), "--port", "feed=" + feed, "--retry-livelock",
               "--exec", "/opt/frlock/guest-rootfs/frlock-watch -d %d -t 2 -w 500 -i 1 "
               "--renames" % a.duration]
        rc = subprocess.run(cmd).returncode
        if rc:
            print(PROG + ": the guest job failed (exit %d)" % rc, file=sys.stderr)
            return 1
        lack = problems(feed)
        if lack:
            keep = os.path.join(tempfile.gettempdir(), "frlock-fixture-rejected.ndjson")
            shutil.copy(feed, keep)
            print(PROG + ": the run's feed lacks %s; not kept (it is in %s): run "
                  "it again" % ("; ".join(lack), keep), file=sys.stderr)
            return 1
        shutil.copy(feed, a.out)
    print(PROG + ": %s recorded (%d lines)" % (os.path.relpath(a.out, TOP),
                                               sum(1 for _ in open(a.out))))
    return 0
