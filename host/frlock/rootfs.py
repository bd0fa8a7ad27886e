# SPDX-License-Identifier: GPL-2.0
"""host/mkrootfs: build the guest's initramfs from host packages
(busybox-static, bpftrace, bpftool and their shared libraries),
guest-rootfs/init and the static programs of guest-rootfs/programs/ (built
by its Makefile), and cache it keyed by all of that.

--arch i386 builds the i386 guest's instead (make test-long boots the
i386 kernel with it): busybox from Debian's busybox-static:i386, which
make deps downloads into I386_DEBS (it cannot be installed beside the
amd64 package), and the programs built by the i386 cross compiler
(gcc-i686-linux-gnu); none of the host's tools, which are x86-64.

Prints the path of the gzip'ed newc cpio on stdout; build progress and
errors go to stderr (a cache hit is silent unless --verbose).
--uncompressed makes a plain cpio instead (3 times larger): under TCG the
guest kernel unpacks it in 3 s instead of 9, so run-guest uses that one.

Exit status: 0 (the path printed), 1 on a failure (one line), 2 for bad
usage, 128+N when killed by signal N (130 on Ctrl-C).
"""

import argparse
import hashlib
import io
import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import tempfile
import time

from . import TOP
from .runner import cache_dir

PROG = "host/mkrootfs"
GUEST = os.path.join(TOP, "guest-rootfs")
PACKAGES = ["busybox-static", "bpftrace", "bpftool", "prometheus-node-exporter", "linux-perf",
            "trace-cmd"]
# Binaries taken from the host, each at the same path in the guest.
# node_exporter serves frlockstat's textfile to the host's Prometheus;
# perf and trace-cmd are a kernel developer's own tools.
BINARIES = ["/usr/bin/bpftrace", "/usr/sbin/bpftool", "/usr/bin/prometheus-node-exporter",
            "/usr/bin/perf", "/usr/bin/trace-cmd"]
KEPT = 4
# The i386 guest's busybox: Debian's busybox-static:i386, downloaded by
# make deps (apt-get download), since busybox-static has no Multi-Arch
# and its i386 package would replace the host's.
I386_DEBS = "/var/cache/frlock"
I386_CC = "i686-linux-gnu-gcc"

# Just enough of /etc for tools that look up users, groups and hosts.
ETC = {
    "passwd": "root:x:0:0:root:/root:/bin/sh\n"
              "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n",
    "group": "root:x:0:\nnogroup:x:65534:\n",
    "shadow": "root::0:0:99999:7:::\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nshadow: files\nhosts: files\n",
    "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
    "hostname": "frlock-guest\n",
    "profile": """export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
PS1='frlock-guest:\\w# '
# A serial console does not know the terminal's size: run-guest passes it.
[ -r /run/frlock/env ] && . /run/frlock/env
if [ -n "${FRLOCK_ROWS:-}" ] && [ -t 0 ]; then
	stty rows "$FRLOCK_ROWS" cols "$FRLOCK_COLS" 2>/dev/null
fi
""",
}


class Fail(Exception):
    pass


def output(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, text=True, **kw).stdout


def libraries(binaries):
    """The shared-library closure, as ldd resolves it (it includes the
    loader): "name => /path (addr)" lines, and the loader's "/path (addr)"."""
    libs = set()
    for line in output(["ldd"] + binaries).splitlines():
        w = line.split()
        if len(w) > 2 and w[1] == "=>" and w[2].startswith("/"):
            libs.add(w[2])
        elif w and w[0].startswith("/") and not w[0].endswith(":"):
            libs.add(w[0])
    return sorted(libs)


def program_sources():
    """Every regular file under guest-rootfs/programs but READMEs and the
    build's output, as "./path" in C order."""
    top = os.path.join(GUEST, "programs")
    found = []
    for d, dirs, names in os.walk(top):
        rel = os.path.relpath(d, top)
        if rel == ".output" or rel.startswith(".output/"):
            continue
        for n in names:
            if not n.endswith(".md") and stat.S_ISREG(os.lstat(os.path.join(d, n)).st_mode):
                found.append(os.path.normpath(os.path.join(rel, n)))
    return sorted(found, key=os.fsencode)


