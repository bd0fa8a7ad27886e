# SPDX-License-Identifier: GPL-2.0
"""make run: boot the frlock guest, trace timekeeping's frlock with
frlockstat under a gettimeofday load, and draw the one feed the guest
sends both on this terminal and on a live page.

host/frlock-run [knobs] -- COMMAND [ARGS...] (make run CMD='COMMAND
ARGS'): every sequence lock watched while the user's own COMMAND runs in
the guest instead of gtod-load, for as long as it runs; DURATION is then a
cap, at which it is stopped (the report says so). COMMAND is a program on
the host's PATH, carried into the guest with the shared libraries the
host's dynamic loader maps for it (carry.py), so the guest runs the
host's own binary; or a path under the repository, which the guest sees
at /opt/frlock. It runs as an argument vector, never through a shell on
the host (CMD is split into words as a shell would, with no expansion).
Its command line and exit status are in the feed, its output's last 64 KiB
in workload-output.txt; the terminal's last tables and the report show
them. THREADS, VIA and WRITERS are gtod-load's and do not apply. A COMMAND
not found, or needing a library the host cannot resolve: one line, exit
2, nothing booted.

The Makefile's run target passes its knobs here; an empty value means the
default. Every knob is checked before anything is built or booted (bounds
in guest-rootfs/knobs.sh, read by knobs.py): a bad one is one line and
the usage, exit status 2; --check stops there.

Then kernel/build (cached), host/mkrootfs, make -C bpf, and run-guest
with guest-rootfs/frlock-watch as the job. The guest's frlockstat -j -c
and gtod-load -j lines come through one virtio-serial port into
results/<YYYYmmdd-HHMMSS>/feed.ndjson, which dashboards/server --terminal
follows: it draws each interval on this terminal (kept as output.txt) and
serves the same view to the page. The server ends by itself after the
guest's feed_end: it prints the whole run's tables and writes report.html
from the same snapshot. When the guest has exited, make run tells it so
(SIGUSR1) and waits for it: a guest that died wrote no feed_end, and the
server reads the file to its end and says, on the terminal and in the
report alike, "the feed ended without feed_end: the run is incomplete".
The console log is console.log there. Until the run has ended
well, the folder holds a file INCOMPLETE that says why it is not. Exit
status: the guest job's, or run-guest's (122 livelock, 123 panic, 124
timeout, 125 QEMU failure), 2 on bad usage or a bad knob, 3 when the
user's COMMAND exited non-zero (the run itself is complete), 130 on Ctrl-C
(QEMU is stopped with it).

PROMETHEUS=1 also starts Debian's prometheus on the host's loopback for
the run (dashboards/prometheus/local-prometheus), scraping the guest's
node_exporter every second through a forward on 127.0.0.1.

FRLOCK_KERNEL=DIR boots that kernel/build directory instead of building
or reusing the frlock kernel of the current series.
"""

import argparse
import os
import json
import select
import shlex
import signal
import subprocess
import sys
import time

from . import TOP, carry, knobs

PROG = "make run"
KNOBS = ("duration", "threads", "via", "writers", "interval", "smp", "mem", "accel",
         "prometheus", "self_cost", "walk")
DEFAULTS = {"duration": "20", "threads": "2", "via": "syscall", "writers": "200",
            "interval": "1", "smp": "2", "mem": "2048", "accel": "auto", "prometheus": "0", "self_cost": "0",
            "walk": "0"}
PROM = os.path.join(TOP, "dashboards", "prometheus", "local-prometheus")
INCOMPLETE = 3          # dashboards/server: the feed ended without feed_end
WORKLOAD_FAILED = 3     # frlock-watch, and so make run: the user's COMMAND failed
SERVER_END_S = 120      # for the server to read the rest of the feed and end
SERVER_START_S = 10     # for the server to listen and say its URL


