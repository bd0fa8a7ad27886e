# SPDX-License-Identifier: GPL-2.0
"""The guest part of make test, in order: the guest jobs on the frlock and
seqcount-series kernels, each followed by the host's judges of what it
left in its results share (the guest collects, the host judges); the
exporter scraped by a real Prometheus; torture, recursion and the checker
kernels; and, in make test-long, the arm64 kernels' KUnit suites and the
i386 kernel's, with frlockstat built for i386 under gettimeofday load.

Run by tests/run (frlock.tests.runner) with one protocol.Run."""

import json
import os
import re
import shutil
import subprocess
import threading
import urllib.request

from frlock import TOP, ktap
from frlock.judges import bpftrace
from frlock.tests.harness import wait_for
from frlock.tests.protocol import kernel as build

HOST = os.path.join(TOP, "host")


def judge(run, name, *args):
    run.part(" ".join(["host/" + name] + [os.path.basename(a.rstrip("/")) for a in args]),
             [os.path.join(HOST, name)] + list(args))


def bpf_tools(run, kernel):
    """bpf/'s tools against the kernel's BTF: before the first guest that
    runs frlockstat (the exact check's)."""
    return run.check("libbpf tools build against the frlock kernel's BTF",
                     ["make", "-C", os.path.join(TOP, "bpf"), "KERNEL=" + kernel])


# The seqcount series without frlock in a guest: its KUnit suite and
# seqcount.sh's workloads, tk_core.seq a seqcount among them.
SEQCOUNT_ALONE = ("cd /opt/frlock/tests/guest && ./seqcount-kunit.sh; "
                  "./seqcount.sh stock-timekeeping 8")

# A 6.12 guest's run-guest options. Single-threaded TCG: under QEMU 7.2's
# multi-threaded TCG, 6.12 took an int3 Oops at a jump live-patched on the
# other vCPU as frlockstat attached, in 3 boots of 3 (none in 2
# single-threaded). slab_nomerge: on this config 6.12 merges the dentry
# cache into kmalloc-192, which Debian's 6.12 does not (HARDENED_USERCOPY
# keeps a cache with a usercopy region apart), and frlockstat would name
# the d_seq locks by the merged cache.
GUEST_612 = ["--tcg-thread", "single", "--append", "slab_nomerge"]


def bpf_selftest(run, base, kernel):
    """The series' selftest (tools/testing/selftests/bpf's test_progs with
    timer_tk_section, kernel/bpf-selftest) for KERNEL: the run-guest
    options that give it to the guest as /opt/add/test_progs, or none after
    a not ok line (nested-reader.sh then says it is missing)."""
    built = []

    def builds(log):
        p = subprocess.run([os.path.join(TOP, "kernel", "bpf-selftest"), "--base", base, "--kernel", kernel],
                           stdout=subprocess.PIPE, stderr=log, text=True, stdin=subprocess.DEVNULL)
        log.write(p.stdout)
        built.extend(["--add", p.stdout.strip()] if p.returncode == 0 else [])
        return p.returncode == 0
    run.check("selftests/bpf's test_progs (timer_tk_section) builds for the %s kernel (kernel/bpf-selftest)"
              % os.path.basename(kernel.rstrip("/")), builds)
    return built


def seqcount_guest(run, name, build_args, build_desc, job_desc, guest_args, timeout, command,
                   selftest_base=None):
    """kernel/build BUILD_ARGS, then guest job NAME on that kernel running
    COMMAND with results in results-NAME: (its exit status, the results
    directory), or (None, None) when no kernel was built (a not ok line
    names the build's log). With SELFTEST_BASE, the guest gets the series'
    BPF selftest built for that base and kernel."""
    err = os.path.join(run.logs, "build-%s.err" % name)
    with open(err, "w") as f:
        k = build(*build_args, err=f)
    if not k:
        run.not_ok("%s (log: %s)" % (build_desc, err))
        return None, None
    if selftest_base:
        guest_args = [*guest_args, *bpf_selftest(run, selftest_base, k)]
    res = os.path.join(run.logs, "results-" + name)
    rc = run.guest_job(name, job_desc, ["--kernel", k, *guest_args, "--timeout", str(timeout),
                                        "--results", res, "--exec", command])
    return rc, res