def check_inputs():
    status = dict(ln.split(" ", 1) for ln in output(
        ["dpkg-query", "-W", "-f", "${Package} ${Status}\n"] + PACKAGES,
        stderr=subprocess.DEVNULL).splitlines() if " " in ln)
    for pkg in PACKAGES:
        if not status.get(pkg, "").endswith(" installed"):
            raise Fail("package '%s' is not installed: run 'make deps'" % pkg)
    for tool in ("gcc", "cpio", "gzip", "ldd"):
        if not shutil.which(tool):
            raise Fail("'%s' is missing: run 'make deps'" % tool)
    for f in ["/bin/busybox"] + BINARIES:
        if not os.access(f, os.X_OK):
            raise Fail("%s is missing: run 'make deps'" % f)


def i386_busybox_deb():
    """busybox-static:i386's package under I386_DEBS: the newest name, or
    a Fail that says how to get it."""
    try:
        debs = sorted(n for n in os.listdir(I386_DEBS)
                      if n.startswith("busybox-static_") and n.endswith("_i386.deb"))
    except OSError:
        debs = []
    if not debs:
        raise Fail("no busybox-static:i386 package in %s: run 'make deps'" % I386_DEBS)
    if not shutil.which(I386_CC):
        raise Fail("'%s' is missing: run 'make deps'" % I386_CC)
    for tool in ("cpio", "gzip", "dpkg-deb"):
        if not shutil.which(tool):
            raise Fail("'%s' is missing: run 'make deps'" % tool)
    return os.path.join(I386_DEBS, debs[-1])


def cache_key(suffix, libs, bt_tools, programs, arch="x86_64", deb=None):
    """Everything that goes in: package versions, the size and mtime of
    every host file copied (a library upgrade changes them), our own
    sources and the compiler that builds the programs."""
    h = hashlib.sha256()
    h.update(("format=%s\n" % suffix).encode())
    if arch == "i386":
        h.update(("arch=i386\n").encode())
        host_files = [deb]
        cc = I386_CC
    else:
        h.update(output(["dpkg-query", "-W", "-f", "${Package} ${Version}\n"] + PACKAGES).encode())
        host_files = ["/bin/busybox"] + BINARIES + libs + bt_tools
        cc = "gcc"
    for f in host_files:
        st = os.stat(f)
        h.update(("%s %d %d\n" % (f, st.st_size, int(st.st_mtime))).encode())
    sources = [os.path.join(TOP, "host", "mkrootfs"), os.path.abspath(__file__),
               os.path.join(GUEST, "init")]
    sources += [os.path.join(GUEST, "programs", p) for p in programs]
    for f in sources:
        h.update(("== %s\n" % os.path.relpath(f, TOP)).encode())
        with open(f, "rb") as src:
            h.update(src.read())
    h.update(output([cc, "--version"]).split("\n")[0].encode() + b"\n")
    return h.hexdigest()[:16]


def copy(src, dst, mode=None):
    """cp -L: the file's contents, its permissions less the umask."""
    shutil.copyfile(src, dst)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(dst, mode if mode is not None else stat.S_IMODE(os.stat(src).st_mode) & ~umask)


def newc_entry(name, mode, major, minor):
    """A newc header with no data: written by hand so that /dev/console
    needs no mknod, and so no root. The header (110 bytes) plus the name
    is padded to a multiple of 4."""
    namesize = len(name) + 1
    fields = (0, mode, 0, 0, 1, 0, 0, 0, 0, major, minor, namesize, 0)
    head = ("070701" + "".join("%08X" % v for v in fields) + name + "\0").encode()
    return head + b"\0" * (-(110 + namesize) % 4)


