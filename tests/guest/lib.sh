# Sourced by the guest test scripts (busybox sh): the test protocol and
# $tmp, a scratch directory.
#
# A check prints one line, "ok - DESC", "not ok - DESC" or "skip - DESC"
# (TAP's lines without numbers; "# ..." lines are diagnostics), as the
# host's tests do (host/frlock/tests/protocol.py), which relay these lines
# from the guest job's output and count them. $TEST_PREFIX: put before
# every description ("dashboards: ").
tmp=$(mktemp -d)

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - ${TEST_PREFIX:-}$*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - ${TEST_PREFIX:-}$*"; }
skip() { skipped=$((skipped + 1)); echo "skip - ${TEST_PREFIX:-}$*"; }

# progress DESC LOG: in the background, every 30 s, a "# DESC: N s so far"
# line with LOG's last line, so that a long step is never silent; sets
# progress_pid. progress_end stops it.
progress() {
	_p_desc=$1 _p_log=$2
	(
		_p_t0=$(date +%s)
		# The sleep holds no pipe open: a reader of our stdout never waits for it.
		while sleep 30 >/dev/null 2>&1 </dev/null; do
			echo "# $_p_desc: $(($(date +%s) - _p_t0)) s so far; $(tail -n 1 "$_p_log" 2>/dev/null |
				tr -d '\r' | cut -c1-100)"
		done
	) &
	progress_pid=$!
}
progress_end() {
	kill "$progress_pid" 2>/dev/null
	wait "$progress_pid" 2>/dev/null
}

# check DESC CMD...: run CMD with its output in $tmp/check.out; ok or not
# ok (with the output's tail), with the time it took when that was more
# than a second.
check() {
	local _c_desc _c_log _c_t0 _c_rc _c_s _c_took
	_c_desc=$1
	shift
	_c_log=$tmp/check.out
	_c_t0=$(date +%s)
	progress "$_c_desc" "$_c_log"
	"$@" >"$_c_log" 2>&1
	_c_rc=$?
	progress_end
	_c_s=$(($(date +%s) - _c_t0))
	_c_took=
	[ "$_c_s" -le 1 ] || _c_took=" [$_c_s s]"
	if [ "$_c_rc" -eq 0 ]; then
		ok "$_c_desc$_c_took"
	else
		not_ok "$_c_desc$_c_took"
		sed 's/^/  /' "$_c_log" | tail -n 20
	fi
}

# expect_fail CODE PATTERN CMD...: CMD exits with CODE and says PATTERN in
# a line of its stderr (shown).
expect_fail() {
	local _e_code _e_pattern _e_rc
	_e_code=$1 _e_pattern=$2
	shift 2
	"$@" >"$tmp/expect.out" 2>"$tmp/expect.err"
	_e_rc=$?
	cat "$tmp/expect.err"
	[ "$_e_rc" -eq "$_e_code" ] || { echo "exit $_e_rc, wanted $_e_code"; return 1; }
	grep -q -- "$_e_pattern" "$tmp/expect.err"
}

# traced_load SECONDS WRITES BPFTRACE_ARGS...: bpftrace BPFTRACE_ARGS in the
# background (its output in $tmp/bt.out), and once it has attached, gtod-load
# on 2 threads for SECONDS with WRITES adjtimex writes a second (its output
# in $tmp/load.out); then bpftrace is stopped. Sets load_rc and bt_rc. Needs
# guest-rootfs/lib.sh (wait_attached, wait_sigint).
traced_load() {
	_tl_secs=$1 _tl_writes=$2
	shift 2
	bpftrace "$@" >"$tmp/bt.out" 2>&1 &
	_tl_bt=$!
	wait_attached $_tl_bt "$tmp/bt.out" '^Attaching' 1200
	sleep 1
	gtod-load -t 2 -d "$_tl_secs" -w "$_tl_writes" -i 0 >"$tmp/load.out" 2>&1
	load_rc=$?
	kill -INT $_tl_bt 2>/dev/null
	wait_sigint $_tl_bt
	bt_rc=$?
}

# read_wait_hist on|off: ftrace's own hist trigger on frlock_read_wait,
# per reader site: the run-again loops (agreement.sh, waits.sh) count the
# waits they need with it, as text, before the host judges the tools' JSON.
READ_WAIT_EVENT=/sys/kernel/tracing/events/frlock/frlock_read_wait
READ_WAIT_HIST='hist:keys=caller.sym:vals=hitcount'
read_wait_hist() {
	case $1 in
	on) echo "$READ_WAIT_HIST" ;;
	off) echo "!$READ_WAIT_HIST" ;;
	*) return 2 ;;
	esac >>"$READ_WAIT_EVENT/trigger"
}

# waits_of PATTERN FILE: the waits in FILE, a copy of that hist, of the
# reader sites whose line matches PATTERN (awk regex).
waits_of() {
	awk -v pat="$1" '$0 ~ pat { sub(/.*hitcount: */, ""); n += $0 } END { print n + 0 }' "$2"
}
