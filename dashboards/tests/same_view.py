#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Check that make run's terminal and its page showed the same figures.

usage: same_view.py TERMINAL.txt RESULT.json [--rows N] [--skipped TEXT]
                    [--stall TEXT]

TERMINAL.txt is what dashboards/server --terminal printed; RESULT.json is
browser.py's output for the page of the same server. Compared: every
interval's row as printed live, the table of the whole run, the page's
table row by row and cell by cell, its header, and the "skipped: ..."
line; with --stall, the stall message on both (TEXT is a part of it).
Prints what it compared; exit status 1 on any difference.
"""

import argparse
import json
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, __file__.rsplit("/tests/", 1)[0])
import view  # noqa: E402


def terminal(path):
    lines = open(path, encoding="utf-8").read().splitlines()
    header = view.table_header()
    live, table, skipped, stalls = [], [], [], []
    for i, line in enumerate(lines):
        if line.startswith("per interval, "):
            n = int(line.rsplit("(", 1)[1].split()[0])
            assert lines[i + 1] == header, "no header under %r" % line
            table = [r.split() for r in lines[i + 2:i + 2 + n]]
            skipped.append(lines[i + 2 + n])
        elif line == header and i + 1 < len(lines) and (i == 0 or not lines[i - 1].startswith("per interval")):
            live.append(lines[i + 1].split())
        elif line.startswith("frlock-view: no data from the guest"):
            stalls.append(line[len("frlock-view: "):])
    return live, table, skipped, stalls


def main():
    p = argparse.ArgumentParser()
    p.add_argument("terminal")
    p.add_argument("result")
    p.add_argument("--rows", type=int)
    p.add_argument("--skipped")
    p.add_argument("--stall")
    a = p.parse_args()
    live, table, skipped, stalls = terminal(a.terminal)
    page = json.load(open(a.result))["summary"]
    bad = []
    print("terminal: %d live rows, %d in the final table; page: %d rows"
          % (len(live), len(table), len(page["rows"])))
    for i, (t, w) in enumerate(zip(table, page["rows"])):
        print("  row %2d terminal %s | page %s%s" % (i, " ".join(t), " ".join(w),
                                                     "" if t == w else "  <- differs"))
    if table != page["rows"]:
        bad.append("the final table and the page's rows differ")
    if live != table:
        bad.append("the rows printed live differ from the final table")
    if a.rows is not None and len(table) != a.rows:
        bad.append("%d rows, wanted %d" % (len(table), a.rows))
    if not table:
        bad.append("no rows")
    if page["rows_header"] != list(view.COLUMNS):
        bad.append("page header %s, terminal %s" % (page["rows_header"], list(view.COLUMNS)))
    print("skipped: terminal %r, page %r" % (skipped[-1] if skipped else None, page["skipped"]))
    if not skipped or skipped[-1] != page["skipped"]:
        bad.append("the skipped lines differ")
    if a.skipped and page["skipped"] != a.skipped:
        bad.append("skipped %r, wanted %r" % (page["skipped"], a.skipped))
    if a.stall:
        print("stall: terminal %s; page %r" % (stalls, page["stall"]))
        if not stalls or a.stall not in stalls[-1] or page["stall"] != stalls[-1]:
            bad.append("the stall was not reported the same on both")
    for b in bad:
        print("MISMATCH:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
