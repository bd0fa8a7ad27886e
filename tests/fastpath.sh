# Sourced by tests/host.sh after the builds: the seqcount events add no
# instruction to a read that neither waits nor retries. The functions
# inline read_seqbegin()/read_seqretry() (d_lookup, on rename_lock) and
# read_seqcount_begin()/read_seqcount_retry() (the stock timekeeping
# readers, on tk_core.seq). Objects are compiled here, in a worktree and
# object directory of their own, configured as the seqcount kernel is:
# the parent (the base tree), a reference, and the seqcount events' patch.
# With registers masked: allocation may differ.
#
# The reference is the parent with nothing but an empty asm statement on
# the failed-retry edge of do___read_seqcount_retry(), where the patch
# calls the event: GCC 12 hoists a zeroing xor of the timespec conversion
# in ktime_get_real_ts64() and ktime_get_ts64() as soon as that edge holds
# anything, so no retry hook avoids it; the others must match the parent
# itself.

fastpath_compile() {
	# fastpath_compile TREE OBJ OUT: timekeeping.o and dcache.o into OUT.
	make -C "$1" O="$2" -j"$(nproc)" kernel/time/timekeeping.o fs/dcache.o \
		>>"$logs/fastpath-compile.log" 2>&1 ||
		{ echo "compiling failed; log: $logs/fastpath-compile.log"; return 1; }
	mkdir -p "$3" && cp "$2/kernel/time/timekeeping.o" "$2/fs/dcache.o" "$3/"
}

# The objects are kept under the build cache, keyed by everything that went
# into them (the tree, the patch, the config, the compiler, this file): a
# warm make test compares them again without compiling. The worktree and
# object directory (a kernel's worth) go whatever happens.
fp=
fastpath_objects() {
	local series n kernel key rc
	[ -n "$src" ] || { echo "no linux-source tree"; return 1; }
	read -r series n < <("$top/kernel/patch-number" '*-locking-seqlock-Add-tracepoints-*') ||
		{ echo "no seqcount tracepoint patch"; return 1; }
	[ "$series" = seqcount ] && [ "$n" = 1 ] ||
		{ echo "the seqcount events are patch $n of the $series series, not the first"; return 1; }
	kernel=$("$build" --series seqcount --cached-only --quiet) ||
		{ echo "no kernel with the seqcount series"; return 1; }
	key=$( { git -C "$src" rev-parse base; sed -n '/^diff --git /,/^-- $/p' "${seqcount_patches[0]}"
		cat "$kernel/config" "$top/tests/fastpath.sh"; gcc --version | head -1; } | sha256sum | cut -c1-16)
	fp=$cache/checks/fastpath-$key
	if [ -f "$fp/.complete" ]; then
		echo "objects compiled earlier from the same inputs: $fp"
		return 0
	fi
	rm -rf "$fp.tmp"
	fastpath_objects_run "$kernel" "$fp.tmp"
	rc=$?
	git -C "$src" worktree remove --force "$logs/fastpath-tree" >/dev/null 2>&1
	rm -rf "$logs/fastpath-tree" "$logs/fastpath-obj"
	[ $rc -eq 0 ] && touch "$fp.tmp/.complete" && rm -rf "$fp" && mv "$fp.tmp" "$fp"
	return $rc
}

