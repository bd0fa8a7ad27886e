# Faults in the harness that need a guest booted: no usable KVM under
# --accel auto, and Ctrl-C during make run. Sourced by tests/run after
# tests/guest.sh (check, in_group, group_left, group_gone, wait_for,
# $kernel, $logs, $top).

rg=$top/host/run-guest
mkdir -p "$logs/faults"

# --accel auto on a host without KVM falls back to TCG, says why, and runs.
kvm_fallback() {
	local dev=$logs/faults/no-kvm
	FRLOCK_KVM_DEV=$dev "$rg" --kernel "$kernel" --accel auto --exec 'echo guest-ran' \
		>"$logs/faults/fallback.out" 2>"$logs/faults/fallback.err"
	local rc=$?
	cat "$logs/faults/fallback.err" "$logs/faults/fallback.out"
	[ "$rc" -eq 0 ] && grep -qx 'guest-ran' "$logs/faults/fallback.out" &&
		grep -qx "run-guest: accel=tcg (kvm: no $dev)" "$logs/faults/fallback.err" &&
		[ ! -e "$dev" ]
}
check "run-guest --accel auto without /dev/kvm falls back to TCG and runs" kvm_fallback

# Ctrl-C during make run: the whole foreground group gets SIGINT, as from
# a terminal. Then make run must end at once (non-zero, one line of its
# own), no QEMU or dashboard server of the run may be left, and its
# results folder must say INCOMPLETE. make run builds nothing: it boots
# $kernel (FRLOCK_KERNEL), which tests/run built or found.
make_run_ctrl_c() {
	local out=$logs/faults/make-run.out err=$logs/faults/make-run.err rc dir start
	FRLOCK_KERNEL=$kernel in_group make -C "$top" --no-print-directory run DURATION=60 \
		>"$out" 2>"$err" </dev/null
	# Interrupt it mid-run: once the guest's tools are attached and the
	# load is starting (TCG on a busy host: allow minutes).
	if ! wait_for 400 grep -q 'frlock-watch: attached' "$out"; then
		echo "the run never got under way:"
		tail -5 "$out" "$err"
		kill -KILL -- -"$grp" 2>/dev/null
		wait "$grp"
		return 1
	fi
	echo "running: $(group_left "$grp" | grep -c qemu-system) QEMU in its group"
	group_left "$grp" | grep -q qemu-system || { echo "no QEMU was running"; return 1; }
	start=$SECONDS
	kill -INT -- -"$grp"
	if ! wait_for 60 group_gone "$grp"; then
		echo "make run's group did not end within 60 s of SIGINT:"
		group_left "$grp"
		kill -KILL -- -"$grp" 2>/dev/null
		wait "$grp"
		return 1
	fi
	wait "$grp"
	rc=$?
	echo "exit $rc, $((SECONDS - start)) s after SIGINT; stderr:"
	cat "$err"
	dir=$(sed -n 's|.*results in \(results/[0-9-]*\)/$|\1|p' "$out" | head -1)
	echo "results: ${dir:-none named}"
	[ -n "$dir" ] && [ -d "$top/$dir" ] || return 1
	# No QEMU with this run's results folder is left anywhere.
	if pgrep -f "qemu-system.*$top/$dir" >/dev/null; then
		echo "a QEMU of this run is still running"
		return 1
	fi
	echo "INCOMPLETE: $(cat "$top/$dir/INCOMPLETE" 2>/dev/null)"
	grep -q '^interrupted by SIGINT' "$top/$dir/INCOMPLETE" || return 1
	# One line of make run's own on stderr (beside run-guest's accel note
	# and make's own "***" line, "make[1]: ***" under make test).
	[ "$(grep -v '^run-guest: accel=\|^make\(\[[0-9]*\]\)\{0,1\}: \*\*\*' "$err" | grep -c .)" -eq 1 ] &&
		grep -qx "make run: interrupted; the partial results in $dir/ are marked INCOMPLETE" "$err" &&
		[ "$rc" -ne 0 ] && [ $((SECONDS - start)) -lt 30 ] || return 1
	rm -rf "${top:?}/$dir"
}
check "make run: Ctrl-C stops it at once, leaves no QEMU, marks the results INCOMPLETE" make_run_ctrl_c
