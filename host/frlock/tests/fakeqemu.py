#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""A fake QEMU for the runner's tests, and the fake monitor it serves.

The monitor replays scripted vCPU instruction pointers: the livelock seen
in session logs (a vCPU back at one address between int3 traps, memory
there not 0xcc), an idle guest, a legitimate int3, a vCPU that moves on.

As QEMU (QEMU=.../fakeqemu.py, FAKE_QEMU_PLAN=FILE): FILE holds one
behaviour a line, the first one is used and removed, so that a retried
boot takes the next: "ok" (the job prints hello and exits 0), "livelock"
(prints partial, then hangs with a livelocked vCPU on the monitor), "hang"
(an idle guest that never ends), "panic" (a kernel panic on the console),
"args" (the job prints QEMU's arguments and exits 0). FAKE_QEMU_NO_ICOUNT
set: its -help lists no -icount (a QEMU built without it).
Standard library only: run as a script, it imports nothing of the package.
"""

import itertools
import os
import re
import socket
import sys
import threading
import time

SYMS = {"asm_exc_int3": 0xffffffff81600ac0, "exc_int3": 0xffffffff815f0000,
        "amd_e400_idle": 0xffffffff8102a1e0, "copy_page_range": 0xffffffff811c6e30,
        "ktime_get_real_ts64": 0xffffffff81120000, "do_syscall_64": 0xffffffff815e0000,
        "zzz_end": 0xffffffff81700000}
INT3 = SYMS["asm_exc_int3"] + 0x2a
IDLE = SYMS["amd_e400_idle"] + 0x3a
STUCK = SYMS["copy_page_range"] + 0xe4a
BUSY = [SYMS["ktime_get_real_ts64"] + d for d in (0x10, 0x33, 0x51, 0x7a)] + \
       [SYMS["do_syscall_64"] + d for d in (0x4, 0x20)]

# i386 (qemu-system-i386): EIP, 8-digit addresses. Seen on 2026-12-07:
# CPU0 between int3 handling and a static branch in tick_periodic(),
# holding jiffies_lock; CPU1 spinning for it (no int3: not a livelock).
SYMS32 = {"handle_exception": 0xc15cb3d0, "handle_exception_return": 0xc15cb4ce,
          "tick_periodic": 0xc10f5600, "queued_spin_lock_slowpath": 0xc15ca1a0,
          "zzz_end": 0xc1700000}
I386 = {"int3": SYMS32["handle_exception"] + 0x1e, "ret": SYMS32["handle_exception_return"] + 0x5f,
        "stuck": SYMS32["tick_periodic"] + 0x3a, "spin": SYMS32["queued_spin_lock_slowpath"] + 0x3a}

# Per scenario: each vCPU's RIPs, replayed in a cycle; memory bytes; and
# whether the watcher must call it a livelock.
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
    "livelock-i386": ({0: [I386["int3"], I386["ret"], I386["stuck"], I386["stuck"]], 1: [I386["spin"]]},
                      {I386["stuck"]: "e9", I386["spin"]: "f3"}, True),
}


def is_i386(scenario):
    return scenario.endswith("-i386")


def arch(scenario):
    """The scenario's symbols, its registers' prefix and an address's digits."""
    return (SYMS32, "E", 8) if is_i386(scenario) else (SYMS, "R", 16)


def system_map(path, scenario="livelock"):
    syms, _, width = arch(scenario)
    with open(path, "w") as f:
        for name, addr in sorted(syms.items(), key=lambda kv: kv[1]):
            f.write("%0*x T %s\n" % (width, addr, name))


def serve(path, scenario, stop):
    """QEMU's HMP monitor on the unix socket path, until stop is set."""
    rips, memory, _ = SCENARIOS[scenario]
    _, reg, width = arch(scenario)
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
                        out = "".join("\r\nCPU#%d\r\n%sAX=%0*x %sBX=1\r\n%sIP=%0*x %sFL=00000246\r\n"
                                      % (c, reg, width, 0, reg, reg, width, next(cyc), reg)
                                      for c, cyc in cycles.items())
                    elif cmd.startswith("x /1xb "):
                        addr = int(cmd.split()[-1], 16)
                        out = "%0*x: 0x%s\r\n" % (width, addr, memory.get(addr, "90"))
                    else:
                        out = "unknown command: '%s'\r\n" % cmd
                    conn.sendall((cmd + "\r\n" + out + "(qemu) ").encode())
    srv.close()


def qemu(argv):
    if argv == ["--version"]:
        print("QEMU emulator version 7.2.0 (frlock's fake)")
        return 0
    if argv == ["-help"]:
        print("-smp [[cpus=]n]\n" + ("" if os.environ.get("FAKE_QEMU_NO_ICOUNT") else
                                     "-icount [shift=N|auto][,align=on|off][,sleep=on|off]\n"))
        return 0
    with open(os.environ["FAKE_QEMU_PLAN"]) as f:
        plan = f.read().split()
    with open(os.environ["FAKE_QEMU_PLAN"], "w") as f:
        f.write("\n".join(plan[1:]) + "\n")
    what = plan[0] if plan else "ok"
    path = {}
    for opt, val in zip(argv, argv[1:]):
        if opt == "-chardev" and val.startswith("file,"):
            kv = dict(p.split("=", 1) for p in val.split(",")[1:])
            path[kv["id"]] = kv["path"]
    monitor = re.search(r"-monitor unix:([^,]+),", " ".join(argv))

    def write(port, text):
        with open(path[port], "a") as f:
            f.write(text)

    write("status", "booted\n")
    if any(a.startswith("stdio,id=con") for a in argv):
        # No command: the console is QEMU's stdio, the terminal's.
        print("console: hello", flush=True)
        write("status", "exit 0\n")
        return 0
    if what == "args":
        write("stdout", " ".join(argv) + "\n")
        write("status", "exit 0\n")
        return 0
    if what == "ok":
        write("stdout", "hello\n")
        write("status", "exit 0\n")
        return 0
    if what == "panic":
        write("con", "[    1.0] Kernel panic - not syncing: Attempted to kill init!\n")
        return 0
    write("stdout", "partial\n")
    stop = threading.Event()
    if monitor:
        threading.Thread(target=serve, args=(monitor.group(1), "livelock" if what == "livelock"
                                             else "idle", stop), daemon=True).start()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    sys.exit(qemu(sys.argv[1:]))
