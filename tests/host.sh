# Host checks of the two series and of kernel/build. Sourced by tests/run.

build=$top/kernel/build
# The seqcount series, then the frlock series on top of it: in the order
# git am applies them.
mapfile -t seqcount_patches < <(ls "$top"/patches/seqcount/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-')
mapfile -t frlock_patches < <(ls "$top"/patches/frlock/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-')
series_patches=("${seqcount_patches[@]}" "${frlock_patches[@]}")

# --- The series as text -----------------------------------------------------

cover_complete() {
	local cover=$top/patches/$1/0000-cover-letter.patch
	! grep -n '\*\*\* \(SUBJECT\|BLURB\) HERE \*\*\*' "$cover" &&
		grep -q '^base-commit: [0-9a-f]\{40\}$' "$cover"
}
check "seqcount series: the cover letter has a subject, a text and a base-commit" cover_complete seqcount
check "frlock series: the cover letter has a subject, a text and a base-commit" cover_complete frlock

signed_off() {
	local p rc=0
	for p in "${series_patches[@]}"; do
		grep -q '^Signed-off-by: .* <.*@.*>$' "$p" || { echo "no Signed-off-by: $p"; rc=1; }
	done
	return $rc
}
check "every patch of both series carries Signed-off-by" signed_off

# --- The series against the installed linux-source ------------------------

src=$("$build" --source --quiet 2>"$logs/source.err") ||
	{ cat "$logs/source.err"; src=; }

base_matches() {
	local s want have
	have=$(git -C "$src" rev-parse base)
	for s in seqcount frlock; do
		want=$(sed -n 's/^base-commit: //p' "$top/patches/$s/0000-cover-letter.patch")
		echo "$s series base $want, installed linux-source $have"
		[ "$want" = "$have" ] || return 1
	done
}

# The frlock series names the seqcount series as its prerequisite, patch by
# patch, as git format-patch --base computes it on a tree with both applied.
prerequisites_match() {
	local want have
	want=$(sed -n 's/^prerequisite-patch-id: //p' "$top/patches/frlock/0000-cover-letter.patch")
	have=$(git -C "$applied" format-patch --base=base --stdout "HEAD~${#frlock_patches[@]}..HEAD" |
		sed -n 's/^prerequisite-patch-id: //p' | awk '!seen[$0]++')
	echo "frlock cover letter: $(echo "$want" | wc -w) prerequisites; format-patch on the applied series: $(echo "$have" | wc -w)"
	[ "$(echo "$want" | wc -w)" = ${#seqcount_patches[@]} ] && [ "$want" = "$have" ]
}

# A scratch worktree with the series applied, for the checks below.
applied=$logs/applied
apply_series() {
	git -C "$src" worktree add -q --detach "$applied" base &&
		git -C "$applied" -c user.name=test -c user.email=test@localhost \
			am -q "${series_patches[@]}"
}

# Every checkpatch report must be named, by type, in its commit message.
checkpatch_clean() {
	local p out types t rc=0
	for p in "${series_patches[@]}"; do
		out=$(cd "$applied" && ./scripts/checkpatch.pl --strict --show-types -q \
			"$p" 2>&1 | grep -E '^(ERROR|WARNING|CHECK):')
		types=$(echo "$out" | sed -n 's/^[A-Z]*:\([A-Z_0-9]*\):.*/\1/p' | sort -u)
		for t in $types; do
			# Not grep -q: with pipefail, sed killed by SIGPIPE when grep
			# stops early would fail the pipeline on a match.
			if ! sed '/^---$/q' "$p" | grep "$t" >/dev/null; then
				echo "$(basename "$p"): $t is not explained in the commit message"
				echo "$out" | grep ":$t:"
				rc=1
			fi
		done
		echo "$out" | grep -q '^ERROR' && { echo "$(basename "$p"): errors"; rc=1; }
	done
	return $rc
}

kernel_doc_clean() {
	local f out
	for f in include/linux/frlock.h include/trace/events/frlock.h \
		 kernel/locking/frlock.c kernel/locking/frlock_kunit.c \
		 kernel/locking/frlock_bench.c include/trace/events/seqcount.h \
		 kernel/locking/seqcount_trace.c include/linux/seqlock.h; do
		out=$("$applied/scripts/kernel-doc" -none "$applied/$f" 2>&1)
		[ -z "$out" ] || { echo "$out"; return 1; }
	done
	# The public API must actually be documented, not merely warning-free.
	[ "$("$applied/scripts/kernel-doc" -rst "$applied/include/linux/frlock.h" |
		grep -c '^\.\. c:\(function\|macro\)::')" -ge 15 ]
}

make_broken_patch() {
	mkdir -p "$logs/broken-series"
	sed -i '/^#include <linux\/frlock.h>$/a #error this patch breaks the build on purpose' \
		"$applied/kernel/locking/frlock.c"
	git -C "$applied" -c user.name=test -c user.email=test@localhost \
		commit -q -a -m "broken: a patch that does not compile" &&
		git -C "$applied" format-patch -q -1 --start-number 99 \
			-o "$logs/broken-series" &&
		mv "$logs"/broken-series/0099-*.patch "$logs/broken-series/0099-broken.patch"
}

if [ -n "$src" ]; then
	check "both series' base-commit is the installed linux-source" base_matches
	check "both series apply with git am to the installed linux-source, seqcount first" apply_series
	check "the frlock series names the seqcount series as its prerequisite (format-patch's patch-ids)" prerequisites_match
	if [ -d "$applied/.git" ] || [ -f "$applied/.git" ]; then
		check "checkpatch --strict: no errors, every report explained" checkpatch_clean
		check "kernel-doc: the frlock API and the seqcount events documented without warnings" kernel_doc_clean
		make_broken_patch >"$logs/broken-patch.log" 2>&1
		git -C "$src" worktree remove --force "$applied" >/dev/null 2>&1
	else
		not_ok "checkpatch and kernel-doc (the series did not apply)"
	fi
else
	not_ok "extracting linux-source (log: $logs/source.err)"
fi

# --- Builds ---------------------------------------------------------------

# The kernels the checks below boot or read: the seqcount series alone
# (6.1's timekeeping: the layout check's reference) and both whole. They
# share one object directory and the compiler cache, so the second is
# incremental on the first, and each is cached by its inputs. make
# test-long builds every prefix too, and the other configurations
# (kernel/coverage).
check "kernel builds with the seqcount series" "$build" --series seqcount
kernel=
build_full() { kernel=$("$build" --series frlock); }
check "kernel builds with both series whole" build_full
kernel=$("$build" --series frlock --quiet 2>/dev/null)

if [ -n "${long:-}" ]; then
	# Every patch must build on its own: every other prefix, in order.
	for n in $(seq 1 $((${#seqcount_patches[@]} - 1))); do
		check "kernel builds with the seqcount series' patches 1-$n" \
			"$build" --series seqcount --patches "$n"
	done
	for n in $(seq 1 $((${#frlock_patches[@]} - 1))); do
		check "kernel builds with the seqcount series and the frlock series' patches 1-$n" \
			"$build" --series frlock --patches "$n"
	done
	# The configurations the kernel's build bots use (kernel/coverage).
	relay < <("$top/kernel/coverage")
	# The series on a weakly ordered architecture: the arm64 kernel that
	# tests/arm64-boot.sh boots.
	check "arm64: the series cross-builds (kernel/build --arch arm64, gcc-aarch64-linux-gnu)" \
		"$build" --arch arm64 --quiet
fi

# tk_core's layout against the seqcount series alone (6.1's timekeeping).
# shellcheck source=tests/layout.sh
. "$top/tests/layout.sh"

# The read fast path against the prefix before the seqcount events.
# shellcheck source=tests/fastpath.sh
. "$top/tests/fastpath.sh"

# No new sparse warning in the files the series touches.
if [ -n "$src" ]; then
	# shellcheck source=tests/sparse.sh
	. "$top/tests/sparse.sh"
else
	not_ok "sparse: no linux-source tree to check"
fi

check "kernel/build --arch arm64: a missing cross compiler is one line with the fix" \
	expect_fail 1 "is missing: run 'make deps'" env CROSS_COMPILE=/nonexistent/aarch64- \
	"$build" --arch arm64

config_has() {
	local c
	for c in CONFIG_FRLOCK_KUNIT_TEST=m CONFIG_FRLOCK_BENCH=m CONFIG_DEBUG_INFO_BTF=y \
		 CONFIG_HIST_TRIGGERS=y CONFIG_BPF_SYSCALL=y CONFIG_KUNIT=y; do
		grep -qxF "$c" "$kernel/config" || { echo "missing $c"; return 1; }
	done
}
check "frlock kernel config has KUnit, BTF, hist triggers and BPF" config_has

# --- Bad input to kernel/build ------------------------------------------------

# Each: one line on stderr, exit 2, nothing built.
check "kernel/build: unknown option is one line with the usage, exit 2" \
	one_line_fault 2 "unknown option '--bogus' (usage: kernel/build " "$build" --bogus
check "kernel/build: unknown variant is one line, exit 2" \
	one_line_fault 2 "unknown variant 'nope'" "$build" --variant nope
check "kernel/build: unknown series is one line, exit 2" \
	one_line_fault 2 "unknown series 'nope'" "$build" --series nope
check "kernel/build: a prefix past the series' end is one line, exit 2" \
	one_line_fault 2 "the seqcount series has only ${#seqcount_patches[@]} patches" \
	"$build" --series seqcount --patches 99
check "kernel/build: unknown config is one line, exit 2" \
	one_line_fault 2 "unknown config 'nope'" "$build" --config nope
check "kernel/build: unknown architecture is one line, exit 2" \
	one_line_fault 2 "unknown architecture 'mips' (want x86_64 or arm64)" "$build" --arch mips
check "kernel/coverage: an unknown configuration is one line, exit 2" \
	one_line_fault 2 "unknown configuration 'nope'" "$top/kernel/coverage" nope

wrong_source() {
	local d=$logs/wrong-source
	mkdir -p "$d/linux-source-5.10"
	printf 'VERSION = 5\nPATCHLEVEL = 10\nSUBLEVEL = 1\n' >"$d/linux-source-5.10/Makefile"
	tar -C "$d" -cJf "$d/linux-source-5.10.tar.xz" linux-source-5.10
	LINUX_SOURCE_TARBALL=$d/linux-source-5.10.tar.xz \
		expect_fail 1 "holds Linux '5.10.1', the series needs 6.1" "$build"
}
check "kernel/build: wrong linux-source version is refused" wrong_source
missing_source() {
	LINUX_SOURCE_TARBALL=/nonexistent.tar.xz \
		expect_fail 1 "apt-get install linux-source-6.1" "$build"
}
check "kernel/build: missing linux-source is reported" missing_source

missing_tool() {
	local bin=$logs/nopahole f
	mkdir -p "$bin"
	for f in /usr/bin/*; do
		[ "${f##*/}" = pahole ] || ln -sf "$f" "$bin/"
	done
	PATH=$bin expect_fail 1 "'pahole' is missing: run 'make deps'" "$build"
}
check "kernel/build: a missing package is named, with the fix" missing_tool
missing_depmod() {
	local bin=$logs/nodepmod f
	mkdir -p "$bin"
	for f in /usr/bin/* /usr/sbin/*; do
		[ "${f##*/}" = depmod ] || ln -sf "$f" "$bin/"
	done
	PATH=$bin expect_fail 1 "'depmod' is missing: run 'make deps'" "$build"
}
check "kernel/build: no depmod (Debian's kmod) is refused before building" missing_depmod

bad_patch() {
	local d=$logs/bad-series
	mkdir -p "$d/seqcount" "$d/frlock"
	cp "${seqcount_patches[@]}" "$d/seqcount/"
	cp "${frlock_patches[@]}" "$d/frlock/"
	cat >"$d/frlock/0099-stale.patch" <<'EOF'
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: test <test@localhost>
Subject: [PATCH] stale: a patch whose context is gone

---
 init/main.c | 2 +-
 1 file changed, 1 insertion(+), 1 deletion(-)

diff --git a/init/main.c b/init/main.c
--- a/init/main.c
+++ b/init/main.c
@@ -1,3 +1,3 @@
-this line is not in init/main.c
+nor is this one
 context
 context
EOF
	FRLOCK_PATCH_DIR=$d expect_fail 1 "does not apply to linux-source" "$build" &&
		grep -o 'log: [^ ]*$' "$logs/expect.err" | tail -1 | cut -d' ' -f2 | xargs test -s
}
check "kernel/build: a patch that no longer applies is named, log kept" bad_patch

# The series plus a patch that breaks the build, made in the scratch tree.
failed_build() {
	[ -s "$logs/broken-series/0099-broken.patch" ] || { echo "no broken patch"; return 1; }
	mkdir -p "$logs/broken-series/seqcount" "$logs/broken-series/frlock"
	cp "${seqcount_patches[@]}" "$logs/broken-series/seqcount/"
	cp "${frlock_patches[@]}" "$logs/broken-series/frlock/"
	mv "$logs/broken-series/0099-broken.patch" "$logs/broken-series/frlock/"
	FRLOCK_PATCH_DIR=$logs/broken-series \
		expect_fail 1 "build failed: .*breaks the build on purpose" "$build" --quiet &&
		grep -o 'log: [^ ]*$' "$logs/expect.err" | tail -1 | cut -d' ' -f2 | xargs grep -q 'on purpose'
}
check "kernel/build: a failed build quotes the error, log kept" failed_build
