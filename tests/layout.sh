# tk_core's layout on the frlock kernel against the seqcount series alone,
# whose timekeeping is 6.1's (tk_core.seq a seqcount_raw_spinlock_t: the
# series traces it and leaves its layout as it is), from host/tk-layout:
# make test builds both kernels anyway. Sourced by tests/host.sh, with
# $build and $logs.

layout_check() {
	local new stock
	new=$("$build" --series frlock --cached-only --quiet) || { echo "no frlock kernel"; return 1; }
	stock=$("$build" --series seqcount --cached-only --quiet) || { echo "no seqcount series kernel"; return 1; }
	"$top/host/tk-layout" "$stock" >"$logs/layout.stock" || return 1
	"$top/host/tk-layout" "$new" >"$logs/layout.frlock" || return 1
	echo "stock timekeeping (the seqcount series alone):"; cat "$logs/layout.stock"
	echo "frlock:"; cat "$logs/layout.frlock"
	local ls lf
	ls=$(awk '$1 == "reader_lines" { print $2 }' "$logs/layout.stock")
	lf=$(awk '$1 == "reader_lines" { print $2 }' "$logs/layout.frlock")
	echo "cache lines a ktime_get_real_ts64() reader touches: stock $ls, frlock $lf"
	[ "$lf" -le "$ls" ] || { echo "the reader touches more cache lines than on stock"; return 1; }
	if grep -q '^spinlock' "$logs/layout.frlock"; then
		echo "a spinlock lies inside tk_core:"; grep '^spinlock' "$logs/layout.frlock"
		return 1
	fi
	grep -qx 'writer_lock_shares 0' "$logs/layout.frlock" ||
		{ echo "timekeeper_lock shares a cache line with tk_core's readers"; return 1; }
	# The same offsets as stock, as the issue asks: 6.1's layout kept.
	diff <(grep -E '^(tkr_mono|xtime_sec) ' "$logs/layout.stock") \
		<(grep -E '^(tkr_mono|xtime_sec) ' "$logs/layout.frlock")
}
check "layout: tk_core's reader cache lines no more than stock, writer lock out of them" layout_check
