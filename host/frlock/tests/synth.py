# SPDX-License-Identifier: GPL-2.0
"""Synthetic feeds for the unit tests: records shaped as frlockstat -j -c
and gtod-load -j write them, with counts chosen by the test."""

import json


def hist(*buckets):
    """hist((1024, 5), (4096, 2)): log2 buckets from their lower bounds."""
    return [{"min": lo, "max": max(lo, 2 * lo - 1), "count": n} for lo, n in buckets]


def stat(lock, kind, ts, writes, retries=0, retried=0, waits=None, dt=1.0, hold=None,
         lost_hist=None, rpr=None, v=2, **extra):
    """A frlockstat record as series v3's frlockstat -j writes it: waits
    for a seqcount only (or when given), retried reads and their
    histograms for a frlock only."""
    r = {"type": "frlockstat", "v": v, "time": "00:00:%02d" % (ts % 60), "ts": ts,
         "interval_s": 1, "dt": dt, "lock": lock, "kind": kind, "name": lock,
         "writes": writes, "retries": retries,
         "top_writer": "w_" + lock.replace(".", "_"), "top_reader": "-",
         "hold_ns": hold if hold is not None else hist((1024, writes))}
    if kind == "frlock":
        r["retried_reads"] = retried
        r["retries_per_read"] = rpr if rpr is not None else (hist((1, retried)) if retried else [])
        r["lost_ns"] = (lost_hist if lost_hist is not None else
                        (hist((8192, retried)) if retried else []))
    if waits is not None or kind == "seqcount":
        r["waits"] = waits or 0
    if v is None:
        del r["v"]
    r.update(extra)
    return r


def caller(lock, kind, site, n, frm=None, ns=0, lock_kind="frlock"):
    r = {"type": "frlockstat_caller", "v": 2, "lock": lock, "lock_kind": lock_kind,
         "kind": kind, "caller": site, "count": n, "total_ns": ns, "count_total": n}
    if frm is not None:
        r["from"] = frm
    return r


def load(ts, total, dt=1.0, writes=200.0, via="syscall", t=None):
    return {"type": "load", "v": 2, "t": t if t is not None else ts, "dt": dt, "ts": ts,
            "via": via, "calls": [total / 2, total / 2], "total": total, "writes": writes}


def summary(reads, secs, via="syscall"):
    return {"type": "load_summary", "v": 2, "via": via, "threads": 2, "total_count": reads,
            "duration_s": secs, "writes": 200.0, "write_rate": 200}


def lines(records):
    return [json.dumps(r).encode() for r in records]
