# SPDX-License-Identifier: GPL-2.0
"""make run's knobs: their bounds come from guest-rootfs/knobs.sh (KNOBS),
the one table the guest's frlock-watch reads too; check() words a
refusal as its knob_check does."""

import os
import re

from . import TOP

KNOBS_SH = os.path.join(TOP, "guest-rootfs", "knobs.sh")


def table():
    """{name: (least, most or "mem" or "duration", what)} from knobs.sh."""
    with open(KNOBS_SH) as f:
        block = re.search(r"^KNOBS='\n(.*?)^'", f.read(), re.M | re.S).group(1)
    out = {}
    for line in block.splitlines():
        name, least, most, what = line.split(None, 3)
        out[name] = (int(least), most if most in ("mem", "duration") else int(most), what)
    return out


def mem_max():
    """The host's memory in MB, the most QEMU can give a guest."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mb = int(line.split()[1]) // 1024
                    return mb if mb >= 1024 else 1048576
    except OSError:
        pass
    return 1048576


def check(name, value, label, duration=None):
    """None if value (a string) is a whole number within name's bounds
    (duration: the most of a knob bounded by the duration), else the one
    line that refuses it."""
    least, top, what = table()[name]
    host, to = "", None
    if top == "mem":
        top, host = mem_max(), " (the host's memory)"
    elif top == "duration":
        top, to = duration, "the duration (%d)" % duration
    if re.fullmatch(r"[0-9]{1,7}", value) and least <= int(value) <= top:
        return None
    return "%s wants %s from %d to %s%s, not '%s'" % (label, what, least, to or top, host, value)