fastpath_objects_run() {
	local kernel=$1 out=$2 tree=$logs/fastpath-tree obj=$logs/fastpath-obj
	git -C "$src" worktree remove --force "$tree" >/dev/null 2>&1
	rm -rf "$tree" "$obj" "$logs/fastpath-compile.log"
	git -C "$src" worktree add -q --detach "$tree" base || return 1
	mkdir -p "$obj"
	cp "$kernel/config" "$obj/.config"
	{ make -C "$tree" O="$obj" olddefconfig && make -C "$tree" O="$obj" -j"$(nproc)" prepare; } \
		>"$logs/fastpath-prepare.log" 2>&1 ||
		{ echo "preparing the tree failed; log: $logs/fastpath-prepare.log"; return 1; }
	fastpath_compile "$tree" "$obj" "$out/parent" || return 1

	local h=$tree/include/linux/seqlock.h
	local stock='	return unlikely(READ_ONCE(s->sequence) != start);'
	[ "$(grep -cxF "$stock" "$h")" = 1 ] ||
		{ echo "the parent's do___read_seqcount_retry() is not the one this check edits"; return 1; }
	python3 - "$h" "$stock" <<'PY' || return 1
import sys
path, stock = sys.argv[1], sys.argv[2]
text = open(path).read()
hook = ("\tif (likely(READ_ONCE(s->sequence) == start))\n\t\treturn 0;\n"
        "\tasm volatile(\"\");\n\treturn 1;")
open(path, "w").write(text.replace(stock, hook))
PY
	fastpath_compile "$tree" "$obj" "$out/reference" || return 1
	git -C "$tree" checkout -q -- include/linux/seqlock.h
	git -C "$tree" -c user.name=test -c user.email=test@localhost \
		am -q "${seqcount_patches[0]}" || { echo "the seqcount events' patch does not apply"; return 1; }
	# The patch changes the config (ARCH_HAS_SEQCOUNT_TRACE_THUNK).
	make -C "$tree" O="$obj" olddefconfig >>"$logs/fastpath-prepare.log" 2>&1 || return 1
	fastpath_compile "$tree" "$obj" "$out/patched"
}
check "seqcount events: the parent, a reference and the patch compile (timekeeping.o, dcache.o)" \
	fastpath_objects

fastpath_none_added() {
	[ -n "$fp" ] || { echo "no objects"; return 1; }
	"$top/tests/fastpath.py" "$fp/parent/timekeeping.o" "$fp/patched/timekeeping.o" \
		ktime_get ktime_get_with_offset ktime_get_raw ktime_get_coarse_real_ts64 &&
		"$top/tests/fastpath.py" "$fp/parent/dcache.o" "$fp/patched/dcache.o" d_lookup
}
check "seqcount events: a read that neither waits nor retries runs no added instruction (d_lookup, ktime_get, ktime_get_with_offset, ktime_get_raw, ktime_get_coarse_real_ts64 against the parent; tests/fastpath.py)" \
	fastpath_none_added

# The same comparison the other way round must fail: the old d_lookup has a
# branch more on that path (a jump into its wait loop), so the check can see
# an added instruction.
fastpath_sees_added() {
	[ -s "$fp/patched/dcache.o" ] || { echo "no objects"; return 1; }
	! "$top/tests/fastpath.py" "$fp/patched/dcache.o" "$fp/parent/dcache.o" d_lookup
}
check "tests/fastpath.py fails when the path gains a branch (parent and patch swapped)" \
	fastpath_sees_added

fastpath_reference() {
	[ -n "$fp" ] || { echo "no objects"; return 1; }
	echo "the parent against the patch: the xor must show"
	! "$top/tests/fastpath.py" "$fp/parent/timekeeping.o" "$fp/patched/timekeeping.o" \
		ktime_get_real_ts64 || return 1
	! "$top/tests/fastpath.py" "$fp/parent/timekeeping.o" "$fp/patched/timekeeping.o" \
		ktime_get_ts64 || return 1
	echo "the reference against the patch: nothing added"
	"$top/tests/fastpath.py" "$fp/reference/timekeeping.o" "$fp/patched/timekeeping.o" \
		ktime_get ktime_get_with_offset ktime_get_raw ktime_get_coarse_real_ts64 \
		ktime_get_real_ts64 ktime_get_ts64 &&
		"$top/tests/fastpath.py" "$fp/reference/dcache.o" "$fp/patched/dcache.o" d_lookup
}
check "seqcount events: ktime_get_real_ts64 and ktime_get_ts64 gain only the xor an empty retry hook gives them, and every reader matches that reference" \
	fastpath_reference
