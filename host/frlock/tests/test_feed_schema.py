# SPDX-License-Identifier: GPL-2.0
"""Is every record frlockstat -j writes documented, field by field? The
feed frlockstat recorded (tests/fixtures/frlockstat-v2.ndjson, series v4:
gtod-load beside a rename storm, -j -c), read through feed.classify, the
one reader of the feed: every line must be a record of the current schema;
every record type, every field, and every key of "total", must be named in
bpf/README.md's table of records ("JSON"); a histogram must be a list of
{"min","max","count"} with its "_pct"."""

import os
import re
import unittest

from frlock import TOP, feed

README = os.path.join(TOP, "bpf", "README.md")
FIXTURE = os.path.join(TOP, "tests", "fixtures", "frlockstat-v2.ndjson")


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


class FeedSchema(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = documented(README)
        cls.recs, cls.bad = [], []
        with open(FIXTURE, "rb") as f:
            for n, line in enumerate(f, 1):
                what, rec, why = feed.classify(line.rstrip(b"\r\n"))
                if what == "record" and rec.get("v") == feed.SCHEMA:
                    cls.recs.append(rec)
                else:
                    cls.bad.append("line %d: %s (%s)" % (n, what, why or "v%r" % (rec or {}).get("v")))
        cls.types = sorted({r["type"] for r in cls.recs})

    def test_records(self):
        """feed schema: every line of the recorded feed is a record of the current schema"""
        self.assertEqual(self.bad, [], "%d lines are no record: %s" % (len(self.bad), self.bad[:5]))
        self.assertGreater(len(self.recs), 0)

    def test_types(self):
        """feed schema: every record type of the feed is in bpf/README.md's table"""
        self.assertEqual(sorted(set(self.types) - set(self.docs)), [])

    def test_fields(self):
        """feed schema: every field of every record type, and every running total, is documented"""
        for t in self.types:
            recs = [r for r in self.recs if r["type"] == t]
            have = set().union(*(r.keys() for r in recs))
            hists = {k for r in recs for k, v in r.items() if isinstance(v, list)}
            # "hold_ns_pct, ... (one per histogram)": each histogram's _pct.
            known = self.docs.get(t, set()) | self.docs.get("*", set()) | {h + "_pct" for h in hists}
            with self.subTest(type=t):
                self.assertEqual(sorted(have - known), [], "undocumented fields of %s" % t)
                totals = set().union(*(r["total"].keys() for r in recs if isinstance(r.get("total"), dict)))
                self.assertEqual(sorted(totals - self.docs.get(t + ".total", set())), [],
                                 "undocumented running totals of %s" % t)

    def test_histograms(self):
        """feed schema: every histogram is a list of filled {min, max, count} buckets, with its percentiles when not empty"""
        checked = 0
        for r in self.recs:
            for h, buckets in ((k, v) for k, v in r.items() if isinstance(v, list)):
                checked += 1
                with self.subTest(type=r["type"], histogram=h):
                    if buckets:
                        self.assertIsNotNone(r.get(h + "_pct"))
                    for b in buckets:
                        self.assertTrue(isinstance(b, dict) and set(b) == {"min", "max", "count"}
                                        and b["min"] <= b["max"] and b["count"] > 0, b)
        self.assertGreater(checked, 0, "no histogram in the feed")


if __name__ == "__main__":
    unittest.main()
