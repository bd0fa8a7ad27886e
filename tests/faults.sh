# Faults in the harness, and bad input to its host tools, produced on
# purpose; nothing here boots a guest (host/frlock/tests/guest_runner.py does). Each
# fault must end quickly with one clear line, a non-zero exit and its logs
# kept; each bad input with one line, the usage and exit 2. Sourced by
# tests/run (check, expect_fail, one_line_fault, log_kept, in_group,
# group_left, wait_for, $logs, $top).
#
# kernel/build's faults use a scratch cache and a stand-in linux-source: a
# tarball whose Makefile does in a moment what kernel/build asks of Linux's,
# or stalls, or fills the disk, as FAKE_KBUILD says. The full-disk checks
# mount a small tmpfs, unmounted at once.

faults=$logs/faults
mkdir -p "$faults"

# --- A stand-in linux-source-6.1 ---------------------------------------------

fake_source() {
	local d=$faults/fake-source/linux-source-6.1
	mkdir -p "$d/scripts/kconfig"
	cat >"$d/Makefile" <<'EOF'
# A stand-in for Linux 6.1's Makefile, for tests of kernel/build's faults.
# FAKE_KBUILD: sleep (the compile hangs), fill (it fills the disk),
# install-sleep (installing the modules hangs), nodepmod (modules_install
# as on a machine without depmod: no modules.dep); else every target works.
VERSION = 6
PATCHLEVEL = 1
SUBLEVEL = 99
O ?= .
tinyconfig:
	mkdir -p $(O) && echo CONFIG_FAKE=y >$(O)/.config
olddefconfig:
	@true
bzImage:
	@echo "  CC      fake/compile.o"
	@if [ "$(FAKE_KBUILD)" = sleep ]; then echo "fake: compiling forever"; sleep 600; fi
	@if [ "$(FAKE_KBUILD)" = fill ]; then dd if=/dev/zero of=$(O)/filler bs=1M; fi
	mkdir -p $(O)/arch/x86/boot
	echo bzImage >$(O)/arch/x86/boot/bzImage
	echo vmlinux >$(O)/vmlinux
	echo System.map >$(O)/System.map
modules:
	@true
modules_install:
	@if [ "$(FAKE_KBUILD)" = install-sleep ]; then echo "fake: installing forever"; sleep 600; fi
	mkdir -p $(INSTALL_MOD_PATH)/lib/modules/6.1.99-fake
	@if [ "$(FAKE_KBUILD)" = nodepmod ]; then echo "Warning: 'depmod' not found"; \
	else : >$(INSTALL_MOD_PATH)/lib/modules/6.1.99-fake/modules.dep; fi
EOF
	cat >"$d/scripts/kconfig/merge_config.sh" <<'EOF'
#!/bin/sh
# merge_config.sh -m -O DIR BASE FRAGMENT...: all of them, concatenated.
[ "$1" = -m ] && shift
[ "$1" = -O ] && { dir=$2; shift 2; }
cat "$@" >"$dir/.config.new" && mv "$dir/.config.new" "$dir/.config"
EOF
	chmod +x "$d/scripts/kconfig/merge_config.sh"
	tar -C "$faults/fake-source" -cJf "$faults/fake-source.tar.xz" linux-source-6.1
}
fake_source
fake_tarball=$faults/fake-source.tar.xz

