# SPDX-License-Identifier: GPL-2.0
"""The tree keeps the host's one model: JSON is read by Python's json
only, Python is imported as a package, every derived figure has one
definition (in view.py), and the page's code draws without computing.
git grep over the tracked files."""

import os
import re
import subprocess
import unittest

from frlock import TOP

def grep(pattern, *paths):
    """{file: [lines]} of git grep -E over the tracked files."""
    p = subprocess.run(["git", "-C", TOP, "grep", "-nE", pattern, "--"] + list(paths),
                       stdout=subprocess.PIPE, text=True)
    out = {}
    for line in p.stdout.splitlines():
        f, _, rest = line.partition(":")
        if f != "host/frlock/tests/test_hygiene.py":     # its own patterns
            out.setdefault(f, []).append(rest)
    return out


class Hygiene(unittest.TestCase):
    def test_python_is_a_package(self):
        """hygiene: no program loads another by its path (SourceFileLoader, runpy, spec_from_file_location) and no sys.path edits, in any tracked file"""
        found = grep(r"SourceFileLoader|runpy|spec_from_file_location|sys\.path\.(insert|append)",
                     ":!patches", ":!*.md")
        self.assertEqual(found, {}, found)

    def test_no_text_json_parsing(self):
        """hygiene: no awk, sed or grep reads JSON"""
        found = grep(r"(^|[^[:alnum:]_])(awk|sed)[[:space:]].*\\?\"[a-z_]+\\?\":", "*.sh",
                     "guest-rootfs", "host", "labs", "tests", "bench", "Makefile")
        # and awk programs that scan for JSON keys with a regex: /"[^"]*":
        found.update(grep(r'/"\[\^"\]\*":', "*.sh", "guest-rootfs", "labs", "tests", "bench"))
        # and greps for a JSON field: '"name":'
        found.update(grep(r"grep .*'[^']*\\?\"[a-z_]+\\?\":", "*.sh", "guest-rootfs", "labs", "tests", "bench"))
        self.assertEqual(found, {}, found)

    def test_one_definition(self):
        """hygiene: the gettimeofday read, the detail lock, bucket labels and percentiles are defined once, in view.py"""
        for what, pattern in (("a gettimeofday read", r"def is_gtod"),
                              ("the lock gettimeofday reads", r"GTOD_LOCKS *="),
                              ("a bucket's label", r"def slot_label|function slotLabel"),
                              ("percentiles", r"def percentile|function percentile"),
                              ("the detail lock", r"def detail_lock|defaultLock|shown_lock")):
            found = grep(pattern, "host", "labs", "dashboards", "tests/*.py")
            self.assertEqual(set(found), {"host/frlock/view.py"},
                             "%s: %s" % (what, found))
        # The gettimeofday reader's name appears in view.py, nowhere else
        # that derives a figure (the labs' texts may name it).
        found = grep(r"ktime_get_real_ts64", "host/frlock/*.py", "dashboards/js")
        found.pop("host/frlock/view.py", None)
        for f, lines in found.items():
            self.assertTrue(all(re.search(r'"[^"]*ktime_get_real_ts64[^"]*"', ln)
                                for ln in lines), "%s derives from the name: %s" % (f, lines))

    def test_page_only_draws(self):
        """hygiene: the page's JavaScript has no arithmetic on counts: no sums, rates, percentiles or slots"""
        js = os.path.join(TOP, "dashboards", "js")
        forbidden = (r"\.count\b", r"reduce\(", r"\+= *[a-z]+\.(writes|retries|total)",
                     r"/ *(iv|r|p)\.(dt|interval)", r"retried_reads", r"\bslotOf\b",
                     r"percentile", r"Math\.log\(")
        for name in os.listdir(js):
            text = open(os.path.join(js, name)).read()
            for pat in forbidden:
                self.assertIsNone(re.search(pat, text), "%s: %s" % (name, pat))
        self.assertFalse(os.path.exists(os.path.join(js, "model.js")))


if __name__ == "__main__":
    unittest.main()