def frlock_guests(run, kernel):
    logs = run.logs
    # The frlock kernel: events, KUnit, timekeeping under load, hist
    # recipes, frlockstat, and the kernel's time semantics.
    res = os.path.join(logs, "results-frlock-kernel")
    run.guest_job("frlock-kernel", "guest on the frlock kernel ran and exited cleanly",
                  ["--kernel", kernel, "--timeout", "1200", "--results", res, "--exec",
                   "cd /opt/frlock/tests/guest && ./frlock-kernel.sh; ./frlockstat.sh; ./badinput.sh; "
                   "./agreement.sh; ./bpf.sh; ./timekeeping.sh; ./seqcount.sh frlock 8"])
    judge(run, "judge-agreement", os.path.join(res, "agreement"))
    judge(run, "judge-events", os.path.join(res, "events"), "ftrace")
    judge(run, "judge-frlockstat", os.path.join(res, "frlockstat"))
    judge(run, "judge-bpftrace", os.path.join(res, "bpftrace"), "tools", "renames")
    judge(run, "judge-seqcount", os.path.join(res, "seqcount"))
    watch(run, kernel)

    # frlockstat's waits against a writer held a known time (and one that
    # holds only its copy), against the probe's dispatch, measured; and
    # frlockstat -S, its own cost. With tsc=reliable the probes read the
    # TSC: under TCG the HPET's emulated read made a retry's program
    # outlast the 150 us hold, and no reader waited on the copy alone.
    res = os.path.join(logs, "results-waits")
    run.guest_job("waits", "guest for frlockstat's waits and -S ran and exited cleanly",
                  ["--kernel", kernel, "--append", "tsc=reliable", "--timeout", "900", "--results", res, "--exec",
                   "/opt/frlock/tests/guest/waits.sh"])
    judge(run, "judge-waits", os.path.join(res, "waits"))

    # The eight events as a kernel developer's own tools show them: both
    # trace systems' format files, trace-cmd's text and Debian's perf
    # (record, script, stat, trace, lock contention). The guest records;
    # the host reads the text and joins it.
    res = os.path.join(logs, "results-kernel-tools")
    run.guest_job("kernel-tools", "guest for the events' ABI, trace-cmd and perf ran and exited cleanly",
                  ["--kernel", kernel, "--timeout", "900", "--results", res, "--exec",
                   "cd /opt/frlock/tests/guest && ./abi.sh 3; ./perf.sh 3"])
    judge(run, "judge-events", os.path.join(res, "events"), "trace-cmd", "perf")

    # 6.1's own timekeeping with every sequence lock traced: the seqcount
    # series alone. tk_core.seq is a seqcount there, and the tools show it
    # under the same gettimeofday load; the series' own KUnit suite runs,
    # and its verifier patch refuses bpf_timer inside timekeeping's write
    # section.
    rc, res = seqcount_guest(run, "stock-timekeeping", ["--series", "seqcount"],
                             "the seqcount series alone (stock timekeeping, seqcount events) builds",
                             "guest on stock timekeeping with seqcount events ran and exited cleanly",
                             [], 900, SEQCOUNT_ALONE + "; ./nested-reader.sh", selftest_base="6.1")
    if rc is not None:
        judge(run, "judge-seqcount", os.path.join(res, "seqcount"))

    # The seqcount series on 6.12, the newest kernel Debian ships: the same
    # checks, with the same frlockstat binary (CO-RE, built once against
    # the 6.1 frlock kernel) naming rename_lock and the dentries' d_seq.
    rc, res = seqcount_guest(run, "seqcount-6.12", ["--base", "6.12", "--series", "seqcount"],
                             "the seqcount series on 6.12 builds (kernel/build --base 6.12)",
                             "guest on 6.12 with the seqcount series ran and exited cleanly",
                             GUEST_612, 900, SEQCOUNT_ALONE + "; ./nested-reader.sh", selftest_base="6.12")
    if rc is not None:
        judge(run, "judge-seqcount", os.path.join(res, "seqcount"))

    # gettimeofday through the vDSO never reaches the kernel's frlock.
    # Under TCG the vDSO needs tsc=reliable to read the clock itself.
    res = os.path.join(logs, "results-vdso")
    run.guest_job("vdso", "guest for the vDSO checks exited cleanly",
                  ["--kernel", kernel, "--append", "tsc=reliable", "--results", res,
                   "--exec", "/opt/frlock/tests/guest/bpf.sh vdso"])
    judge(run, "judge-bpftrace", os.path.join(res, "bpftrace"), "vdso")

    # Suspend and resume through pm_test, last and in a guest of its own:
    # the 9p share (virtio-9p has no suspend support) is dead after the
    # resume, so the script runs from a copy in /tmp.
    run.guest_job("suspend", "guest survived a pm_test suspend and powered off",
                  ["--kernel", kernel, "--timeout", "180", "--exec",
                   "cp /opt/frlock/tests/guest/timekeeping.sh /tmp/ && sh /tmp/timekeeping.sh suspend"])

    # frlockstat refuses a kernel without the frlock tracepoints: the stock
    # kernel, which make test's exact cost check built before this.
    stock = build("--variant", "stock", cached_only=True)
    if stock:
        def refused(log):
            p = subprocess.run([os.path.join(HOST, "run-guest"), "--kernel", stock, "--exec",
                                "/opt/frlock/bpf/.output/frlockstat 1 1"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", stdin=subprocess.DEVNULL)
            log.write(p.stdout + "exit %d\n" % p.returncode)
            return p.returncode == 3 and "this kernel has no frlock tracepoints" in p.stdout
        run.check("frlockstat on the stock kernel says so and exits 3 (2 is bad usage)", refused)
    else:
        run.not_ok("frlockstat on the stock kernel: the stock kernel was built (the exact "
                   "cost check's build, whose log it named)")


def watch(run, kernel):
    """frlock-watch, make run's guest side, in a guest of its own: its feed
    must hold frlockstat's intervals, which it prints when it gets a vCPU
    from gtod-load's threads; a loaded host gave two in 4 s of load. So it
    runs again, twice as long each time, until the feed holds enough, up
    to bpftrace.WATCH_RUNS times (4, 8 and 16 s), and the last run is
    judged; its watch.runs lists the runs."""
    secs, runs = bpftrace.WATCH_SECONDS, []
    while True:
        res = os.path.join(run.logs, "results-watch-%d" % secs)
        rc = run.guest_job("watch-%d" % secs, "guest for frlock-watch with %d s of load ran and "
                           "exited cleanly" % secs,
                           ["--kernel", kernel, "--timeout", "600", "--results", res, "--exec",
                            "/opt/frlock/tests/guest/bpf.sh watch %d" % secs])
        intervals = len(bpftrace.watch_feed(os.path.join(res, "bpftrace"))[3])
        runs.append("%d %d\n" % (secs, intervals))
        if rc != 0 or intervals >= bpftrace.WATCH_INTERVALS or len(runs) == bpftrace.WATCH_RUNS:
            break
        print("# watch: %d of frlockstat's intervals in %d s of load, want %d: again, %d s"
              % (intervals, secs, bpftrace.WATCH_INTERVALS, 2 * secs), flush=True)
        secs *= 2
    os.makedirs(os.path.join(res, "bpftrace"), exist_ok=True)
    with open(os.path.join(res, "bpftrace", "watch.runs"), "w") as f:
        f.writelines(runs)
    judge(run, "judge-bpftrace", os.path.join(res, "bpftrace"), "watch")


def lp(*args, **kw):
    return subprocess.run([os.path.join(TOP, "dashboards", "prometheus", "local-prometheus")] + list(args),
                          stdin=subprocess.DEVNULL, text=True, **kw)


def scrape(run, kernel):
    """The exporter end to end: a guest under gettimeofday load serves
    frlockstat's textfile through node_exporter on a loopback-only
    forward, Debian's prometheus on the host scrapes it every second, and
    what it scraped must agree with frlockstat's own figures."""
    d = os.path.join(run.logs, "scrape")
    os.makedirs(d, exist_ok=True)
    port = lp("free-port", stdout=subprocess.PIPE).stdout.strip()
    with open(os.path.join(d, "start.err"), "w") as err:
        started = lp("start", "--dir", os.path.join(d, "prometheus"), "--target", "127.0.0.1:" + port,
                     "--interval", "1", stdout=subprocess.PIPE, stderr=err)
    if started.returncode != 0:
        with open(os.path.join(d, "start.err")) as f:
            run.not_ok("prometheus started on the host: " + f.read().strip())
        return
    url = started.stdout.strip()
    run.ok("prometheus started on the host: %s, scraping 127.0.0.1:%s" % (url, port))

    # The forward must listen on the host's loopback only: watched while
    # the guest runs, judged after it.
    listen = {"seen": None}

    def listening():
        listen["seen"] = subprocess.run(["ss", "-Hltn", "sport = :" + port], stdout=subprocess.PIPE,
                                        text=True).stdout.strip()
        return bool(listen["seen"])
    watcher = threading.Thread(target=wait_for, args=(120, listening), daemon=True)
    watcher.start()
    run.guest_job("scrape", "guest with the exporter ran under load and exited cleanly",
                  ["--kernel", kernel, "--timeout", "600", "--hostfwd", port + ":9100",
                   "--results", os.path.join(d, "guest"), "--exec", "/opt/frlock/tests/guest/exporter.sh 45"])
    watcher.join()
    seen = listen["seen"] or ""
    local = [line.split()[3] for line in seen.splitlines() if len(line.split()) > 3]

    def loopback_only(log):
        log.write(seen + "\n")
        return bool(local) and all(a.startswith("127.0.0.1:") for a in local)
    run.check("the guest's exporter port was forwarded on 127.0.0.1 only (%s)"
              % (seen.splitlines() or ["not listening"])[-1], loopback_only)

    judge(run, "judge-scrape", url, os.path.join(d, "guest", "frlockstat.ndjson"), "30")

    # The console template, with this run's data, in headless Chromium: a
    # row for the lock, with a write rate above zero.
    page = "%sconsoles/frlock.html?instance=127.0.0.1:%s" % (url, port)
    png = os.path.join(d, "console.png")

    def console_renders(log):
        shot = subprocess.run(["/usr/bin/python3", os.path.join(TOP, "dashboards", "tests", "browser.py"),
                               page, "--ready", "#frlock-locks", "--png", png, "--timeout", "60"],
                              stdout=subprocess.PIPE, stderr=log, text=True, stdin=subprocess.DEVNULL)
        log.write(shot.stdout)
        if shot.returncode != 0:
            return False
        errors = json.loads(shot.stdout)["errors"]
        log.write("console errors: %s\n" % errors)
        html = urllib.request.urlopen(page, timeout=10).read().decode()
        with open(os.path.join(d, "console.html"), "w") as f:
            f.write(html)
        rates = re.findall(r'class="frlock-writes">([0-9.]+)', html)
        log.write("write rates: %s\n" % rates)
        return not errors and any(re.match(r"[1-9][0-9]*\.[0-9]", r) for r in rates)
    run.check("the console template shows the run in Chromium, with no console errors (screenshot: %s)" % png,
              console_renders)

    def stopped(log):
        p = lp("stop", "--dir", os.path.join(d, "prometheus"), stdout=log, stderr=subprocess.STDOUT)
        return p.returncode == 0 and not os.path.exists(os.path.join(d, "prometheus"))
    run.check("prometheus stopped and its folder removed", stopped)


# A KCSAN report is a block from "BUG: KCSAN:" to a line of '='.
SERIES = re.compile(r"frlock|timekeep|tk_core|ktime_|timekeeper")
REPORT = re.compile(r"WARNING:|BUG:|INFO: |turning off the locking correctness validator|Call Trace:")


def kcsan_reports(lines):
    out, blk = [], None
    for line in lines:
        if "BUG: KCSAN:" in line:
            blk = line
        elif blk is not None and re.match(r"^\[[ 0-9.]*\] =+$", line):
            out.append(blk)
            blk = None
        elif blk is not None:
            blk += " | " + line
    return out + ([blk] if blk is not None else [])


def scan_console(variant, path, log):
    """The checker's reports on the console, judged: none about the series
    or timekeeping, no WARN or BUG at all."""
    with open(path, errors="replace") as f:
        lines = [line.rstrip("\r\n") for line in f]
    text = "\n".join(lines)
    if variant == "lockdep" and "Lock dependency validator" not in text:
        log.write("lockdep did not start: not a lockdep kernel?\n")
        return False
    if variant == "kcsan":
        if "kcsan: enabled" not in text:
            log.write("KCSAN did not start: not a KCSAN kernel?\n")
            return False
        races = kcsan_reports(lines)
        for r in races:
            if not SERIES.search(r):
                log.write("other race: %s\n" % r[:200])
        ours = [r for r in races if SERIES.search(r)]
        if ours:
            log.write("\n".join(ours) + "\nKCSAN reported a race involving frlock or timekeeping\n")
            return False
    bad = [i for i, line in enumerate(lines) if REPORT.search(line) and "BUG: KCSAN:" not in line]
    for i in bad[:3]:
        log.write("\n".join(lines[i:i + 13]) + "\n--\n")
    return not bad


def checkers(run, kernel, long_s):
    # Torture and recursion safety on the frlock kernel: 10 s of stress in
    # make test. The fallback test (frlock_bench test=nested) comes last:
    # it makes the kernel warn, on purpose.
    torture_s = long_s or 10
    run.guest_job("torture", "guest for torture and recursion exited cleanly",
                  ["--kernel", kernel, *bpf_selftest(run, "6.1", kernel), "--timeout", str(torture_s + 300), "--exec",
                   "cd /opt/frlock/tests/guest && ./torture.sh %d; ./recursion.sh 10; "
                   "./nested-reader.sh; ./nested-fallback.sh 3000" % (torture_s * 1000)])
    # The checker kernels under every event with a BPF program on each,
    # gettimeofday load and a rename storm (checker-load.sh).
    for variant in ("lockdep", "kcsan"):
        if long_s:
            err = os.path.join(run.logs, "build-%s.err" % variant)
            with open(err, "w") as f:
                ck = build("--variant", variant, err=f)
            if not ck:
                run.not_ok("%s kernel builds (log: %s)" % (variant, err))
                continue
        else:
            ck = build("--variant", variant, cached_only=True)
            if not ck:
                run.skip("%s kernel checks (not built: make kernel-%s, or make test-long)" % (variant, variant))
                continue
        run.prefix = "%s kernel: " % variant
        rc = run.guest_job(variant, "guest exited cleanly",
                           ["-v", "--kernel", ck, "--timeout", "1200", "--exec",
                            "cd /opt/frlock/tests/guest && ./checker-load.sh 10"])
        console = run.console_of(variant)
        if rc != 0:
            print("# %s console log %s" % (run.prefix, console or "not named"), flush=True)
        elif not console or not os.access(console, os.R_OK):
            run.not_ok("console log kept (see %s/guest-%s.err)" % (run.logs, variant))
        else:
            kept = os.path.join(run.logs, "console-%s.log" % variant)
            shutil.copyfile(console, kept)
            run.check("console has no %s report about frlock or timekeeping, no WARN or BUG" % variant,
                      lambda log: scan_console(variant, kept, log))
        run.prefix = ""


def preempt_rt(run):
    """make test-long: the seqcount series on a 6.12 PREEMPT_RT kernel with
    lockdep, where readers of lock-associated seqcounts wait by taking the
    writer's lock (the review's D9: the read_wait event fires before): the
    KUnit suite, and the workloads with every seqcount event on (ftrace's
    hist triggers and frlockstat, a rename storm among them), judged as on
    the other kernels; then the console: lockdep ran and reported nothing,
    no WARN or BUG."""
    run.prefix = "PREEMPT_RT kernel: "
    # As the 6.12 guest (frlock_guests); -v: the console log's name.
    rc, res = seqcount_guest(run, "rt", ["--base", "6.12", "--series", "seqcount", "--config", "rt"],
                             "builds, with lockdep (kernel/build --base 6.12 --config rt)",
                             "guest exited cleanly", ["-v", *GUEST_612], 1500, SEQCOUNT_ALONE)
    if rc is None:
        run.prefix = ""
        return
    if rc == 0:
        judge(run, "judge-seqcount", os.path.join(res, "seqcount"))
    console = run.console_of("rt")
    if console and os.access(console, os.R_OK):
        kept = os.path.join(run.logs, "console-rt.log")
        shutil.copyfile(console, kept)
        run.check("console has no lockdep report about the series or timekeeping, no WARN or BUG",
                  lambda log: scan_console("lockdep", kept, log))
    else:
        run.not_ok("console log kept (see %s/guest-rt.err)" % run.logs)
    run.prefix = ""


def arm64(run):
    """make test-long: the arm64 kernels, built by GCC and by clang
    (LLVM=1), boot in qemu-system-aarch64 (TCG, 2 vCPUs) and pass the
    frlock and seqcount KUnit suites, built in, on a weakly ordered CPU;
    the seqcount suite's caller checks are the review's N3: under LLVM
    the read events must name the reader, not an out-of-line copy."""
    for label, extra in (("arm64", ()), ("arm64 (clang, LLVM=1)", ("--llvm",))):
        k = build("--arch", "arm64", *extra, cached_only=True) or build("--arch", "arm64", *extra)
        if not k:
            run.not_ok("%s: kernel/build --arch arm64 %s built no kernel" % (label, " ".join(extra)))
            continue
        arm64_boot(run, label, k)


def arm64_boot(run, label, k):
    con = os.path.join(run.logs, re.sub(r"[^a-z0-9]+", "-", label).strip("-") + "-console.log")
    lines = []

    def boots(log):
        if not shutil.which("qemu-system-aarch64"):
            log.write("qemu-system-aarch64 is missing: run 'make deps'\n")
            return False
        # No init: after the built-in KUnit suites the kernel panics, and
        # panic=-1 with -no-reboot ends QEMU.
        with open(con, "w") as c:
            rc = subprocess.run(["timeout", "900", "qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a57",
                                 "-smp", "2", "-m", "512", "-accel", "tcg,thread=multi", "-nographic",
                                 "-no-reboot", "-kernel", os.path.join(k, "Image"),
                                 "-append", "console=ttyAMA0 panic=-1"],
                                stdout=c, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL).returncode
        log.write("qemu exited %d\n" % rc)
        with open(con, errors="replace") as c:
            lines[:] = [re.sub(r"^\[[ 0-9.]*\] ", "", line.rstrip("\r\n")) for line in c]
        log.write("\n".join([x for x in lines if re.search(r"frlock|seqcount|# Totals|^ *(not )?ok ", x)][-30:]) + "\n")
        return True

    if run.check("%s: the kernel boots in qemu-system-aarch64 and runs its KUnit suites" % label, boots):
        run.prefix = label + ": "
        kunit_suites(run, con, lines, ("frlock", "seqcount_trace"))
        run.prefix = ""


def kunit_suites(run, con, lines, names):
    """The built-in KUnit suites NAMES, read from a console's LINES by
    frlock.ktap: per suite, that it ran every case its plan announced and
    closed without failing; then one line per case: ok, not ok, or skip
    with the case's reason (a skipped case is never a pass). The
    seqcount_trace suite's caller checks are the review's N3."""
    suites = ktap.parse(lines)
    for name in names:
        s = ktap.find(suites, name)
        desc = "the %s KUnit suite ran every case it announced and passed" % name
        if s is not None and s.status == "skip":
            run.skip("%s: skipped whole (%s)" % (desc, s.reason or "no reason given"))
            continue

        def complete(log, s=s, name=name):
            if s is None:
                log.write("no '# Subtest: %s' on the console %s\n" % (name, con))
                return False
            log.write("%r\n" % s)
            if s.status is None:
                log.write("no result line closed it: the kernel stopped in it (console: %s)\n" % con)
            return bool(s.plan) and s.plan == len(s.cases) and s.status == "pass"
        run.check(desc if s is None else "%s (%d of %s cases reported)" % (desc, len(s.cases), s.plan),
                  complete)
        if s is not None:
            for c in s.cases:
                what = "KUnit %s: %s" % (name, c.name)
                if c.status == "skip":
                    run.skip("%s (%s)" % (what, c.reason or "skipped; no reason given"))
                elif c.status == "pass":
                    run.ok(what)
                else:
                    run.not_ok("%s (console: %s)" % (what, con))


def i386(run):
    """make test-long: the seeds' second architecture. Hemminger's 2003
    series converted i386's gettimeofday too: the i386 kernel (both
    series, kernel/build --arch i386) boots in qemu-system-i386 (TCG, 2
    vCPUs) with the i386 rootfs (busybox-static:i386, the programs built
    by i686-linux-gnu-gcc); its built-in frlock and seqcount KUnit suites
    run at boot and are read from the console; then frlockstat, built for
    i386 against that kernel's BTF (make -C bpf ARCH=i386), runs
    frlockstat.sh's first runs (tp_btf and raw_tp under gtod-load and
    adjtimex writers), judged as on x86-64 (host/judge-frlockstat
    --modes): tk_core's writes and retries, joined, its busiest writer
    and reader, and -c's site records and who cost whom."""
    run.prefix = "i386: "
    err = os.path.join(run.logs, "build-i386.err")
    with open(err, "w") as f:
        k = build("--arch", "i386", err=f)
    if not k:
        run.not_ok("kernel/build --arch i386 builds (log: %s)" % err)
        run.prefix = ""
        return
    run.check("frlockstat builds for i386 against the i386 kernel's BTF (make -C bpf ARCH=i386)",
              ["make", "-C", os.path.join(TOP, "bpf"), "ARCH=i386", "KERNEL=" + k])
    res = os.path.join(run.logs, "results-i386")
    run.guest_job("i386", "guest booted in qemu-system-i386 ran and exited cleanly",
                  ["--arch", "i386", "--kernel", k, "--mem", "1024", "--timeout", "1500", "--results", res, "--exec",
                   "cd /opt/frlock/tests/guest && ./frlockstat.sh modes /opt/frlock/bpf/.output-i386/frlockstat"])
    con = os.path.join(run.logs, "guest-i386.console")
    try:
        with open(con, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    kunit_suites(run, con, lines, ("frlock", "seqcount_trace"))
    judge(run, "judge-frlockstat", "--modes", os.path.join(res, "frlockstat"))
    run.prefix = ""