def parser():
    p = argparse.ArgumentParser(
        prog="host/frlock-run", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true",
                   help="check the knobs, then exit: 0 if they are good")
    p.add_argument("--cmd", metavar="'COMMAND ARGS'", default="",
                   help="make run's CMD: the workload as one string, split into words as a "
                   "shell would (quotes kept, nothing expanded), never run by one")
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS...]",
                   help="the user's workload, run in the guest instead of gtod-load")
    for name, metavar, what in (
            ("duration", "S", "seconds of load"), ("threads", "N", "gtod-load's threads"),
            ("via", "syscall|vdso", "how gtod-load reads the clock"),
            ("writers", "W", "adjtimex writes per second"),
            ("interval", "S", "frlockstat's interval"), ("smp", "N", "guest vCPUs"),
            ("mem", "MB", "guest memory"), ("accel", "auto|kvm|tcg", "QEMU's accelerator"),
            ("prometheus", "0|1", "1: also a local Prometheus for the run"),
            ("self_cost", "0|1", "1: frlockstat -S, which reports its own cost (and turns "
             "the kernel's BPF statistics on, which costs each program run)"),
            ("walk", "0|1", "1: frlockstat -W, the path walks that fell back to ref-walk, "
             "per lock (its probes cost about 1,400 instructions a path lookup)")):
        p.add_argument("--" + name.replace("_", "-"), dest=name, metavar=metavar, default="",
                       help="%s (default %s; empty: the default)" % (what, DEFAULTS[name]))
    return p


def parse(argv):
    """The knobs, checked ({name: value}, --check given); bad usage or a
    bad knob: one line and the usage on stderr, exit 2 (SystemExit)."""
    p = parser()
    a = p.parse_args(argv)
    k = {n: getattr(a, n) or DEFAULTS[n] for n in KNOBS}
    for name, label in (("duration", "DURATION"), ("threads", "THREADS"),
                        ("writers", "WRITERS"), ("smp", "SMP"), ("mem", "MEM")):
        why = knobs.check(name, k[name], label)
        if why:
            p.error(why)
    why = knobs.check("interval", k["interval"], "INTERVAL", int(k["duration"]))
    if why:
        p.error(why)
    for name, allowed in (("via", ("syscall", "vdso")), ("accel", ("auto", "kvm", "tcg")),
                          ("prometheus", ("0", "1")), ("self_cost", ("0", "1")),
                          ("walk", ("0", "1"))):
        if k[name] not in allowed:
            p.error("%s wants %s, not '%s'" % (name.upper(), " or ".join(
                ", ".join(allowed).rsplit(", ", 1)), k[name]))
    kernel = os.environ.get("FRLOCK_KERNEL")
    if kernel and not (os.path.isfile(os.path.join(kernel, "bzImage")) and
                       os.path.isfile(os.path.join(kernel, "vmlinux"))):
        p.error("FRLOCK_KERNEL wants a kernel/build directory, not '%s'" % kernel)
    argv = a.command[1:] if a.command[:1] == ["--"] else a.command
    if a.cmd:
        if argv:
            p.error("give the workload either as CMD (--cmd) or after '--', not both")
        try:
            argv = shlex.split(a.cmd)
        except ValueError as e:
            p.error("CMD: %s" % e)
    # Found (and its libraries resolved) after --check, once make deps has
    # installed what the README's examples run.
    k["argv"] = argv
    return k, a.check


def say(msg, err=False):
    print("%s: %s" % (PROG, msg), file=sys.stderr if err else sys.stdout, flush=True)


