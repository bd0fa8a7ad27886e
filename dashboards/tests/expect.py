#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check what a dashboard page showed against the NDJSON it was fed.

usage: expect.py FEED RESULT.json [--malformed N] [--mode live|report]

RESULT.json is browser.py's output. The expected numbers are computed
here from FEED, independently of the page's JavaScript: per-type record
counts, the busiest lock's totals, every histogram bucket (whole run and
last interval), the rate lines, and the heatmap's cells. Prints one line
per mismatch; exit status 1 if there is any.
"""

import argparse
import json
import sys

HISTS = ("hold_ns", "retries_per_read", "lost_ns")


def load_feed(path):
    recs = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                r = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue
            if isinstance(r, dict):
                recs.append(r)
    return recs


def expected(recs):
    counts = {"frlockstat": 0, "frlockstat_caller": 0, "load": 0, "load_summary": 0,
              "feed_end": 0}
    ignored = 0
    for r in recs:
        if r.get("type") in counts:
            counts[r["type"]] += 1
        else:
            ignored += 1
    stats = [r for r in recs if r.get("type") == "frlockstat"]
    writes = {}
    for r in stats:
        writes[r["lock"]] = writes.get(r["lock"], 0) + r["writes"]
    lock = max(writes, key=lambda k: writes[k]) if writes else None
    mine = [r for r in stats if r["lock"] == lock]
    e = {"counts": dict(counts, records=len(recs), ignored=ignored), "lock": lock,
         "intervals": len(mine),
         "totals": {k: sum(r[k] for r in mine) for k in ("writes", "retried_reads", "retries")},
         "hist": {}, "last": {}}
    for k in HISTS:
        run = {}
        for r in mine:
            for b in r.get(k, []):
                run[b["min"]] = run.get(b["min"], 0) + b["count"]
        e["hist"][k] = run
        e["last"][k] = {b["min"]: b["count"] for b in mine[-1].get(k, [])} if mine else {}
    loads = [r for r in recs if r.get("type") == "load"]
    e["reads"] = [r["total"] for r in loads]
    e["adjtimex"] = [r.get("writes", 0) for r in loads]
    e["writes"] = [r["writes"] / r.get("dt", r["interval_s"]) for r in mine]
    e["retried"] = [r["retried_reads"] / r.get("dt", r["interval_s"]) for r in mine]
    cells = [b["count"] for r in mine for b in r["hold_ns"] if b["count"]]
    e["heat"] = {"cols": len(mine), "cells": len(cells), "sum": sum(cells),
                 "max": max(cells) if cells else 0}
    return e


def compare(e, s, malformed, mode):
    bad = []

    def eq(what, want, got):
        if want != got:
            bad.append("%s: want %r, page shows %r" % (what, want, got))

    eq("mode", mode, s.get("mode"))
    eq("ended", True, s.get("ended"))
    eq("malformed lines", malformed, s.get("malformed"))
    for k, v in e["counts"].items():
        eq("records of type %s" % k, v, s["counts"].get(k))
    eq("lock", e["lock"], s.get("lock"))
    eq("intervals", e["intervals"], s.get("intervals"))
    for k, v in e["totals"].items():
        eq("total %s" % k, v, s["totals"].get(k))
    for k in HISTS:
        h = s["hist"][k]
        shown = {m: c for m, c in zip(h["mins"], h["run"]) if c}
        eq("%s histogram, whole run" % k, e["hist"][k], shown)
        shown = {m: c for m, c in zip(h["mins"], h["last"]) if c}
        eq("%s histogram, last interval" % k, e["last"][k], shown)
        if h["mins"] and h["mins"] != sorted(h["mins"]):
            bad.append("%s buckets out of order: %r" % (k, h["mins"]))
        if len(h["labels"]) != len(h["mins"]):
            bad.append("%s: %d labels for %d buckets" % (k, len(h["labels"]), len(h["mins"])))
    for k in ("reads", "adjtimex", "writes", "retried"):
        pts = s["rates"][k]
        eq("%s line" % k, [round(v, 6) for v in e[k]], [round(p[1], 6) for p in pts])
        xs = [p[0] for p in pts]
        if xs != sorted(xs) or (xs and xs[0] < 0):
            bad.append("%s line: x not increasing from >= 0: %r" % (k, xs))
    h = s.get("heat") or {}
    for k, v in e["heat"].items():
        eq("heatmap %s" % k, v, h.get(k))
    eq("heatmap cells drawn", e["heat"]["cells"], h.get("drawn"))
    return bad


def main():
    p = argparse.ArgumentParser()
    p.add_argument("feed")
    p.add_argument("result")
    p.add_argument("--malformed", type=int, default=0)
    p.add_argument("--mode", default="live")
    a = p.parse_args()
    res = json.load(open(a.result))
    s = res.get("summary")
    if not s:
        print("no summary in %s" % a.result)
        return 1
    bad = compare(expected(load_feed(a.feed)), s, a.malformed, a.mode)
    canv = {c[0]: c for c in res.get("canvases", [])}
    for cid in ("heatmap", "rates", "hold", "rpr", "lost"):
        if cid not in canv or canv[cid][1] < 200 or canv[cid][2] < 100:
            bad.append("canvas #%s missing or too small: %r" % (cid, canv.get(cid)))
    for b in bad:
        print(b)
    if not bad:
        e = expected(load_feed(a.feed))
        print("page matches %s: %d intervals of %s, %d write sections, %d retries, "
              "%d heatmap cells, %d load lines, %d malformed"
              % (a.feed, e["intervals"], e["lock"], e["totals"]["writes"],
                 e["totals"]["retries"], e["heat"]["cells"], len(e["reads"]), a.malformed))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
