# SPDX-License-Identifier: GPL-2.0
"""What a vmlinux holds, measured with binutils (readelf, nm): its
sections, its functions' bytes and the jump-label sites of trace events.
kernel/sizes prints them for two images; kernel/coverage records them
per configuration. A module beside the two scripts, which import it."""
import re
import struct
import subprocess


def sections(vmlinux):
    """name -> (address, file offset, size). __jump_table lies inside
    .rodata on x86-64 (vmlinux.lds's RO_DATA), between two symbols."""
    out = subprocess.run(['readelf', '-SW', vmlinux], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)', line)
        if m:
            found[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16))
    marks = symbols(vmlinux, r'__(start|stop)___jump_table')
    if '__jump_table' not in found and len(marks) == 2:
        start, stop = marks['__start___jump_table'], marks['__stop___jump_table']
        for addr, off, size in found.values():
            if addr <= start < addr + size:
                found['__jump_table'] = (start, off + start - addr, stop - start)
                break
    return found


def symbols(vmlinux, pattern):
    out = subprocess.run(['nm', vmlinux], capture_output=True, text=True, check=True).stdout
    return {f[2]: int(f[0], 16) for f in (l.split() for l in out.splitlines())
            if len(f) == 3 and re.fullmatch(pattern, f[2])}


def function_bytes(vmlinux):
    """The sum of the text symbols' sizes: the code itself. The .text
    section's size hides growth on x86-64, where the entry text starts at
    the next 2 MiB boundary and the padding before it absorbs new code."""
    out = subprocess.run(['nm', '-S', vmlinux], capture_output=True, text=True, check=True).stdout
    return sum(int(f[1], 16) for f in (l.split() for l in out.splitlines())
               if len(f) == 4 and f[2] in 'tT')


def jump_sites(vmlinux, system):
    """Jump entries per tracepoint of SYSTEM: struct jump_entry is
    {s32 code, s32 target, long key}, each relative to its own field; the
    key's low bits are flags; struct tracepoint's static_key follows its
    name pointer."""
    sec = sections(vmlinux).get('__jump_table')
    tps = symbols(vmlinux, rf'__tracepoint_{system}_\w+')
    if not sec or not tps:
        return {}
    addr, off, size = sec
    keys = {a + 8: name[len('__tracepoint_'):] for name, a in tps.items()}
    counts = dict.fromkeys(keys.values(), 0)
    with open(vmlinux, 'rb') as f:
        f.seek(off)
        table = f.read(size)
    for i in range(0, size - size % 16, 16):
        _, _, key = struct.unpack_from('<iiq', table, i)
        target = (addr + i + 8 + key) & ~3
        if target in keys:
            counts[keys[target]] += 1
    return counts


def image_sizes(vmlinux):
    """One image's .text, functions, .rodata and __jump_table, in bytes."""
    found = {s: v[2] for s, v in sections(vmlinux).items()
             if s in ('.text', '.rodata', '__jump_table')}
    found['functions'] = function_bytes(vmlinux)
    return found