def busybox_from_deb(deb, dest):
    """bin/busybox out of the package DEB (dpkg-deb --fsys-tarfile), to DEST."""
    tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    if tar.returncode:
        raise Fail("cannot read %s (dpkg-deb failed)" % deb)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as t:
        try:
            f = t.extractfile("./bin/busybox")
        except KeyError:
            f = None
        if f is None:
            raise Fail("%s holds no bin/busybox" % deb)
        with open(dest, "wb") as out:
            shutil.copyfileobj(f, out)
    os.chmod(dest, 0o755)


def populate(root, libs, bt_tools, say, arch="x86_64", deb=None):
    # Plain directories, not Debian's merged-/usr symlinks: the kernel's
    # cpio unpacker replaces a symlink /lib with the directory lib/ that the
    # appended modules.cpio.gz brings, which would cut /lib off from /usr/lib.
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin", "lib", "lib64", "etc",
              "root", "dev", "proc", "sys", "tmp", "run", "var/tmp", "mnt", "opt/frlock",
              "opt/add", "results"):
        os.makedirs(os.path.join(root, d), exist_ok=True)
    os.chmod(os.path.join(root, "tmp"), 0o1777)
    os.chmod(os.path.join(root, "var/tmp"), 0o1777)
    if arch == "i386":
        busybox_from_deb(deb, os.path.join(root, "bin/busybox"))
    else:
        copy("/bin/busybox", os.path.join(root, "bin/busybox"))
    # Its applets, as the host's busybox-static lists them (for i386, the
    # same Debian release's: the i386 binary need not run on the host).
    for applet in output(["/bin/busybox", "--list-full"]).split():
        path = os.path.join(root, applet)
        if not os.path.lexists(path):
            os.symlink("/bin/busybox", path)
    if arch != "i386":
        for f in BINARIES + libs + bt_tools:
            os.makedirs(root + os.path.dirname(f), exist_ok=True)
            copy(f, root + f)
    say("compiling guest-rootfs/programs (make -C guest-rootfs/programs%s)"
        % (" CC=" + I386_CC if arch == "i386" else ""))
    if subprocess.run(["make", "-s", "-C", os.path.join(GUEST, "programs"),
                       "O=" + os.path.join(root, "usr/local/bin")]
                      + (["CC=" + I386_CC] if arch == "i386" else []),
                      stdout=sys.stderr.fileno()).returncode:
        raise Fail("compiling guest-rootfs/programs failed")
    copy(os.path.join(GUEST, "init"), os.path.join(root, "init"), 0o755)
    for name, text in ETC.items():
        with open(os.path.join(root, "etc", name), "w") as f:
            f.write(text)
    os.chmod(os.path.join(root, "etc/shadow"), 0o600)
    os.symlink("/proc/self/mounts", os.path.join(root, "etc/mtab"))


def pack(root, dest, compressed):
    """The tree as a newc cpio owned by root, in C order, then /dev/console
    (it must exist before /init runs: the kernel opens it for init's stdio,
    before init can mount devtmpfs)."""
    names = []
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        names += [os.path.join(".", rel, n) if rel != "." else "./" + n for n in dirs + files]
    names.sort(key=os.fsencode)
    with open(dest, "wb") as out:
        gz = subprocess.Popen(["gzip", "-6"], stdin=subprocess.PIPE, stdout=out) \
            if compressed else None
        sink = gz.stdin if gz else out
        cp = subprocess.run(["cpio", "-o", "-H", "newc", "-R", "0:0", "--quiet"], cwd=root,
                            input="\n".join(names).encode() + b"\n", stdout=sink)
        ok = cp.returncode == 0
        try:
            sink.write(newc_entry("dev/console", stat.S_IFCHR | 0o600, 5, 1))
            sink.write(newc_entry("TRAILER!!!", 0, 0, 0))
            sink.flush()
        except OSError:
            ok = False
        if gz:
            gz.stdin.close()
            ok = gz.wait() == 0 and ok
    if not ok:
        raise Fail("packing the cpio failed (disk full?)")