# fake_build CACHE [ARGS...]: kernel/build --variant stock of the stand-in.
fake_build() {
	local cache=$1
	shift
	FRLOCK_CACHE=$cache LINUX_SOURCE_TARBALL=$fake_tarball \
		"$top/kernel/build" --variant stock --quiet "$@"
}
# log_says CACHE TEXT: a build log in CACHE says TEXT.
log_says() { grep -qs -- "$2" "$1"/logs/build-stock-*.log; }
# entries CACHE: kernel entries with .complete, then any without.
entries() {
	local e
	for e in "$1"/kernels/* "$1"/kernels/.tmp.*; do
		[ -d "$e" ] || continue
		if [ -f "$e/.complete" ]; then echo "complete: $e"; else echo "half-written: $e"; fi
	done
}

check "kernel/build: the stand-in linux-source builds (for the fault checks)" \
	fake_build "$faults/cache-ok"

# --- An interrupted build -------------------------------------------------

# interrupted SIGNAL FAKE_KBUILD MARK: start a build that stalls where the
# log says MARK, send SIGNAL to its group; then nothing may be cached, no
# process left, and the next build must go through and be cached.
interrupted() {
	local sig=$1 how=$2 mark=$3 cache=$faults/cache-$2-$1 rc
	FAKE_KBUILD=$how in_group fake_build "$cache" 2>"$faults/int.err"
	if ! wait_for 60 log_says "$cache" "$mark"; then
		echo "the build never reached '$mark'"
		kill -KILL -- -"$grp" 2>/dev/null
		wait "$grp"
		return 1
	fi
	echo "entries while it runs:"
	entries "$cache"
	kill -"$sig" -- -"$grp"
	wait "$grp"
	rc=$?
	echo "exit $rc after SIG$sig; stderr:"
	cat "$faults/int.err"
	wait_for 10 group_gone "$grp" || { echo "left running:"; group_left "$grp"; return 1; }
	[ "$rc" -ne 0 ] || return 1
	case $sig in
	INT) [ "$rc" -eq 130 ] && [ "$(grep -c . "$faults/int.err")" -eq 1 ] &&
		grep -q '^kernel/build: interrupted by SIGINT; nothing was cached$' "$faults/int.err" || return 1 ;;
	esac
	echo "entries after:"
	entries "$cache"
	! entries "$cache" | grep -q '^complete' || { echo "an interrupted build was cached"; return 1; }
	if [ "$sig" = INT ] && entries "$cache" | grep -q half-written; then
		echo "a half-written entry was left"
		return 1
	fi
	fake_build "$cache" --cached-only
	rc=$?
	echo "--cached-only: exit $rc"
	[ "$rc" -eq 3 ] || return 1
	# The log of the interrupted build was kept.
	log_says "$cache" "$mark" || { echo "its log is gone"; return 1; }
	local out
	out=$(fake_build "$cache") || { echo "the next build failed"; return 1; }
	echo "next build: $out"
	[ -f "$out/.complete" ] && [ -s "$out/bzImage" ]
}
check "kernel/build: Ctrl-C during the compile caches nothing, one line (exit 130); the next run builds" \
	interrupted INT sleep 'fake: compiling forever'
check "kernel/build: Ctrl-C while saving the kernel leaves no half-written entry; the next run builds" \
	interrupted INT install-sleep 'fake: installing forever'
check "kernel/build: SIGKILL while saving: the half-written entry is never reused; the next run builds" \
	interrupted KILL install-sleep 'fake: installing forever'

# An entry that lost its .complete (a crash between the copy and the
# mark) is rebuilt, never taken as cached.
half_written() {
	local cache=$faults/cache-ok out again
	out=$(fake_build "$cache") || return 1
	rm -f "$out/.complete"
	: >"$out/bzImage"
	fake_build "$cache" --cached-only && { echo "--cached-only took it"; return 1; }
	again=$(FRLOCK_CACHE=$cache LINUX_SOURCE_TARBALL=$fake_tarball \
		"$top/kernel/build" --variant stock 2>"$faults/half.err") || return 1
	cat "$faults/half.err"
	[ "$again" = "$out" ] && [ -f "$out/.complete" ] && [ -s "$out/bzImage" ] &&
		grep -q 'building the stock kernel' "$faults/half.err"
}
check "kernel/build: an entry without .complete is rebuilt, not reused" half_written

# modules_install without depmod only warns: kernel/build must refuse to
# publish, and an entry cached without modules.dep must be rebuilt.
no_modules_dep() {
	local cache=$faults/cache-nodepmod out
	FAKE_KBUILD=nodepmod FRLOCK_CACHE=$cache one_line_fault 1 \
		"wrote no modules.dep (depmod missing?); nothing was cached; log: " fake_build "$cache" || return 1
	log_kept "depmod' not found" || return 1
	! entries "$cache" | grep -q . || { echo "it left an entry:"; entries "$cache"; return 1; }
	out=$(fake_build "$cache") || return 1
	rm "$out/modules.dep"
	fake_build "$cache" --cached-only && { echo "--cached-only took an entry without modules.dep"; return 1; }
	[ "$(fake_build "$cache")" = "$out" ] && [ -f "$out/modules.dep" ]
}
check "kernel/build: no modules.dep after modules_install: one line, nothing cached; an entry without it is rebuilt" \
	no_modules_dep

# --- A full disk ------------------------------------------------------------

# full_disk SIZE CMD...: CMD with the cache on a tmpfs of SIZE, unmounted
# after. Its one line on stderr must say "disk full", nothing may be
# cached, and the build log it names must be kept (on the full disk it may
# have lost its last lines).
full_disk() (
	local size=$1 m rc
	shift
	m=$(mktemp -d "${TMPDIR:-/tmp}/frlock-full.XXXXXX") || exit 1
	if ! mount -t tmpfs -o "size=$size,mode=0755" frlock-full "$m" 2>"$faults/mount.err"; then
		rmdir "$m"
		echo "SKIP: cannot mount a tmpfs: $(cat "$faults/mount.err")"
		exit 77
	fi
	trap 'umount "$m" && rmdir "$m"' EXIT
	FRLOCK_CACHE=$m one_line_fault 1 "failed: disk full under $m; log: " "$@" || exit 1
	entries "$m"
	! entries "$m" | grep -q . || { echo "it left an entry"; exit 1; }
	ls -d "$m"/src/.extract.* 2>/dev/null && { echo "it left a half-extracted tree"; exit 1; }
	local log
	log=$(grep -o 'log: [^ ]*$' "$logs/expect.line" | cut -d' ' -f2)
	echo "log kept: $log ($(wc -c <"$log") bytes)"
	[ -f "$log" ]
)
# skip_or_check DESC CMD...: check, but a CMD that says SKIP and exits 77
# is a skip.
skip_or_check() {
	local desc=$1 rc log
	shift
	log=$logs/$(echo "$desc" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-80).log
	"$@" >"$log" 2>&1
	rc=$?
	if [ $rc -eq 77 ]; then
		skip "$desc ($(grep -m1 '^SKIP: ' "$log" | cut -c7-))"
	elif [ $rc -eq 0 ]; then
		ok "$desc"
	else
		not_ok "$desc (log: $log)"
		sed 's/^/#   /' "$log" | tail -15
	fi
}
disk_full_compile() {
	FAKE_KBUILD=fill LINUX_SOURCE_TARBALL=$fake_tarball \
		full_disk 16m "$top/kernel/build" --variant stock --quiet
}
skip_or_check "kernel/build: a disk that fills during the compile: 'disk full' in one line, log kept" \
	disk_full_compile
# The real linux-source: 64 MB fill up early in its extraction.
disk_full_extract() {
	local tarball=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
	[ -r "$tarball" ] || { echo "SKIP: no $tarball"; return 77; }
	full_disk 64m "$top/kernel/build" --variant stock --quiet
}
skip_or_check "kernel/build: a disk that fills while extracting linux-source: 'disk full' in one line" \
	disk_full_extract

# --- Bad input to kernel/build ------------------------------------------------

check "kernel/build: --patches 0 is a usage error" \
	expect_fail 2 "kernel/build: --patches wants a number from 1 to 99, not '0'" "$top/kernel/build" --patches 0
check "kernel/build: --patches abc is a usage error" \
	expect_fail 2 "kernel/build: --patches wants a number from 1 to 99, not 'abc'" "$top/kernel/build" --patches abc
check "kernel/build: --variant without a value is a usage error" \
	expect_fail 2 "^usage: kernel/build" "$top/kernel/build" --variant
garbage_source() {
	head -c 4096 /dev/urandom >"$faults/garbage.tar.xz"
	LINUX_SOURCE_TARBALL=$faults/garbage.tar.xz FRLOCK_CACHE=$faults/cache-garbage \
		one_line_fault 1 "holds Linux 'unknown', the series needs 6.1.x" "$top/kernel/build" --quiet
}
check "kernel/build: a garbage linux-source tarball is refused in one line" garbage_source

# run-guest's and make run's bad input, and a missing or unusable KVM:
# host/frlock/tests/test_runner.py and test_knobs.py.
