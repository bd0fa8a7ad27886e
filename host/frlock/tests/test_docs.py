# SPDX-License-Identifier: GPL-2.0
"""The docs cannot drift from the tree: in every Markdown file git tracks,
every relative link leads to a file (and its #section to a heading of
it), every repository path named in code (`host/run-guest`,
`frlock/view.py`) exists, and every make variable a command sets (`make
run DURATION=5`) is read by the Makefile that command runs."""

import functools
import glob
import os
import re
import subprocess
import unittest

from frlock import TOP

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\n]+)`")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
# A path word: letters, digits and ._-/*, at least one slash inside it.
PATH_WORD = re.compile(r"^(?:\.\./|\./)*[A-Za-z0-9_.*-]+(?:/[A-Za-z0-9_.*-]+)+/?$")
# Our kernel/ holds files only: kernel/time/ and kernel/power/suspend.c
# are Linux's, as are its other top folders.
LINUX_PATH = re.compile(r"^(?:kernel/[^/]+/|(?:include|lib|arch|fs|mm|drivers|tools|scripts)/)")
MAKE_VAR = re.compile(r"\b([A-Z][A-Z0-9_]*)=")


@functools.lru_cache()
def tracked():
    out = subprocess.run(["git", "-C", TOP, "ls-files"], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    return out.split("\n")[:-1]


@functools.lru_cache()
def top_dirs():
    return {f.split("/")[0] for f in tracked() if "/" in f}


@functools.lru_cache()
def environment_reads():
    """The environment variables a program of the tree reads (make passes
    its command line's variables on in the environment)."""
    names = set()
    for f in tracked():
        if f.endswith(".md") or f.startswith("patches/") or not os.path.isfile(os.path.join(TOP, f)):
            continue
        text = read(f)
        names.update(re.findall(r"environ(?:\.get)?[(\[]\s*[\"']([A-Z][A-Z0-9_]*)", text))
        names.update(re.findall(r"getenv\(\s*\"([A-Z][A-Z0-9_]*)", text))
    return names


def markdown():
    return [f for f in tracked() if f.endswith(".md")]


def read(rel):
    with open(os.path.join(TOP, rel), errors="replace") as f:
        return f.read()


def ignored(path):
    """A build output the tree ignores (bpf/.output/frlockstat), named as
    such: it exists after a build."""
    return subprocess.run(["git", "-C", TOP, "check-ignore", "-q", "--no-index", path],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def exists(path):
    return bool(glob.glob(path)) if "*" in path else os.path.lexists(path)


def slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(rel):
    text = FENCE.sub("", read(rel))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*$", text, re.M)}


def named_paths(text):
    """The words of inline code and code blocks that are paths: with a
    slash, no URL, no placeholder."""
    spans = CODE.findall(FENCE.sub("", text)) + FENCE.findall(text)
    for span in spans:
        for word in re.split(r"[\s,;()'\"=]+", span):
            word = re.sub(r":\d+(-\d+)?$", "", word.rstrip(".:"))
            if PATH_WORD.match(word) and "://" not in word and not LINUX_PATH.match(word):
                yield word


def as_glob(word):
    """A placeholder in capitals (host/judge-NAME) stands for any name."""
    return re.sub(r"(?<![A-Za-z])(?!README\b)[A-Z][A-Z_]{1,}(?![a-z])", "*", word)


class Docs(unittest.TestCase):
    def test_links(self):
        """docs: every relative link in the Markdown leads to a file, and its #section to a heading"""
        bad, checked = [], 0
        for md in markdown():
            here = os.path.dirname(md)
            for target in LINK.findall(FENCE.sub("", read(md))):
                if re.match(r"^[a-z]+:", target):
                    continue
                checked += 1
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(here, path)) if path else md
                if not os.path.lexists(os.path.join(TOP, dest)):
                    bad.append("%s: link to %s: no such file" % (md, target))
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    bad.append("%s: link to %s: no such section" % (md, target))
        self.assertGreater(checked, 20, "the Markdown's links were not found")
        self.assertEqual(bad, [], "\n".join(bad))

    def test_paths(self):
        """docs: every repository path the Markdown names in code exists (or is a build output the tree ignores)"""
        bad, checked = [], 0
        for md in markdown():
            here = os.path.dirname(md)
            for word in sorted(set(named_paths(read(md)))):
                first = re.sub(r"^(\./|\.\./)+", "", word).split("/")[0]
                # A path of the repository: beside the Markdown file (its
                # first folder is there), or from the top (its first folder
                # is one of the tree's). Others are the kernel's, tracefs',
                # a run's results.
                ours = []
                if word.startswith(".") or os.path.lexists(os.path.join(TOP, here, first)):
                    ours.append(os.path.normpath(os.path.join(here, word)))
                if not word.startswith(".") and first in top_dirs():
                    ours.append(os.path.normpath(word))
                checked += bool(ours)
                if ours and not any(exists(os.path.join(TOP, as_glob(c))) or ignored(c) for c in ours):
                    bad.append("%s: `%s`: no such file in the tree" % (md, word))
        self.assertGreater(checked, 100, "the Markdown's paths were not found")
        self.assertEqual(bad, [], "\n".join(bad))

    def test_make_variables(self):
        """docs: every make variable a command in the Markdown sets for one of our targets is read by the Makefile or from the environment"""
        bad, checked = [], 0
        for md in markdown():
            text = read(md)
            commands = CODE.findall(FENCE.sub("", text)) + [
                ln for block in FENCE.findall(text) for ln in block.splitlines()]
            for cmd in commands:
                m = re.search(r"(?:^|[\s;&|$(])make\b(.*)", cmd)
                if not m:
                    continue
                args = m.group(1)
                d = re.search(r"-C\s+(\S+)", args)
                makefile = os.path.join(d.group(1), "Makefile") if d else "Makefile"
                if not os.path.isfile(os.path.join(TOP, makefile)):
                    continue
                rules = read(makefile)
                words = [w for w in re.sub(r"-C\s+\S+", "", args).split()
                         if not w.startswith("-") and "=" not in w]
                # make's own (kbuild's `make C=2`) is not ours to check.
                if not words or not re.search(r"^%s\s*:" % re.escape(words[0]), rules, re.M):
                    continue
                for var in MAKE_VAR.findall(args):
                    checked += 1
                    read_by_make = re.search(r"\$[({]%s[)}]|\b(?:ifdef|ifndef)\s+%s\b" % (var, var), rules)
                    if not read_by_make and var not in environment_reads():
                        bad.append("%s: `make%s`: %s reads no %s, and no program reads it"
                                   % (md, args, makefile, var))
        self.assertGreater(checked, 5, "the Markdown's make commands were not found")
        self.assertEqual(bad, [], "\n".join(bad))

if __name__ == "__main__":
    unittest.main()
