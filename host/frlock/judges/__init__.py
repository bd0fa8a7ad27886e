# SPDX-License-Identifier: GPL-2.0
"""What the host's judges of the guest's results share: one "ok - ..." or
"not ok - ..." line per check, as tests/run relays it, a count of the
failures for the exit status, notes indented as the guest scripts print
theirs, and a results file read whole."""

import argparse
import json
import os

from frlock.tests.protocol import print_check, print_diag


class Checks:
    def __init__(self, prefix=""):
        self.prefix = prefix
        self.failed = 0

    def check(self, ok, desc):
        if not ok:
            self.failed += 1
        print_check("ok" if ok else "not ok", self.prefix + desc)
        return ok

    def skip(self, desc):
        print_check("skip", self.prefix + desc)

    @staticmethod
    def note(text):
        print_diag(text, "  ")


def parser(doc, prog):
    """The argparse parser of a judge whose docstring describes it: its
    first paragraph, then the others but for the usage line, which
    argparse writes."""
    paragraphs = doc.split("\n\n")
    return argparse.ArgumentParser(
        prog=prog, description=paragraphs[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(p for p in paragraphs[1:] if not p.startswith("usage:")))


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
    lines are left out. A line that is no JSON object (a tool's note) is
    None in its place if keep_bad; otherwise it is left out, and a note
    says how many were and shows the first."""
    out, bad = [], []
    for n, line in enumerate((read(d, name) or "").splitlines(), 1):
        if not line.strip():
            continue
        try:
            r = json.loads(line)
        except ValueError:
            r = None
        if isinstance(r, dict):
            out.append(r)
        elif keep_bad:
            out.append(None)
        else:
            bad.append((n, line))
    if bad:
        print_diag("%s: %d line(s) that are no JSON object left out (line %d: %.80s)"
                   % (name, len(bad), bad[0][0], bad[0][1]), "  ")
    return out
