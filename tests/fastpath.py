#!/usr/bin/env python3
"""Does a sequence-lock read that neither waits nor retries run any added
instruction?

For each FUNCTION, a user that inlines read_seqcount_begin() and
read_seqcount_retry(), both kernels' code is disassembled (objdump) and
every path from the entry to a return that visits no instruction twice is
listed (a conditional branch may go either way, a call returns), apart
from those that run a pause. A retry jumps back and a wait for an odd count
spins with cpu_relax() (pause), so these are exactly the reads that
neither wait nor retry; the tracepoint calls, reached only through a
jump-label NOP when an event is on, lie on none of them. With addresses,
displacements and registers masked, each new path must hold the same
instructions as a base path (as a multiset, branches apart, whose sense and layout the
compiler may change) and no more branches. A static branch (a jump-label
NOP), a call or a load added on any such path fails it. Prints the paths
that fail; exits 1 if any function fails, 2 on bad input.

Only functions whose failed reads loop back qualify: path walk's readers
return -ECHILD instead, so their failing path has no loop and carries the
retry event's NOP, and in larger functions the register allocation moves.
"""
import argparse
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


def acyclic_paths(insns, limit=10000):
    """Every path from the entry to an exit that visits no instruction
    twice and runs no pause, as lists of instructions: a retry loops back,
    and a reader that finds the count odd spins with cpu_relax() (pause)
    even where the compiler has peeled the loop's first turn."""
    paths, stack = [], [(0, [0])]
    while stack:
        i, path = stack.pop()
        succ = successors(insns, i)
        if not succ:
            # cpu_relax() (pause) spins only in a reader that waits.
            if not any(insns[k][1] == 'pause' for k in path):
                paths.append([insns[k] for k in path])
            if len(paths) > limit:
                sys.exit(f'fastpath.py: more than {limit} paths')
        for k in succ:
            if k not in path:
                stack.append((k, path + [k]))
    if not paths:
        sys.exit('fastpath.py: no path to a return')
    return paths


def normalize(op, arg):
    """The instruction with addresses, displacements, offsets and registers
    masked. A compare's two operands are sorted: "a == b" compiled as cmp a,b or cmp
    b,a is one instruction either way (the branch after it, whose sense
    may change with them, is not compared)."""
    arg = re.sub(r'<([^+>]+)(\+0x[0-9a-f]+)?>', r'<\1>', arg)
    arg = re.sub(r'\b[0-9a-f]+ <', 'N <', arg)
    arg = re.sub(r'0x[0-9a-f]+', 'N', arg)
    arg = " ".join(arg.split())
    # Registers are the compiler's to allocate: which one holds a value is
    # not an instruction more or less.
    arg = re.sub(r'%[a-z0-9]+', '%R', arg)
    # ... and with it whether an address has a displacement: a load through
    # %r13 or %rbp must encode a zero one ("0x0(%r13)"), one through %rax
    # need not.
    arg = arg.replace('N(%R', '(%R')
    if op in ('cmp', 'test') and '#' not in arg and arg.count(',') == 1:
        arg = ','.join(sorted(arg.split(',')))
    return f'{op} {arg}'.strip()


def is_branch(op):
    return op.startswith('j')


def main():
    p = argparse.ArgumentParser(prog='tests/fastpath.py', description=__doc__.split('\n\n')[0],
                                epilog='\n\n'.join(__doc__.split('\n\n')[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('base', metavar='BASE_VMLINUX')
    p.add_argument('new', metavar='NEW_VMLINUX')
    p.add_argument('funcs', metavar='FUNCTION', nargs='+')
    a = p.parse_args()
    base, new, funcs = a.base, a.new, a.funcs
    failed = 0
    for func in funcs:
        per_kernel = []
        for vmlinux in (base, new):
            per_kernel.append([(collections.Counter(normalize(op, arg) for _, op, arg in p
                                                    if not is_branch(op)),
                                sum(1 for _, op, _ in p if is_branch(op)), p)
                               for p in acyclic_paths(disassemble(vmlinux, func))])
        bad = []
        for body, branches, p in per_kernel[1]:
            match = [b for b_body, b, _ in per_kernel[0] if b_body == body]
            if not match or branches > min(match):
                near = min(per_kernel[0], key=lambda t: sum(((body - t[0]) + (t[0] - body)).values()))
                bad.append((p, body - near[0], near[0] - body))
        print(f'  {func}: {len(per_kernel[0])} paths that neither wait nor retry in base, {len(per_kernel[1])} in new')
        for p, added, removed in bad:
            print(f'  {func}: a new path matches no base path:',
                  '; '.join(normalize(op, arg) for _, op, arg in p))
            print(f'    added {dict(added)}, removed {dict(removed)}')
        ok = not bad and len(per_kernel[1]) <= len(per_kernel[0])
        print(f'{"ok" if ok else "FAIL"} {func}: every path that neither waits nor '
              f'retries has the same instructions, branches aside, and no more branches')
        failed += not ok
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
