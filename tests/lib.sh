# The one test protocol of the project, sourced by every test script on the
# host (bash) and in the guest (busybox sh, through tests/guest/lib.sh).
#
# A check prints one line, "ok - DESC", "not ok - DESC" or "skip - DESC"
# (TAP's lines without numbers; "# ..." lines are diagnostics); tests/run
# relays the lines of the scripts it runs and ends with "N passed, N
# failed, N skipped". Each script prints lines only: the counting is
# tests/run's, the counters here count what this shell printed.
#
# $logs (host): where check keeps each command's output; without it (the
# guest) the output goes to $tmp and only a failure's tail is shown.
# $TEST_PREFIX: put before every description ("dashboards: ").

passed=0 failed=0 skipped=0
ok() { passed=$((passed + 1)); echo "ok - ${TEST_PREFIX:-}$*"; }
not_ok() { failed=$((failed + 1)); echo "not ok - ${TEST_PREFIX:-}$*"; }
skip() { skipped=$((skipped + 1)); echo "skip - ${TEST_PREFIX:-}$*"; }

# progress DESC LOG: in the background, every 30 s, a "# DESC: N s so far"
# line with LOG's last line, so that a long step (a kernel build, a guest
# boot under TCG) is never silent; sets progress_pid. progress_end stops it.
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

# check DESC CMD...: run CMD with its output in a log; ok or not ok, with
# the time it took when that was more than a second.
check() {
	local _c_desc _c_log _c_t0 _c_rc _c_s _c_took
	_c_desc=$1
	shift
	if [ -n "${logs:-}" ]; then
		_c_log=$logs/$(echo "$_c_desc" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-80).log
	else
		_c_log=$tmp/check.out
	fi
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
	elif [ -n "${logs:-}" ]; then
		not_ok "$_c_desc$_c_took (log: $_c_log)"
		sed 's/^/#   /' "$_c_log" | tail -n 15
	else
		not_ok "$_c_desc$_c_took"
		sed 's/^/  /' "$_c_log" | tail -n 20
	fi
}

# expect_fail CODE PATTERN CMD...: CMD exits with CODE and says PATTERN in
# a line of its stderr (shown).
expect_fail() {
	local _e_code _e_pattern _e_dir _e_rc
	_e_code=$1 _e_pattern=$2
	shift 2
	_e_dir=${logs:-$tmp}
	"$@" >"$_e_dir/expect.out" 2>"$_e_dir/expect.err"
	_e_rc=$?
	cat "$_e_dir/expect.err"
	[ "$_e_rc" -eq "$_e_code" ] || { echo "exit $_e_rc, wanted $_e_code"; return 1; }
	grep -q -- "$_e_pattern" "$_e_dir/expect.err"
}

# relay: the ok/not ok/skip lines of another script on stdin, as our own
# checks; anything else as a "# " diagnostic.
relay() {
	while IFS= read -r _r_line; do
		case $_r_line in
		"ok - "*) ok "${_r_line#ok - }" ;;
		"not ok - "*) not_ok "${_r_line#not ok - }" ;;
		"skip - "*) skip "${_r_line#skip - }" ;;
		*) echo "# $_r_line" ;;
		esac
	done
}
