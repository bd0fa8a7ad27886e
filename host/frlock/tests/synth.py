# SPDX-License-Identifier: GPL-2.0
"""Synthetic feeds for the unit tests: records shaped as frlockstat v4's
-j -c (bpf/frlockstat.c: print_json, print_sites_json) and gtod-load -j
write them, with counts chosen by the test. FIXTURE is a feed recorded by
make fixtures on the frlock kernel, for the tests that read a real one."""

import json
import os

from frlock import TOP

FIXTURE = os.path.join(TOP, "dashboards", "fixtures", "frlock-run.ndjson")


def fixture_lines():
    with open(FIXTURE, "rb") as f:
        return [line.rstrip(b"\n") for line in f]


def hist(*buckets):
    """hist((1024, 5), (4096, 2)): log2 buckets from their lower bounds,
    as print_json_hist writes them (empty buckets left out)."""
    return [{"min": lo, "max": max(lo, 2 * lo - 1), "count": n} for lo, n in buckets if n]


def _pct(h):
    """frlockstat's "_pct" of a histogram: its buckets' upper bounds."""
    total = sum(b["count"] for b in h)
    if not total:
        return None
    out = {}
    for name, pct in (("p50", 50), ("p99", 99), ("max", 100)):
        rank, seen = -(-total * pct // 100), 0
        for b in h:
            seen += b["count"]
            if seen >= rank:
                out[name] = b["max"]
                break
    return out


def stat(lock, kind, ts, writes, retries=0, waits=0, dt=1.0, hold=None, wait_ns=None,
         retry_lb_ns=None, wait_ns_sum=0, hold_ns_sum=None, v=2, **extra):
    """A frlockstat record as frlockstat v4 writes it: every lock kind has
    waits and joined retries. A retry's loss (retry_lb_ns) defaults to one
    8K bucket per retry, a lower bound; a wait's to none."""
    hold = hold if hold is not None else hist((1024, writes))
    wait_ns = wait_ns if wait_ns is not None else hist((0, waits))
    retry_lb_ns = retry_lb_ns if retry_lb_ns is not None else hist((8192, retries))
    lb_sum = sum(b["min"] * b["count"] for b in retry_lb_ns)
    r = {"type": "frlockstat", "v": v, "time": "00:00:%02d" % (ts % 60), "ts": ts,
         "interval_s": 1, "dt": dt, "lock": lock, "kind": kind, "naming": "symbol",
         "class": False, "addr": "0xffffffff82000000", "writes": writes, "retries": retries,
         "waits": waits, "waits_joined": waits, "wait_ns_sum": wait_ns_sum,
         "retries_joined": retries, "retry_lost_lb_ns": lb_sum,
         "hold_ns_sum": hold_ns_sum if hold_ns_sum is not None else
         sum(b["min"] * b["count"] for b in hold),
         "lost": {"ns": wait_ns_sum + lb_sum, "bound": retries > 0},
         "top_writer": "w_" + lock.replace(".", "_"), "top_reader": "-",
         "total": {"writes": writes, "retries": retries, "waits": waits,
                   "waits_joined": waits, "retries_joined": retries}}
    for name, h in (("hold_ns", hold), ("wait_ns", wait_ns), ("retry_lb_ns", retry_lb_ns)):
        r[name] = h
        r[name + "_pct"] = _pct(h)
    r.update(extra)
    if v is None:
        del r["v"]
    return r


def caller(lock, kind, site, n, frm="?", ns=0, lock_kind="frlock"):
    """A frlockstat_caller record: kind "write", "retry", "wait", "caused"
    or "causedwait"; frm is frlockstat's "from" ("?" when not known)."""
    return {"type": "frlockstat_caller", "v": 2, "lock": lock, "lock_kind": lock_kind,
            "kind": kind, "caller": site, "count": n, "total_ns": ns, "count_total": n,
            "total_ns_total": ns, "from": frm}


def load(ts, total, dt=1.0, writes=200.0, via="syscall", t=None):
    return {"type": "load", "v": 2, "t": t if t is not None else ts, "dt": dt, "ts": ts,
            "via": via, "calls": [total / 2, total / 2], "total": total, "writes": writes}


def summary(reads, secs, via="syscall", writes=200.0, write_rate=200):
    return {"type": "load_summary", "v": 2, "via": via, "threads": 2, "duration_s": secs,
            "cpus": [0, 1], "calls": [reads / secs / 2] * 2, "total": reads / secs,
            "call_count": [reads // 2, reads - reads // 2], "total_count": reads,
            "writer": "adjtimex", "write_rate": write_rate, "writes": writes,
            "write_count": int(writes * secs), "write_errors": 0, "restored": True,
            "interrupted": False}


def lines(records):
    return [json.dumps(r).encode() for r in records]
