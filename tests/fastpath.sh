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
		d_lookup ktime_get ktime_get_with_offset ktime_get_raw
}
# ktime_get_real_ts64(), ktime_get_ts64() and ktime_get_coarse_real_ts64()
# are left out: there GCC 12's layout around the cold call adds a zeroing
# xor or a callee-saved register (patch 4's changelog has the figures).
check "seqcount events: a read that neither waits nor retries runs no added instruction (d_lookup, ktime_get, ktime_get_with_offset, ktime_get_raw; tests/fastpath.py)" \
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
