# SPDX-License-Identifier: GPL-2.0
"""The tree keeps the host's one model: JSON is read by Python's json
only, Python is imported as a package, and the page's code draws
without computing. git grep over the tracked files. (That the labs show
what the view computes is test_labs' to check, on their output.)"""

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
        out.setdefault(f, []).append(rest)
    return out


class Hygiene(unittest.TestCase):
    def test_python_is_a_package(self):
        """hygiene: Python is imported, never loaded by its path (importlib's file loader, the run-a-path module) nor found by sys.path edits, in every file, scripts without .py too"""
        # (spelt with a class so that git grep does not find this file)
        found = grep(r"SourceFile[L]oader|run[p]y|run_[p]ath|sys\.path\.(insert|append)|"
                     r"spec_from_file_[l]ocation", ":!*.md")
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

    def test_page_only_draws(self):
        """hygiene: the page's JavaScript has no arithmetic on counts: no sums, rates, percentiles or slots"""
        js = os.path.join(TOP, "dashboards", "js")
        forbidden = (r"\.count\b", r"reduce\(", r"\+= *[a-z]+\.(writes|retries|total)",
                     r"/ *(iv|r|p)\.(dt|interval)", r"\bslotOf\b",
                     r"percentile", r"Math\.log\(")
        for name in os.listdir(js):
            text = open(os.path.join(js, name)).read()
            for pat in forbidden:
                self.assertIsNone(re.search(pat, text), "%s: %s" % (name, pat))
        self.assertFalse(os.path.exists(os.path.join(js, "model.js")))


if __name__ == "__main__":
    unittest.main()
