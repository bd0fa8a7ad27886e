# SPDX-License-Identifier: GPL-2.0
"""What the host's judges of the guest's results share: one "ok - ..." or
"not ok - ..." line per check, as tests/run relays it, a count of the
failures for the exit status, notes indented as the guest scripts print
theirs, and a results file read whole."""

import json
import os


class Checks:
    def __init__(self, prefix=""):
        self.prefix = prefix
        self.failed = 0

    def check(self, ok, desc):
        if not ok:
            self.failed += 1
        print("%s - %s%s" % ("ok" if ok else "not ok", self.prefix, desc), flush=True)
        return ok

    @staticmethod
    def note(text):
        for line in str(text).splitlines():
            print("  " + line)


def read(d, name):
    """The text of the file NAME in the results directory d, None if the
    guest left none."""
    try:
        with open(os.path.join(d, name), errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        return None


def json_lines(d, name, keep_bad=False):
    """The JSON objects of a results file of JSON lines, in order; blank
    lines are left out, and so are the lines that are no JSON object (a
    tool's notes) unless keep_bad, which puts None in their place."""
    out = []
    for line in (read(d, name) or "").splitlines():
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            r = None
        if isinstance(r, dict) or keep_bad:
            out.append(r if isinstance(r, dict) else None)
    return out
