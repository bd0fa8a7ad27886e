#!/usr/bin/env python3
"""host/vcpu-watch against a fake QEMU monitor that replays scripted vCPU
instruction pointers: it must name the livelock seen in session logs
(a vCPU back at one address between int3 traps, memory there not 0xcc)
and nothing else (an idle guest, a legitimate int3, a vCPU that moves on).

usage: tests/vcpu_watch.py SCENARIO   (livelock | idle | legit | transient)
Exit 0 when the watcher's verdict is the one the scenario wants.
"""
import importlib.machinery
import importlib.util
import itertools
import os
import socket
import sys
import tempfile
import threading

here = os.path.dirname(os.path.abspath(__file__))
loader = importlib.machinery.SourceFileLoader(
    "vcpu_watch", os.path.join(here, "..", "host", "vcpu-watch"))
spec = importlib.util.spec_from_loader("vcpu_watch", loader)
vw = importlib.util.module_from_spec(spec)
loader.exec_module(vw)
vw.PERIOD, vw.CONFIRM_AFTER, vw.SAMPLE_GAP = 0.05, 0.05, 0.0

SYMS = {"asm_exc_int3": 0xffffffff81600ac0, "exc_int3": 0xffffffff815f0000,
        "amd_e400_idle": 0xffffffff8102a1e0, "copy_page_range": 0xffffffff811c6e30,
        "ktime_get_real_ts64": 0xffffffff81120000, "do_syscall_64": 0xffffffff815e0000,
        "zzz_end": 0xffffffff81700000}
INT3 = SYMS["asm_exc_int3"] + 0x2a
IDLE = SYMS["amd_e400_idle"] + 0x3a
STUCK = SYMS["copy_page_range"] + 0xe4a
BUSY = [SYMS["ktime_get_real_ts64"] + d for d in (0x10, 0x33, 0x51, 0x7a)] + \
       [SYMS["do_syscall_64"] + d for d in (0x4, 0x20)]

# Per scenario: each vCPU's RIPs, replayed in a cycle; memory bytes.
SCENARIOS = {
    # Session 7's dump: CPU0 between asm_exc_int3 and copy_page_range,
    # CPU1 idle (whose RIP also repeats, and holds 0xc3: not a livelock).
    "livelock": ({0: [INT3, STUCK, STUCK], 1: [IDLE]}, {STUCK: "eb", IDLE: "c3"}, True),
    "idle": ({0: [IDLE], 1: [IDLE]}, {IDLE: "c3"}, False),
    # A text_poke in progress: one trap, emulated, the vCPU moves on.
    "legit": ({0: [INT3] + BUSY, 1: [IDLE]}, {b: "0f" for b in BUSY} | {IDLE: "c3"}, False),
    # Stuck for the first check only: the second finds it elsewhere.
    "transient": ({0: [INT3, STUCK, STUCK] * 4 + BUSY * 3, 1: [IDLE]},
                  {STUCK: "eb", IDLE: "c3"} | {b: "0f" for b in BUSY}, False),
}


def serve(path, rips, memory, stop):
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(1)
    srv.settimeout(0.2)
    cycles = {cpu: itertools.cycle(ips) for cpu, ips in rips.items()}
    while not stop.is_set():
        try:
            conn, _ = srv.accept()
        except socket.timeout:
            continue
        with conn:
            conn.sendall(b"QEMU 7.2.0 monitor - type 'help' for more information\r\n(qemu) ")
            buf = b""
            while True:
                data = conn.recv(4096)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    cmd = line.decode().strip()
                    if cmd == "info registers -a":
                        out = "".join(f"\r\nCPU#{c}\r\nRAX=0000000000000000 RBX=1\r\n"
                                      f"RIP={next(cyc):016x} RFL=00000246\r\n"
                                      for c, cyc in cycles.items())
                    elif cmd.startswith("x /1xb "):
                        addr = int(cmd.split()[-1], 16)
                        out = f"{addr:016x}: 0x{memory.get(addr, '90')}\r\n"
                    else:
                        out = f"unknown command: '{cmd}'\r\n"
                    conn.sendall((cmd + "\r\n" + out + "(qemu) ").encode())
    srv.close()


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in SCENARIOS:
        sys.exit(f"usage: {sys.argv[0]} {'|'.join(SCENARIOS)}")
    rips, memory, want = SCENARIOS[sys.argv[1]]
    with tempfile.TemporaryDirectory() as d:
        sysmap = os.path.join(d, "System.map")
        with open(sysmap, "w") as f:
            for name, addr in sorted(SYMS.items(), key=lambda kv: kv[1]):
                f.write(f"{addr:016x} T {name}\n")
        mon, verdict = os.path.join(d, "monitor"), os.path.join(d, "livelock")
        stop = threading.Event()
        t = threading.Thread(target=serve, args=(mon, rips, memory, stop), daemon=True)
        t.start()
        # watch returns once it writes a verdict; otherwise stop it after
        # several periods by closing the monitor (as QEMU exiting does).
        w = threading.Thread(target=vw.watch, args=(mon, vw.Symbols(sysmap), verdict), daemon=True)
        w.start()
        w.join(3)
        stop.set()
        w.join(2)
        got = open(verdict).read().strip() if os.path.exists(verdict) else ""
    print(f"{sys.argv[1]}: {got or 'no verdict'}")
    if want:
        return 0 if "copy_page_range+0xe4a" in got and "0xeb" in got else 1
    return 0 if not got else 1


if __name__ == "__main__":
    sys.exit(main())