def du(path, *opts):
    return output(["du"] + list(opts) + [path]).split("\t")[0]


def prune(rootfs):
    """Keep the KEPT most recently used entries; drop builds killed midway."""
    now = time.time()
    entries = []
    for n in os.listdir(rootfs):
        p = os.path.join(rootfs, n)
        try:
            st = os.stat(p)
        except OSError:
            continue
        if n.startswith(".tmp.") and now - st.st_mtime > 120 * 60:
            shutil.rmtree(p, ignore_errors=True)
        elif not n.startswith(".") and stat.S_ISDIR(st.st_mode):
            entries.append((st.st_mtime, p))
    for _, p in sorted(entries, reverse=True)[KEPT:]:
        shutil.rmtree(p, ignore_errors=True)


def build(quiet, verbose, force, suffix, arch="x86_64"):
    def say(msg):
        if not quiet:
            print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)

    if arch == "i386":
        deb, libs, bt_tools = i386_busybox_deb(), [], []
    else:
        deb = None
        check_inputs()
        libs = libraries(BINARIES)
        if not libs:
            raise Fail("ldd found no libraries for %s" % " ".join(BINARIES))
        # bpftrace's own tool scripts: small, and handy inside the guest.
        bt_tools = [f for f in output(["dpkg", "-L", "bpftrace"]).splitlines()
                    if f.startswith("/usr/sbin/") and f.endswith(".bt") and f.count("/") == 3]
    key = cache_key(suffix, libs, bt_tools, program_sources(), arch, deb)

    rootfs = os.path.join(cache_dir(), "rootfs")
    outdir = os.path.join(rootfs, key)
    out = os.path.join(outdir, "initramfs." + suffix)
    if not force and os.path.isfile(out):
        os.utime(outdir)  # most recently used: spared by the pruning
        if verbose:
            say("cached rootfs: " + out)
        print(out)
        return 0

    os.makedirs(rootfs, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=".tmp.", dir=rootfs)
    try:
        root = os.path.join(tmp, "root")
        say("building the %sguest rootfs (%s)" % ("i386 " if arch == "i386" else "", key))
        populate(root, libs, bt_tools, say, arch, deb)
        say("packing %s into initramfs.%s" % (du(root, "-sh"), suffix))
        pack(root, os.path.join(tmp, "initramfs." + suffix), suffix == "cpio.gz")
        shutil.rmtree(root)
        # Publish atomically: the entry appears complete or not at all.
        shutil.rmtree(outdir, ignore_errors=True)
        try:
            os.rename(tmp, outdir)
        except OSError:
            if not os.path.isfile(out):     # another build published it first
                raise Fail("could not publish %s" % outdir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    prune(rootfs)
    say("built rootfs %s: %s" % (du(out, "-h"), out))
    print(out)
    return 0


def main(argv):
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    noise = p.add_mutually_exclusive_group()
    noise.add_argument("-q", "--quiet", action="store_true", help="no build progress")
    noise.add_argument("-v", "--verbose", action="store_true", help="say so on a cache hit too")
    p.add_argument("--force", action="store_true", help="build again, cached or not")
    p.add_argument("--uncompressed", action="store_true", help="a plain cpio, not gzip'ed")
    p.add_argument("--arch", default="x86_64", choices=("x86_64", "i386"),
                   help="x86_64 (default), or i386: the i386 guest's (busybox-static:i386 "
                   "and the programs, no host tools)")
    a = p.parse_args(argv)
    quiet, verbose, force = a.quiet, a.verbose, a.force
    suffix = "cpio" if a.uncompressed else "cpio.gz"

    def on_signal(signum, frame):
        raise SystemExit(128 + signum)

    # The half-built entry goes with us.
    for s in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, on_signal)
    try:
        return build(quiet, verbose, force, suffix, a.arch)
    except (Fail, OSError) as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
