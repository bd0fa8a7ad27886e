#!/usr/bin/python3
"""Is every record frlockstat -j writes documented, field by field?

usage: feed_schema.py README FEED.ndjson

FEED is a feed frlockstat recorded (tests/fixtures/frlockstat-v2.ndjson:
frlockstat v4's -j -c on series v4, schema v2, gtod-load beside a rename
storm). Every line must be a
JSON object of schema version 2; every record type, every field, and every
key of "total", must be named in README's table of records (bpf/README.md,
"JSON"); a histogram must be a list of {"min","max","count"} with its
"_pct". One "ok - ..." or "not ok - ..." line per check; exit 1 if any
failed.
"""
import json
import re
import sys


def documented(readme):
    """{record type: set of the names in its rows' field column}."""
    docs, rtype = {}, None
    in_table = False
    for line in open(readme):
        if line.startswith("| record | field | meaning |"):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            if docs:
                break
            continue
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cols) < 3 or re.fullmatch(r"-+", cols[1]):
            continue
        m = re.match(r"`([a-z_]+)`", cols[0])
        if m:
            rtype = m.group(1)
        elif cols[0] == "every record":
            rtype = "*"
        if rtype:
            docs.setdefault(rtype, set()).update(re.findall(r"`([a-z_0-9]+)`", cols[1]))
            docs.setdefault(rtype + ".total", set()).update(
                re.findall(r"`([a-z_0-9]+)`", cols[2]) if cols[1] == "`total`" else [])
    return docs


def main(argv):
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 2
    docs = documented(argv[1])
    failed = 0

    def report(ok, what):
        nonlocal failed
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} - {what}")

    recs, bad = [], []
    for n, line in enumerate(open(argv[2]), 1):
        try:
            rec = json.loads(line)
        except ValueError:
            bad.append(n)
            continue
        if not isinstance(rec, dict) or rec.get("v") != 2 or not isinstance(rec.get("type"), str):
            bad.append(n)
            continue
        recs.append(rec)
    report(recs and not bad, f"feed: {len(recs)} records, each a JSON object of schema version 2"
           + (f" (not: lines {bad[:5]})" if bad else ""))
    types = sorted({r["type"] for r in recs})
    report(set(types) <= set(docs), f"feed: record types {types} are in the README's table"
           + (f" (missing: {sorted(set(types) - set(docs))})" if not set(types) <= set(docs) else ""))
    for t in types:
        have = set().union(*(r.keys() for r in recs if r["type"] == t))
        hists = {k for r in recs if r["type"] == t for k, v in r.items()
                 if isinstance(v, list)}
        # "hold_ns_pct, ... (one per histogram)": each histogram's _pct.
        known = docs.get(t, set()) | docs.get("*", set()) | {h + "_pct" for h in hists}
        missing = sorted(have - known)
        report(not missing, f"feed: every field of {t} records ({len(have)}) is documented"
               + (f" (missing: {missing})" if missing else ""))
        totals = set().union(*(r["total"].keys() for r in recs
                               if r["type"] == t and isinstance(r.get("total"), dict)))
        if totals:
            missing = sorted(totals - docs.get(t + ".total", set()))
            report(not missing, f"feed: every running total of {t} records is documented"
                   + (f" (missing: {missing})" if missing else ""))
        shape = all(isinstance(b, dict) and set(b) == {"min", "max", "count"} and
                    b["min"] <= b["max"] and b["count"] > 0 and r.get(h + "_pct") is not None
                    for r in recs if r["type"] == t for h in hists for b in r.get(h, []))
        if hists:
            report(shape, f"feed: {t}'s histograms {sorted(hists)} are filled buckets with their percentiles")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
