#!/usr/bin/env bash
# Host checks of dashboards/: the live server, the live page and the
# report, rendered by headless Chromium from the recorded fixture. Nothing
# here touches the kernel or the guest. One line per check: "ok - ...",
# "not ok - ..." or "skip - ...", with "# " diagnostics; the exit status
# is 1 if any check failed.
#
# usage: dashboards/tests/run.sh [LOGDIR]   (tests/run runs it)
#   LOGDIR gets each check's log and the screenshots live.png and
#   report.png (default: a new directory under /tmp).
# Needs: python3, python3-websocket, chromium, libjs-chart.js (Debian
# packages). The Python side of each check is in checks.py (one SSE client),
# browser.py, expect.py and same_view.py.
set -uo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
dash=$top/dashboards
fixture=$dash/fixtures/frlock-run.ndjson
py=/usr/bin/python3
logs=${1:-$(mktemp -d /tmp/frlock-dashboards.XXXXXX)}
mkdir -p "$logs" || exit 2
chartjs=${FRLOCK_CHARTJS:-/usr/share/javascript/chart.js/chart.min.js}

TEST_PREFIX="dashboards: "
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"

pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
}
trap cleanup EXIT

# start_server NAME ARGS...: dashboards/server in the background, its URL
# in NAME.url and its stdout (the terminal view, with --terminal) in
# NAME.out; sets srv_pid and srv_url (empty if no URL came within 10 s).
start_server() {
	local name=$1 _
	shift
	rm -f "$logs/$name.url"
	"$dash/server" --url-file "$logs/$name.url" "$@" >"$logs/$name.out" 2>"$logs/$name.err" &
	srv_pid=$!
	pids+=("$srv_pid")
	srv_url=
	for _ in $(seq 100); do
		srv_url=$(head -1 "$logs/$name.url" 2>/dev/null)
		[ -n "$srv_url" ] && return 0
		kill -0 "$srv_pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
# wait_exit PID SECONDS: wait for PID; its status, or 124 on timeout.
wait_exit() {
	local pid=$1 _
	for _ in $(seq $(($2 * 10))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.1
	done
	return 124
}
# last_line FILE WANT: FILE's last line is WANT.
last_line() {
	local got
	got=$(tail -1 "$1")
	echo "last stderr line: $got"
	[ "$got" = "$2" ]
}
# browser NAME URL: render URL, save NAME.png and NAME.json in the logs.
browser() {
	"$py" "$dash/tests/browser.py" --wait-ended --timeout 90 \
		--png "$logs/$1.png" "$2" >"$logs/$1.json" 2>"$logs/$1.browser.err"
}
no_console_errors() {
	"$py" "$dash/tests/checks.py" console_errors "$1" 
}
# http_status PORT PATH [HOST]: the status of GET PATH on 127.0.0.1:PORT.
http_status() {
	"$py" "$dash/tests/checks.py" http_status "$@" 
}
# png_ok FILE: a PNG at least 1000 px wide and of some size.
png_ok() {
	"$py" "$dash/tests/checks.py" png_ok "$1" 
}

# --- Prerequisites -----------------------------------------------------------

missing=
[ -x "$py" ] || missing="$missing python3"
[ -f "$chartjs" ] || missing="$missing libjs-chart.js"
if [ -n "$missing" ]; then
	skip "not installed:$missing (make deps)"
	exit 0
fi
# bcheck DESC CMD...: a check that needs Chromium; skipped without it.
bcheck() {
	if command -v chromium >/dev/null; then
		check "$@"
	else
		skip "$1 (chromium not installed: make deps)"
	fi
}
echo "# dashboards logs: $logs"
# The fixture's records, and the rows make run's view makes of them.
nrec=$(grep -c . "$fixture")
nrows=$("$py" -c 'import sys; sys.path.insert(0, sys.argv[1]); import json, view
v = view.View(); n = sum(len(v.add(json.loads(l))) for l in open(sys.argv[2])); print(n + len(v.end()))' \
	"$dash" "$fixture")

fixture_ok() {
	"$py" "$dash/tests/checks.py" fixture_ok "$fixture" 
}
check "the fixture is NDJSON with frlockstat, caller and gtod-load lines, and its end" fixture_ok

# --- The server's command line ----------------------------------------------

refuses_binds() {
	local a rc rc_all=0
	for a in 0.0.0.0 10.0.0.1 192.168.1.10 :: ::1 example.com ''; do
		timeout 10 "$dash/server" --bind "$a" "$fixture" >"$logs/bind.out" 2>"$logs/bind.err"
		rc=$?
		echo "--bind '$a': exit $rc: $(cat "$logs/bind.err")"
		[ "$rc" = 2 ] && grep -q "refusing to bind" "$logs/bind.err" &&
			[ ! -s "$logs/bind.out" ] || rc_all=1
	done
	return $rc_all
}
check "server refuses any --bind but 127.0.0.1 (exit 2)" refuses_binds

# Unknown options, out-of-range numbers, missing and garbage files: the
# usage, one error line naming the fault, exit 2, and no URL printed.
bad_usage() {
	local rc rc_all=0 args tool want
	printf 'this is not\nan NDJSON feed\n' >"$logs/garbage.txt"
	head -c 100000 /dev/urandom >"$logs/garbage.bin"
	while IFS='|' read -r tool args want; do
		# shellcheck disable=SC2086
		timeout 10 "$dash/$tool" $args >"$logs/usage.out" 2>"$logs/usage.err"
		rc=$?
		echo "$tool $args: exit $rc: $(tail -1 "$logs/usage.err")"
		[ "$rc" = 2 ] && grep -q "^usage:" "$logs/usage.err" && [ ! -s "$logs/usage.out" ] &&
			[ "$(grep -vc '^usage:\|^  ' "$logs/usage.err")" = 1 ] &&
			tail -1 "$logs/usage.err" | grep -q -- "$want" || rc_all=1
	done <<-EOF
		server||the following arguments are required
		server|--port|expected one argument
		server|--port abc $fixture|invalid int value
		server|--port 70000 $fixture|--port must be 0 to 65535
		server|--bogus $fixture|unrecognized arguments: --bogus
		server|--linger -1 $fixture|--linger must be
		server|--linger nan $fixture|--linger must be
		server|$fixture extra|unrecognized arguments: extra
		server|/nonexistent/feed|no such file
		server|$logs|is a directory
		server|$logs/garbage.txt|not an NDJSON feed
		server|$logs/garbage.bin|not an NDJSON feed
		server|--save /nonexistent/dir/x $fixture|--save /nonexistent/dir/x: no such directory
		server|--chartjs /nonexistent.js $fixture|--chartjs /nonexistent.js: no such file
		report|$logs/garbage.bin|not an NDJSON feed
		report|-o $logs/garbage.html $logs/garbage.txt|not an NDJSON feed
	EOF
	return $rc_all
}
check "server and report refuse bad options and files with their usage (exit 2)" bad_usage
# A FIFO (nothing to look at before it is read) that brings no record.
garbage_stream() {
	printf 'garbage\n\001\002\n' | timeout 20 "$dash/server" --once --linger 0 - \
		>/dev/null 2>"$logs/garbage-stream.err"
	local rc=$?
	cat "$logs/garbage-stream.err"
	[ "$rc" = 1 ] && grep -q 'held no frlock record' "$logs/garbage-stream.err"
}
check "server --once on a stream with no record at all exits 1" garbage_stream

peers() {
	"$py" "$dash/tests/checks.py" is_loopback "$dash/server" || return 1
	start_server peers --once --linger 60 "$fixture" || return 1
	local port=${srv_url##*:} code rc=0
	port=${port%/}
	# Listening on 127.0.0.1 only: /proc/net/tcp shows 0100007F:PORT.
	printf -v hex '%04X' "$port"
	if grep -q " 0100007F:$hex 00000000:0000 0A " /proc/net/tcp; then
		echo "listening on 127.0.0.1:$port"
	else
		echo "not listening on 127.0.0.1:$port"
		rc=1
	fi
	grep -q " 00000000:$hex 00000000:0000 0A " /proc/net/tcp && { echo "listening on 0.0.0.0"; rc=1; }
	code=$(http_status "$port" /)
	echo "GET / from 127.0.0.1: $code"
	[ "$code" = 200 ] || rc=1
	code=$(http_status "$port" / attacker.example:80)
	echo "GET / with a foreign Host header (DNS rebinding): $code"
	[ "$code" = 403 ] || rc=1
	code=$(http_status "$port" /../../etc/passwd)
	echo "GET outside the page's files: $code"
	[ "$code" = 404 ] || rc=1
	kill "$srv_pid"
	wait_exit "$srv_pid" 10
	return $rc
}
check "server listens on 127.0.0.1 and refuses non-loopback peers and foreign Hosts" peers

# --- The live page, fed by the fixture --------------------------------------

live() {
	start_server live --terminal --once --linger 120 "$fixture" || return 1
	echo "server: $srv_url"
	browser live "$srv_url" || { cat "$logs/live.browser.err"; return 1; }
	"$py" "$dash/tests/expect.py" --mode live "$fixture" "$logs/live.json" || return 1
	wait_exit "$srv_pid" 20
	local rc=$?
	echo "server exit status: $rc"
	[ "$rc" = 0 ] && last_line "$logs/live.err" \
		"frlock-dashboard: $nrec records, 0 malformed lines skipped, 0 of unknown type"
}
bcheck "live page draws every chart with the fixture's numbers" live
# make run's two views of one run: the server's terminal (--terminal) and
# the page it served, from the same feed.
bcheck "terminal and page show the same $nrows rows, cell by cell, and the same skipped counts" \
	"$py" "$dash/tests/same_view.py" --rows "$nrows" \
	--skipped "skipped: 0 malformed lines, 0 records of unknown type" "$logs/live.out" "$logs/live.json"
bcheck "live page has no console errors" no_console_errors "$logs/live.json"
bcheck "live page screenshot saved: $logs/live.png" png_ok "$logs/live.png"

# The page redraws as the feed grows: the fixture is appended in four
# parts, 1.5 s apart, once the page is connected; then SIGTERM.
live_updates() {
	local feed=$logs/updates.ndjson bpid rc
	: >"$feed"
	start_server updates "$feed" || return 1
	browser updates "$srv_url" &
	bpid=$!
	pids+=("$bpid")
	"$py" "$dash/tests/checks.py" append_when_connected "$srv_url" "$fixture" "$feed" || return 1
	kill -TERM "$srv_pid"
	wait "$bpid" || { cat "$logs/updates.browser.err"; return 1; }
	wait_exit "$srv_pid" 10 || return 1
	"$py" "$dash/tests/expect.py" --mode live "$fixture" "$logs/updates.json" || return 1
	"$py" "$dash/tests/checks.py" updates_redrew "$logs/updates.json" 
}
bcheck "live page redraws as the feed grows, and ends when the server stops" live_updates

# --- Malformed lines, through a FIFO ----------------------------------------

# bad.ndjson: the fixture with malformed lines, blank lines, a CRLF line,
# bpftrace output, and a last line without its newline. good.ndjson: the
# records the page should end up with.
"$py" "$dash/tests/checks.py" make_bad_feed "$fixture" "$logs/bad.ndjson" "$logs/good.ndjson" 
nbad=8

malformed_fifo() {
	local fifo=$logs/feed.fifo rc
	rm -f "$fifo"
	mkfifo "$fifo" || return 1
	start_server bad --terminal --once --linger 120 "$fifo" || return 1
	# Feed it in pieces cut mid-line, a little at a time, as a guest would.
	"$py" "$dash/tests/checks.py" feed_slowly "$logs/bad.ndjson" "$fifo" &
	pids+=($!)
	browser malformed "$srv_url" || { cat "$logs/malformed.browser.err"; return 1; }
	"$py" "$dash/tests/expect.py" --mode live --malformed $nbad "$logs/good.ndjson" \
		"$logs/malformed.json" || return 1
	no_console_errors "$logs/malformed.json" || return 1
	wait_exit "$srv_pid" 20
	rc=$?
	echo "server exit status: $rc"
	[ "$rc" = 0 ] && last_line "$logs/bad.err" \
		"frlock-dashboard: $((nrec + 2)) records, $nbad malformed lines skipped, 2 of unknown type"
}
bcheck "malformed lines from a FIFO are skipped and counted (page and stderr)" malformed_fifo
bcheck "malformed lines and unknown records: the same count on the terminal and the page" \
	"$py" "$dash/tests/same_view.py" --rows "$nrows" \
	--skipped "skipped: $nbad malformed lines, 2 records of unknown type" "$logs/bad.out" "$logs/malformed.json"

# --- A guest that stops sending ------------------------------------------------

# Half the fixture, then nothing: within two intervals (1 s each) the
# terminal and the page must say so, naming the console log; then SIGTERM
# ends the page's stream.
stalled() {
	local feed=$logs/stalled.ndjson bpid t0 t n
	head -n "$((nrec / 2))" "$fixture" >"$feed"
	start_server stalled --terminal --interval 1 --console-log /tmp/the-console.log "$feed" || return 1
	browser stalled "$srv_url" &
	bpid=$!
	pids+=("$bpid")
	# The last line now: the clock of the stall starts here.
	n=$(grep -c 'no data from the guest' "$logs/stalled.out")
	t0=$(date +%s.%N)
	echo '{"type":"load","t":0.5,"dt":0.5,"total":1000,"writes":0}' >>"$feed"
	for _ in $(seq 80); do
		[ "$(grep -c 'no data from the guest' "$logs/stalled.out")" -gt "$n" ] && break
		sleep 0.05
	done
	t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	echo "stall reported $t s after the last line was written:"
	grep 'no data from the guest' "$logs/stalled.out" || return 1
	awk -v t="$t" 'BEGIN { exit !(t <= 2.0) }' || return 1
	sleep 2
	kill -TERM "$srv_pid"
	wait "$bpid" || { cat "$logs/stalled.browser.err"; return 1; }
	wait_exit "$srv_pid" 10 || return 1
	"$py" "$dash/tests/same_view.py" --stall "console log: /tmp/the-console.log" \
		"$logs/stalled.out" "$logs/stalled.json"
}
bcheck "a feed that stops is reported within two intervals on the terminal and the page, naming the console log" stalled

# --- Following a growing file -------------------------------------------------

follow() {
	local feed=$logs/growing.ndjson rc
	: >"$feed"
	rm -f "$logs/saved.ndjson"
	start_server follow --save "$logs/saved.ndjson" "$feed" || return 1
	"$py" "$dash/tests/checks.py" follow_sse "$srv_url" "$fixture" "$feed" "$srv_pid" || return 1
	wait_exit "$srv_pid" 10
	rc=$?
	echo "server exit status after SIGTERM: $rc"
	cmp "$fixture" "$logs/saved.ndjson" && echo "--save kept every line" || return 1
	[ "$rc" = 0 ] && last_line "$logs/follow.err" \
		"frlock-dashboard: $nrec records, 0 malformed lines skipped, 0 of unknown type"
}
check "server follows a growing file (tail -f), streams each new line, --save, SIGTERM" follow

# --- The report ----------------------------------------------------------------

report=$logs/report.html
check "report writes one HTML file from the fixture" \
	bash -c "'$dash/report' -o '$report' '$fixture' 2>'$logs/report.err' &&
		tail -1 '$logs/report.err' | grep -qx 'frlock-report: $nrec records, 0 malformed lines skipped'"

self_contained() {
	"$py" "$dash/tests/checks.py" self_contained "$report" "$chartjs" 
}
check "report is self-contained: no src/href, data and Chart.js inlined" self_contained

report_page() {
	browser report "file://$report" || { cat "$logs/report.browser.err"; return 1; }
	"$py" "$dash/tests/expect.py" --mode report "$fixture" "$logs/report.json" &&
		no_console_errors "$logs/report.json"
}
bcheck "report opens from disk with the fixture's numbers, no console errors" report_page
bcheck "report screenshot saved: $logs/report.png" png_ok "$logs/report.png"

report_malformed() {
	"$dash/report" -o "$logs/bad.html" "$logs/bad.ndjson" 2>"$logs/bad-report.err" || return 1
	last_line "$logs/bad-report.err" \
		"frlock-report: $((nrec + 2)) records, $nbad malformed lines skipped" || return 1
	"$py" "$dash/tests/checks.py" report_data "$logs/bad.html" "$nbad" "$((nrec + 2))" 
}
check "report skips and counts malformed lines" report_malformed

report_usage() {
	local args rc rc_all=0
	for args in "" "--bogus $fixture" "-" "$fixture extra" "-o" \
		"-o $logs/x.html /nonexistent.ndjson"; do
		# shellcheck disable=SC2086
		"$dash/report" $args </dev/null >/dev/null 2>"$logs/rusage.err"
		rc=$?
		echo "report $args: exit $rc: $(tail -1 "$logs/rusage.err")"
		[ "$rc" = 2 ] || rc_all=1
	done
	[ ! -e "$logs/x.html" ] || { echo "a report was written"; rc_all=1; }
	return $rc_all
}
check "report rejects bad options with its usage (exit 2)" report_usage

[ "$failed" -eq 0 ]
