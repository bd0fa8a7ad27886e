# SPDX-License-Identifier: GPL-2.0
"""Read a running guest's vCPU instruction pointers from QEMU's monitor.

The runner (runner.py) runs watch() in a thread beside every TCG guest
with a job, and dump() into the console log of a guest that timed out:
dump: three samples a second apart, named from System.map, then the
livelock check below. watch: a sample every PERIOD s while QEMU runs; a
vCPU seen handling an int3 starts the livelock check. Either returns a
found livelock's one-line verdict (the runner then stops the guest: its
own exit status, runner.LIVELOCK).

The livelock is a defect of QEMU's multi-threaded TCG, not of the guest:
a vCPU keeps running a stale translation of kernel text that text_poke
(a static key flip, a tracer attaching) has since restored. The stale
code traps on an int3 that memory no longer holds; the int3 handler finds
none, backs the vCPU up over it and returns, and it traps again, forever.
So the check asks, per vCPU, over 10 samples 0.2 s apart: is it back at
one address X in at least 3, inside int3 handling in at least one, and
does memory at X hold anything but 0xcc? Only when two such checks 10 s
apart name the same vCPU and X is it a livelock: a legitimate int3 (a
text_poke in progress) is emulated and the vCPU moves on past X.
"""
import bisect
import os
import re
import socket
import time

# FRLOCK_VCPU_WATCH_PERIOD (s, default 10) scales the watcher's timing;
# the tests shorten it to play a livelock with a fake monitor.
PERIOD = float(os.environ.get("FRLOCK_VCPU_WATCH_PERIOD", "10"))  # s between samples
CONFIRM_AFTER = PERIOD  # s between the two checks
SAMPLE_GAP = PERIOD / 50  # s between a check's samples
INT3_PATH = ("asm_exc_int3", "exc_int3", "error_entry", "poke_int3_handler",
             "do_int3", "do_int3_user",
             # i386: every exception enters and leaves through these.
             "handle_exception", "handle_exception_return")


class Monitor:
    """One HMP session on QEMU's monitor socket, closed after each use so
    that another reader (run-guest's timeout dump) can connect."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self._prompt()  # the banner: each reply then ends at its own prompt

    def _prompt(self):
        out = b""
        while not out.endswith(b"(qemu) "):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise OSError("QEMU closed its monitor")
            out += chunk
        return out.decode(errors="replace")

    def cmd(self, line):
        self.sock.sendall(line.encode() + b"\n")
        return self._prompt()

    def rips(self):
        """{cpu index: rip} for every vCPU (EIP on i386)."""
        regs = self.cmd("info registers -a")
        return {int(c): int(r, 16)
                for c, r in re.findall(r"CPU#(\d+).*?[RE]IP=([0-9a-f]+)", regs, re.S)}

    def byte_at(self, addr):
        # QEMU prints the address in 16 digits on x86-64, 8 on i386.
        m = re.search(rf"\b0*{addr:x}:\s*0x([0-9a-f]{{2}})", self.cmd(f"x /1xb {addr:#x}"))
        return m.group(1) if m else None

    def close(self):
        self.sock.close()


class Symbols:
    def __init__(self, system_map):
        syms = []
        if system_map:
            for line in open(system_map):
                addr, kind, name = line.split()[:3]
                if kind in "tTwW":
                    syms.append((int(addr, 16), name))
        syms.sort()
        self.addrs = [a for a, _ in syms]
        self.names = [n for _, n in syms]

    def func(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        return self.names[i] if i >= 0 else "?"

    def name(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        return f"{self.names[i]}+{ip - self.addrs[i]:#x}" if i >= 0 else f"{ip:#x}"


def suspects(monitor, syms, samples=10):
    """{cpu: X} for each vCPU that looks stuck on a stale int3 at X."""
    seen = {}
    for _ in range(samples):
        for cpu, rip in monitor.rips().items():
            seen.setdefault(cpu, []).append(rip)
        time.sleep(SAMPLE_GAP)
    found = {}
    for cpu, ips in seen.items():
        in_int3 = sum(syms.func(ip) in INT3_PATH for ip in ips)
        others = [ip for ip in ips if syms.func(ip) not in INT3_PATH]
        if not in_int3 or not others:
            continue
        x = max(set(others), key=others.count)
        if others.count(x) >= 3 and monitor.byte_at(x) not in (None, "cc"):
            found[cpu] = x
    return found


def verdict(monitor, syms, x):
    return (f"livelock in QEMU's TCG: vCPUs keep taking an int3 at {syms.name(x)}, "
            f"where memory holds 0x{monitor.byte_at(x)}: a stale translation of "
            f"patched kernel text")


def confirm(monitor_path, syms, first):
    """Check again 10 s later; the verdict if the same vCPU is stuck at
    the same address, else None."""
    time.sleep(CONFIRM_AFTER)
    m = Monitor(monitor_path)
    try:
        again = suspects(m, syms)
        for cpu, x in first.items():
            if again.get(cpu) == x:
                return verdict(m, syms, x)
    finally:
        m.close()
    return None


def dump(monitor_path, syms, out):
    """Three samples, then the livelock check, printed to the file out
    (the console log); the verdict, or None."""
    print("\nrun-guest: the guest timed out; vCPU instruction pointers, 1 s apart:", file=out)
    try:
        m = Monitor(monitor_path)
        try:
            for _ in range(3):
                for cpu, rip in sorted(m.rips().items()):
                    print(f"  CPU{cpu} RIP={rip:x} {syms.name(rip)}", file=out)
                time.sleep(1)
            first = suspects(m, syms)
        finally:
            m.close()
        found = first and confirm(monitor_path, syms, first)
    except OSError as e:
        print(f"  QEMU's monitor did not answer: {e}", file=out)
        return None
    if found:
        print(f"run-guest: {found}", file=out)
    return found or None


def watch(monitor_path, syms, stop):
    """Until stop (a threading.Event) is set or QEMU is gone: the verdict
    of a livelock, or None."""
    while not os.path.exists(monitor_path):
        if stop.wait(0.2):
            return None
    while not stop.wait(PERIOD):
        try:
            m = Monitor(monitor_path)
            try:
                rips = m.rips()
                first = (suspects(m, syms)
                         if any(syms.func(ip) in INT3_PATH for ip in rips.values())
                         else {})
            finally:
                m.close()
            found = first and confirm(monitor_path, syms, first)
        except OSError:
            return None             # QEMU is gone
        if found:
            return found
    return None
