# Sourced by tests/host.sh after the builds: the seqcount events add no
# instruction to a read that neither waits nor retries. The kernels compared
# are the prefixes just before and just after "locking/seqlock: Add
# tracepoints ...", so that the patch is the only difference; the functions
# inline read_seqbegin()/read_seqretry() (d_lookup, on rename_lock) and
# read_seqcount_begin()/read_seqcount_retry() (the stock timekeeping
# readers, on tk_core.seq). With registers masked: allocation may differ.

fastpath_check() {
	local n base new
	n=$(patch_number '*-locking-seqlock-Add-tracepoints-*') ||
		{ echo "no seqcount tracepoint patch in the series"; return 1; }
	[ "$n" -ge 2 ] || { echo "the seqcount patch has no prefix to compare with"; return 1; }
	base=$("$build" --variant frlock --patches $((n - 1)) --cached-only --quiet) ||
		{ echo "no kernel for patches 1-$((n - 1))"; return 1; }
	new=$("$build" --variant frlock --patches "$n" --cached-only --quiet) ||
		{ echo "no kernel for patches 1-$n"; return 1; }
	echo "base: patches 1-$((n - 1)), new: patches 1-$n"
	"$top/tests/fastpath.py" "$base/vmlinux" "$new/vmlinux" \
		d_lookup ktime_get ktime_get_with_offset ktime_get_raw \
		ktime_get_coarse_real_ts64
}
check "seqcount events: a read that neither waits nor retries runs no added instruction (d_lookup, ktime_get, ktime_get_with_offset, ktime_get_raw, ktime_get_coarse_real_ts64; tests/fastpath.py)" \
	fastpath_check

# The same comparison the other way round must fail: the old d_lookup has a
# branch more on that path (a jump into its wait loop), so the check can see
# an added instruction.
fastpath_sees_added() {
	local n base new
	n=$(patch_number '*-locking-seqlock-Add-tracepoints-*') || return 1
	base=$("$build" --variant frlock --patches $((n - 1)) --cached-only --quiet) || return 1
	new=$("$build" --variant frlock --patches "$n" --cached-only --quiet) || return 1
	! "$top/tests/fastpath.py" "$new/vmlinux" "$base/vmlinux" d_lookup
}
check "tests/fastpath.py fails when the path gains a branch (the two kernels swapped)" \
	fastpath_sees_added

# ktime_get_real_ts64() and ktime_get_ts64() are compared with a reference
# instead: the parent with nothing but an empty asm statement on the
# failed-retry edge of do___read_seqcount_retry(), where the patch calls the
# event. GCC 12 hoists a zeroing xor of the timespec conversion in both as
# soon as that edge holds anything, so no retry hook avoids it. The objects
# are compiled here, in a worktree and object directory of their own,
# configured as the patched kernel is: the parent (which must differ from
# the patch, or the check could not see the xor), the reference and the
# patch.
fastpath_compile() {
	# fastpath_compile TREE OBJ OUT: timekeeping.o and dcache.o into OUT.
	make -C "$1" O="$2" -j"$(nproc)" kernel/time/timekeeping.o fs/dcache.o \
		>>"$logs/fastpath-compile.log" 2>&1 ||
		{ echo "compiling failed; log: $logs/fastpath-compile.log"; return 1; }
	mkdir -p "$3" && cp "$2/kernel/time/timekeeping.o" "$2/fs/dcache.o" "$3/"
}

# The worktree and object directory (a kernel's worth) go whatever happens.
fastpath_reference() {
	local rc
	fastpath_reference_run
	rc=$?
	git -C "$src" worktree remove --force "$logs/fastpath-tree" >/dev/null 2>&1
	rm -rf "$logs/fastpath-tree" "$logs/fastpath-obj"
	return $rc
}

fastpath_reference_run() {
	local n kernel tree=$logs/fastpath-tree obj=$logs/fastpath-obj out=$logs/fastpath
	[ -n "$src" ] || { echo "no linux-source tree"; return 1; }
	n=$(patch_number '*-locking-seqlock-Add-tracepoints-*') || return 1
	kernel=$("$build" --variant frlock --patches "$n" --cached-only --quiet) ||
		{ echo "no kernel for patches 1-$n"; return 1; }
	git -C "$src" worktree remove --force "$tree" >/dev/null 2>&1
	rm -rf "$tree" "$obj" "$out" "$logs/fastpath-compile.log"
	git -C "$src" worktree add -q --detach "$tree" base || return 1
	git -C "$tree" -c user.name=test -c user.email=test@localhost \
		am -q "${patches[@]:0:n-1}" || { echo "patches 1-$((n - 1)) do not apply"; return 1; }
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
		am -q "${patches[@]:n-1:1}" || { echo "patch $n does not apply"; return 1; }
	fastpath_compile "$tree" "$obj" "$out/patched" || return 1

	echo "the parent against the patch: the xor must show"
	! "$top/tests/fastpath.py" "$out/parent/timekeeping.o" "$out/patched/timekeeping.o" \
		ktime_get_real_ts64 || return 1
	! "$top/tests/fastpath.py" "$out/parent/timekeeping.o" "$out/patched/timekeeping.o" \
		ktime_get_ts64 || return 1
	echo "the reference against the patch: nothing added"
	"$top/tests/fastpath.py" "$out/reference/timekeeping.o" "$out/patched/timekeeping.o" \
		ktime_get ktime_get_with_offset ktime_get_raw ktime_get_coarse_real_ts64 \
		ktime_get_real_ts64 ktime_get_ts64 &&
		"$top/tests/fastpath.py" "$out/reference/dcache.o" "$out/patched/dcache.o" d_lookup
}
check "seqcount events: ktime_get_real_ts64 and ktime_get_ts64 gain only the xor an empty retry hook gives them, and every reader matches that reference (tests/fastpath.py on objects compiled here)" \
	fastpath_reference
