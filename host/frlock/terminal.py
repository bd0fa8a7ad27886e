# SPDX-License-Identifier: GPL-2.0
"""The view as text: make run's terminal. Every figure is a cell of the
view's snapshot (view.py), printed as it is; nothing is computed here but
the columns' widths and the histograms' bars."""

from . import view as V

def table(columns, rows):
    """A table: each column as wide as its widest cell; cells right-aligned
    but the first (a name) and the text columns."""
    cols = [list(columns)] + [list(r) for r in rows]
    widths = [max(len(r[i]) for r in cols) for i in range(len(columns))]
    left = {0} | {i for i, c in enumerate(columns) if c in (
        "kind", "writer", "reader", "site", "caller", "from", "writer task", "writer site",
        "reader task", "reader site")}
    return [line(r, widths, left) for r in cols]


def line(cells, widths, left):
    return "  ".join(c.ljust(w) if i in left else c.rjust(w)
                     for i, (c, w) in enumerate(zip(cells, widths))).rstrip()


def hist_lines(h, width=40):
    """A histogram as bpftrace draws one (the view's slots lo..hi)."""
    if not h["labels"]:
        return ["  (none)"]
    top = max(h["counts"]) or 1
    return ["  %-14s %8d |%-*s|" % (lab, c, width, "@" * (c * width // top))
            for lab, c in zip(h["labels"], h["counts"])]


def interval_text(row):
    """One completed interval of the detail lock: its histograms, then its
    row under the header."""
    out = ["%s %s (%s), %g s interval" % (row["cells"][0], row["lock"], row["kind"],
                                          round(row["dt"], 3))]
    for k, h in row["hists"].items():
        out.append(" " + V.HIST_TITLES[k])
        out.extend(hist_lines(h))
    out.extend(table(V.ROW_COLUMNS, [row["cells"]]))
    return out


def workload_text(w):
    """The user's workload (make run CMD=...): its command line, how it
    ended, its last lines of output; nothing for gtod-load's run."""
    if w is None:
        return []
    out = ["workload: %s" % w["command"], "  %s" % w["ended"]]
    if w["output_note"]:
        out.append("  (%s)" % w["output_note"])
    if w["output"]:
        out.append("  its last lines of output:")
        out.extend("  | " + ln for ln in w["output"])
    return out + [""]


def final_text(snap):
    """The whole run: every lock, the detail lock's intervals, its call
    sites, lost events, what was skipped and, for a feed that ended
    without the guest's feed_end, that the run is incomplete."""
    d = snap["detail"]
    out = [""] + workload_text(snap["workload"])
    out.append("every lock, whole run (%g s):" % snap["locks"]["seconds"])
    out.extend(table(snap["locks"]["columns"], snap["locks"]["rows"]))
    out.append("")
    out.append("%s per interval (%d intervals; %s):" % (
        d["lock"] or "no lock", len(snap["rows"]["rows"]), d["why"]))
    out.extend(table(snap["rows"]["columns"], snap["rows"]["rows"]))
    c = snap["callers"]
    if c["rows"]:
        out.append("")
        out.append("call sites of %s, whole run%s:" % (
            d["lock"], " (%d more)" % c["more"] if c["more"] else ""))
        out.extend(table(c["columns"], c["rows"]))
    elif c["note"]:
        out.append(c["note"])
    pr = snap["pairs"]
    if pr["rows"]:
        out.append("")
        out.append("who cost whom, whole run (lost reads per writer and reader; "
                   "≥: at least)%s:" % (" (%d more)" % pr["more"] if pr["more"] else ""))
        out.extend(table(pr["columns"], pr["rows"]))
    out.append(snap["lost"])
    if snap["walk"]:
        out.append(snap["walk"])
    if snap["self_cost"]:
        out.append(snap["self_cost"])
    out.append(snap["skipped"])
    if snap["incomplete"]:
        out.append(snap["incomplete"])
    return out


def tables_in(text, snap):
    """The tables of final_text(snap) that text (a terminal's output) does
    not hold line for line: the tests' check that the terminal printed the
    view's cells."""
    missing = []
    lines = text.splitlines()
    for name, t in (("locks", snap["locks"]), ("rows", snap["rows"]),
                    ("callers", snap["callers"]), ("pairs", snap["pairs"])):
        want = table(t["columns"], t["rows"])
        if name == "callers" and not t["rows"]:
            want = [t["note"]] if t["note"] else []
        if name == "pairs" and not t["rows"]:
            want = []
        if not _contains(lines, want):
            missing.append(name)
    for name in ("lost", "walk", "self_cost", "skipped", "incomplete"):
        if snap[name] and snap[name] not in lines:
            missing.append(name)
    return missing


def _contains(lines, block):
    n = len(block)
    return any(lines[i:i + n] == block for i in range(len(lines) - n + 1))

