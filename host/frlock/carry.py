# SPDX-License-Identifier: GPL-2.0
"""What a user's workload needs in the guest (make run CMD=..., frlock-run
-- COMMAND): its program, found as the host's shell would find it, and the
shared libraries the host's dynamic loader resolves for it. run-guest
--carry puts each file at its own path in the guest, beside the rootfs's
copies of the host's libraries, so the guest's loader resolves the same
files and the guest runs the host's own binary.

A path under the repository needs nothing carried: the guest sees the
repository at /opt/frlock."""

import os
import subprocess

from . import TOP

GUEST_TOP = "/opt/frlock"
# What the guest's rootfs has to run a script with.
GUEST_INTERPRETERS = ("/bin/sh", "/bin/busybox")


class Refused(Exception):
    """A workload that cannot run in the guest: one line, exit 2."""


def find(name, path=None):
    """The host path of COMMAND: a name with a slash is a path (it must
    exist and be executable); a bare name is looked up in PATH."""
    if "/" in name:
        full = os.path.abspath(name)
        if not os.path.isfile(full):
            raise Refused("COMMAND '%s' not found (no such file %s)" % (name, full))
        if not os.access(full, os.X_OK):
            raise Refused("COMMAND '%s' is not executable" % name)
        return full
    dirs = (os.environ.get("PATH", "") if path is None else path).split(os.pathsep)
    for d in dirs:
        full = os.path.join(d or ".", name)
        if os.path.isfile(full) and os.access(full, os.X_OK):
            return os.path.abspath(full)
    raise Refused("COMMAND '%s' not found on the host's PATH (%s)" % (name, ":".join(dirs)))


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def interpreter(path):
    """A script's interpreter (its #! line's first word), or None."""
    with open(path, "rb") as f:
        first = f.readline(256)
    if not first.startswith(b"#!"):
        return None
    words = first[2:].split()
    return words[0].decode(errors="replace") if words else None


def libraries(program):
    """The shared libraries the host's dynamic loader maps for PROGRAM
    (ldd runs the loader with LD_TRACE_LOADED_OBJECTS): [] for a static
    program; Refused naming a library the loader cannot find."""
    p = subprocess.run(["ldd", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if "not a dynamic executable" in p.stdout or "statically linked" in p.stdout:
        return []
    if p.returncode:
        raise Refused("ldd cannot read COMMAND %s: %s" % (program, p.stdout.strip()))
    libs = []
    for line in p.stdout.splitlines():
        w = line.split()
        if len(w) >= 3 and w[1] == "=>":
            if w[2] == "not":
                raise Refused("COMMAND %s needs %s, which the host's dynamic loader cannot "
                              "resolve" % (program, w[0]))
            if w[2].startswith("/"):
                libs.append(w[2])
        elif w and w[0].startswith("/"):
            libs.append(w[0])
    return libs


def plan(argv, path=None):
    """(the argument vector the guest runs, the host files to carry) for
    the user's COMMAND [ARGS...]."""
    if not argv or not argv[0]:
        raise Refused("no COMMAND given")
    prog = find(argv[0], path)
    top = os.path.realpath(TOP)
    real = os.path.realpath(prog)
    if real == top or real.startswith(top + os.sep):
        return [GUEST_TOP + real[len(top):]] + argv[1:], []
    if is_elf(prog):
        return [prog] + argv[1:], [prog] + libraries(prog)
    interp = interpreter(prog)
    if interp in GUEST_INTERPRETERS:
        return [prog] + argv[1:], [prog]
    raise Refused("COMMAND %s is a script for %s, which the guest does not have; give an ELF "
                  "program or a /bin/sh script" % (prog, interp or "an unknown interpreter"))