class Run:
    def __init__(self, k):
        self.k = k
        self.results = None
        self.server = None
        self.prom_dir = None
        self.start = time.monotonic()

    def rel(self, path):
        return os.path.relpath(path, TOP)

    def incomplete(self, why):
        if self.results:
            with open(os.path.join(self.results, "INCOMPLETE"), "w") as f:
                f.write(why + "\n")

    def build(self):
        kernel = os.environ.get("FRLOCK_KERNEL")
        if kernel:
            return os.path.abspath(kernel)
        p = subprocess.run([os.path.join(TOP, "kernel/build"), "--variant", "frlock"],
                           stdout=subprocess.PIPE, text=True)
        if p.returncode:
            raise SystemExit(say("kernel/build failed", True) or 1)
        kernel = p.stdout.strip()
        if subprocess.run([os.path.join(TOP, "host/mkrootfs"), "--uncompressed"],
                          stdout=subprocess.DEVNULL).returncode:
            raise SystemExit(say("host/mkrootfs failed", True) or 1)
        if subprocess.run(["make", "-s", "-C", os.path.join(TOP, "bpf"), "KERNEL=" + kernel],
                          stdout=subprocess.DEVNULL).returncode:
            raise SystemExit(say("building frlockstat (make -C bpf) failed", True) or 1)
        return kernel

    def folder(self):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        d, n = os.path.join(TOP, "results", stamp), 1
        while os.path.exists(d):
            n += 1
            d = os.path.join(TOP, "results", "%s-%d" % (stamp, n))
        os.makedirs(d)
        self.results = d
        self.incomplete("the run has not ended (started %s)" % time.strftime("%Y-%m-%d %H:%M:%S"))

    def main(self):
        k = self.k
        kernel = self.build()
        self.folder()
        res = self.results
        work = k["workload"]
        if work:
            say("booting the frlock guest (%s vCPUs) to run %s under frlockstat, for at most "
                "%s s; results in %s/" % (k["smp"], " ".join(shlex.quote(w) for w in work[0]),
                                         k["duration"], self.rel(res)))
        else:
            say("booting the frlock guest (%s vCPUs) for a %s s load under frlockstat; results "
                "in %s/" % (k["smp"], k["duration"], self.rel(res)))
        feed, console = os.path.join(res, "feed.ndjson"), os.path.join(res, "console.log")
        open(feed, "w").close()
        with open(os.path.join(res, "run.txt"), "w") as f:
            f.write("date: %s\nkernel: %s\nsettings: %s\n" % (
                time.strftime("%Y-%m-%d %H:%M:%S %z"), kernel,
                " ".join("%s=%s" % (n, k[n]) for n in KNOBS)))
            if work:
                f.write("command: %s\ncarried: %s\n" % (
                    " ".join(shlex.quote(w) for w in work[0]), " ".join(work[1]) or "nothing"))
        # The server writes the page's URL into a pipe once it listens:
        # read with a deadline, no polling.
        url_r, url_w = os.pipe()
        tee = subprocess.Popen(["tee", os.path.join(res, "output.txt")], stdin=subprocess.PIPE)
        self.server = subprocess.Popen(
            [os.path.join(TOP, "dashboards/server"), "--terminal", "--url-file",
             "/dev/fd/%d" % url_w, "--console-log", console, "--interval", k["interval"],
             "--report", os.path.join(res, "report.html"), feed],
            stdout=tee.stdin, stderr=open(os.path.join(res, "dashboard.log"), "w"),
            pass_fds=(url_w,))
        tee.stdin.close()
        os.close(url_w)
        url = ""
        if select.select([url_r], [], [], SERVER_START_S)[0]:
            url = os.read(url_r, 4096).decode(errors="replace").strip()
        os.close(url_r)
        if url:
            with open(os.path.join(res, "dashboard.url"), "w") as f:
                f.write(url + "\n")
            say("live dashboard at " + url)
        else:
            say("the dashboard server did not start; see %s/dashboard.log" % res, True)
        # Under TCG the guest kernel finds the TSC unstable and picks hpet,
        # which the vDSO cannot read: its gettimeofday would fall back to
        # the syscall.
        extra = ["--append", "tsc=reliable"] if k["via"] == "vdso" else []
        watch_prom = ""
        if k["prometheus"] == "1":
            extra += self.prometheus()
            watch_prom = " -P 9100" if self.prom_dir else ""
        watch = "/opt/frlock/guest-rootfs/frlock-watch -d %s -i %s%s%s%s" % (
            k["duration"], k["interval"], watch_prom, " -S" if k["self_cost"] == "1" else "",
            " -W" if k["walk"] == "1" else "")
        if work:
            argv, files = work
            for f in files:
                extra += ["--carry", f]
            extra += ["--port", "output=" + os.path.join(res, "workload-output.txt")]
            # The guest's shell parses this line once: each word quoted.
            watch += " --argv-json %s -- %s" % (
                shlex.quote(json.dumps(argv)), " ".join(shlex.quote(w) for w in argv))
        else:
            watch += " -t %s --via %s -w %s" % (k["threads"], k["via"], k["writers"])
        rc = subprocess.run(
            [os.path.join(TOP, "host/run-guest"), "--kernel", kernel, "--smp", k["smp"],
             "--mem", k["mem"], "--accel", k["accel"], "--timeout",
             str(int(k["duration"]) + 300), "--log", console, "--port", "feed=" + feed] +
            extra + ["--exec", watch]).returncode
        self.stop_prometheus()
        # The guest has exited: all it wrote is in the feed. The server ends
        # by itself at feed_end; told the writer is gone, it reads the file
        # to its end first, so a guest that died before feed_end loses no
        # line either.
        served = self.finish_server()
        tee.wait()
        report = os.path.join(res, "report.html")
        if served in (0, INCOMPLETE) and os.path.exists(report):
            say("report (opens from the file): %s/report.html" % res)
        else:
            say("the dashboard server failed (exit status %s); see %s/dashboard.log"
                % (served, res), True)
        workload_failed = work and rc == WORKLOAD_FAILED and served == 0
        if rc and not workload_failed:
            self.incomplete("the guest job failed (exit status %d)" % rc)
        elif served == INCOMPLETE:
            self.incomplete("the feed ended without feed_end")
        else:
            os.remove(os.path.join(res, "INCOMPLETE"))
        say("raw results in %s/ (%s), %d s in all" % (res, " ".join(sorted(os.listdir(res))),
                                                      time.monotonic() - self.start))
        if workload_failed:
            say("the workload failed (it exited non-zero: see the report); the run's results "
                "are complete", True)
        elif rc:
            say("the guest job failed (exit status %d); the results are marked INCOMPLETE" % rc,
                True)
        elif served == INCOMPLETE:
            say("the guest job ended well but its feed has no feed_end; the results are "
                "marked INCOMPLETE", True)
        return rc

    def prometheus(self):
        """node_exporter in the guest on 9100, forwarded to a free port on
        the host's loopback, which the host's Prometheus scrapes."""
        port = subprocess.run([PROM, "free-port"], stdout=subprocess.PIPE,
                              text=True).stdout.strip()
        d = os.path.join(self.results, "prometheus")
        p = subprocess.run([PROM, "start", "--dir", d, "--target", "127.0.0.1:" + port,
                            "--interval", "1"], stdout=subprocess.PIPE, text=True)
        if p.returncode:
            say("PROMETHEUS=1: local-prometheus failed (above); going on without it", True)
            return []
        self.prom_dir = d
        url = p.stdout.strip()
        say("Prometheus at %s (console: %sconsoles/frlock.html), scraping the guest's exporter "
            "at 127.0.0.1:%s" % (url, url, port))
        return ["--hostfwd", port + ":9100"]

    def stop_prometheus(self):
        if self.prom_dir:
            subprocess.run([PROM, "stop", "--dir", self.prom_dir, "--keep"])
            say("Prometheus stopped; its data is in %s/ (to look again: dashboards/prometheus/"
                "local-prometheus start --dir %s --target 127.0.0.1:9)"
                % (self.rel(self.prom_dir), self.rel(self.prom_dir)))
            self.prom_dir = None

    def finish_server(self):
        """Tell the server the feed's writer is gone and wait for it to
        end: its exit status (None if it had to be stopped)."""
        srv = self.server
        if not srv:
            return None
        if srv.poll() is None:
            srv.send_signal(signal.SIGUSR1)
        try:
            rc = srv.wait(SERVER_END_S)
        except subprocess.TimeoutExpired:
            say("the dashboard server did not end within %d s of the guest; stopping it"
                % SERVER_END_S, True)
            self.stop_server()
            return None
        self.server = None
        return rc

    def stop_server(self):
        if self.server and self.server.poll() is None:
            self.server.terminate()
            try:
                self.server.wait(10)
            except subprocess.TimeoutExpired:
                self.server.kill()
        self.server = None


def main(argv):
    k, check = parse(argv)
    if check:
        return 0
    k["workload"] = None
    if k["argv"]:
        try:
            k["workload"] = carry.plan(k["argv"])
        except carry.Refused as e:
            # Not a usage error: the line alone, and nothing booted.
            say(str(e), True)
            return 2
    r = Run(k)

    def interrupted(signum, frame):
        # Ctrl-C reaches the whole foreground group: run-guest stops QEMU,
        # and what the run left is marked incomplete.
        for s in (signal.SIGINT, signal.SIGTERM):
            signal.signal(s, signal.SIG_IGN)
        name = signal.Signals(signum).name
        r.stop_prometheus()
        r.stop_server()
        if r.results:
            r.incomplete("interrupted by %s at %s" % (name, time.strftime("%Y-%m-%d %H:%M:%S")))
            say("interrupted; the partial results in %s/ are marked INCOMPLETE"
                % r.rel(r.results), True)
        else:
            say("interrupted", True)
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        return r.main()
    finally:
        r.stop_prometheus()
        r.stop_server()
