# SPDX-License-Identifier: GPL-2.0
"""KUnit's results as the kernel prints them on its console (KTAP, in
Documentation/dev-tools/ktap.rst): the one parser of that text, for the
kernels whose suites are built in and run at boot (make test-long's
arm64 and i386 guests).

A console holds other lines too, and each line may carry printk's time
("[    2.123456] "): both are dropped. A suite opens with "# Subtest:
NAME" and its plan "1..N" one level in, its cases are the "ok"/"not ok"
lines at that level (a parameterised case's own subtests one level
deeper are left to it), and it closes with its own result line one level
out. A case or suite whose result line carries "# SKIP" was skipped,
whatever its "ok" says, as kunit.py reads it."""

import re

TIME = re.compile(r"^\[ *[0-9]+\.[0-9]+\] ")
RESULT = re.compile(r"^(ok|not ok) ([0-9]+)(?: (?:- )?([^#]*?))?\s*(?:#\s*(\S+)\s*(.*))?$")
SUBTEST = re.compile(r"^# Subtest: (\S+)")
PLAN = re.compile(r"^1\.\.([0-9]+)$")


class Case:
    def __init__(self, name, status, reason):
        self.name, self.status, self.reason = name, status, reason

    def __repr__(self):
        return "Case(%r, %r, %r)" % (self.name, self.status, self.reason)


class Suite:
    """A suite: its NAME, its PLAN (the cases it announced, None if no
    plan line came), its CASES in order, and its STATUS: "pass", "fail",
    "skip", or None while no result line closed it (the kernel stopped
    or hung in it)."""

    def __init__(self, name, depth):
        self.name, self.depth = name, depth
        self.plan, self.cases, self.status, self.reason = None, [], None, ""

    def __repr__(self):
        return "Suite(%r, %s, %r, plan=%r)" % (self.name, self.status, self.cases, self.plan)


def status(ok, directive):
    if directive and directive.upper() == "SKIP":
        return "skip"
    return "pass" if ok == "ok" else "fail"


def parse(lines):
    """The suites of a console's lines, in the order they opened."""
    suites, open_ = [], []
    for raw in lines:
        line = TIME.sub("", raw.rstrip("\r\n"))
        body = line.lstrip(" \t")
        indent = len(line) - len(body)
        depth = indent // 4 if "\t" not in line[:indent] else line[:indent].count("\t")
        m = SUBTEST.match(body)
        if m:
            s = Suite(m.group(1), depth)
            suites.append(s)
            open_.append(s)
            continue
        if not open_:
            continue
        top = open_[-1]
        m = PLAN.match(body)
        if m and depth == top.depth and top.plan is None:
            top.plan = int(m.group(1))
            continue
        m = RESULT.match(body)
        if not m:
            continue
        ok, _, name, directive, reason = m.groups()
        name, st, reason = name or "", status(ok, directive), reason or ""
        if depth == top.depth - 1 and name == top.name:
            # Its result line; a parameterised case's is also a case of
            # the suite around it.
            top.status, top.reason = st, reason
            open_.pop()
            if open_ and open_[-1].depth == depth:
                open_[-1].cases.append(Case(name, st, reason))
        elif depth == top.depth:
            top.cases.append(Case(name, st, reason))
    return suites


def find(suites, name):
    """The last suite named NAME, or None."""
    named = [s for s in suites if s.name == name]
    return named[-1] if named else None
