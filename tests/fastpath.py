#!/usr/bin/env python3
"""Does a sequence-lock read that neither waits nor retries run any added
instruction?

usage: fastpath.py BASE_VMLINUX NEW_VMLINUX FUNCTION...

For each FUNCTION, a user that inlines read_seqcount_begin() and
read_seqcount_retry(), both kernels' code is disassembled (objdump) and the
shortest path from the entry to a return is found in each control-flow
graph: a conditional branch may go either way, a call returns. In these
functions the shortest path is the read that finds the count even and
unchanged: every wait, retry or tracepoint call lies on a longer one. With
addresses and displacements masked out, the new kernel's path must hold no
instruction that the base kernel's path does not (as a multiset, branches
apart, whose sense and layout the compiler may change), and no more
branches. A static branch (a jump-label NOP) or a call added on the path
would fail it. Prints both paths; exits 1 if any function fails, 2 on bad
input.
"""
import collections
import re
import subprocess
import sys

INSN = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*?)\s*$')
TARGET = re.compile(r'^([0-9a-f]+) <([^>]+)>$')


def disassemble(vmlinux, func):
    """[(addr, mnemonic, operands)] of FUNC in VMLINUX."""
    out = subprocess.run(['objdump', '-d', '--no-show-raw-insn',
                          '--disassemble=' + func, vmlinux],
                         capture_output=True, text=True, check=True).stdout
    insns = []
    for line in out.splitlines():
        m = INSN.match(line)
        if m and not line.startswith('0'):
            insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
    if not insns:
        sys.exit(f'fastpath.py: no function {func} in {vmlinux}')
    return insns


def successors(insns, i):
    """Indices of the instructions that may follow insns[i]; [] for an exit."""
    addr, op, arg = insns[i]
    index = {a: k for k, (a, _, _) in enumerate(insns)}
    nxt = [i + 1] if i + 1 < len(insns) else []
    if op.startswith('ret'):
        return []
    if op.startswith('j'):
        m = TARGET.match(arg.split('#')[0].strip())
        target = index.get(int(m.group(1), 16)) if m else None
        if op.startswith('jmp'):
            # A tail call or the return thunk leaves the function.
            return [target] if target is not None else []
        return nxt + ([target] if target is not None else [])
    return nxt


def shortest_path(insns):
    """The fewest instructions from the entry to an exit, in order."""
    prev = {0: None}
    queue = collections.deque([0])
    while queue:
        i = queue.popleft()
        succ = successors(insns, i)
        if not succ:
            path = []
            while i is not None:
                path.append(i)
                i = prev[i]
            return [insns[k] for k in reversed(path)]
        for k in succ:
            if k not in prev:
                prev[k] = i
                queue.append(k)
    sys.exit('fastpath.py: no path to a return')


def normalize(op, arg):
    """The instruction with addresses, displacements and offsets masked."""
    arg = re.sub(r'<([^+>]+)(\+0x[0-9a-f]+)?>', r'<\1>', arg)
    arg = re.sub(r'\b[0-9a-f]+ <', 'N <', arg)
    arg = re.sub(r'0x[0-9a-f]+', 'N', arg)
    return f'{op} {" ".join(arg.split())}'.strip()


def is_branch(op):
    return op.startswith('j')


def main():
    if len(sys.argv) < 4:
        print(__doc__.split('\n\n')[1], file=sys.stderr)
        sys.exit(2)
    base, new, funcs = sys.argv[1], sys.argv[2], sys.argv[3:]
    failed = 0
    for func in funcs:
        paths = [shortest_path(disassemble(v, func)) for v in (base, new)]
        body = [collections.Counter(normalize(op, arg) for _, op, arg in p
                                    if not is_branch(op)) for p in paths]
        branches = [sum(1 for _, op, _ in p if is_branch(op)) for p in paths]
        added = body[1] - body[0]
        ok = not added and branches[1] <= branches[0]
        for name, p in zip(('base', 'new'), paths):
            print(f'  {func} ({name}, {len(p)} instructions):',
                  '; '.join(normalize(op, arg) for _, op, arg in p))
        if added:
            print(f'  {func}: added on the path:', dict(added))
        print(f'{"ok" if ok else "FAIL"} {func}: {len(paths[0])} -> '
              f'{len(paths[1])} instructions, {branches[0]} -> {branches[1]} branches')
        failed += not ok
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
