#!/bin/sh
# Runs inside the guest (busybox sh), on the frlock kernel: bad command
# lines to every guest tool. Each must be refused at once: one line on
# stderr naming the fault, then the usage, exit status 2, nothing on
# stdout, no results folder, and nothing left running. One ok/not ok line
# per case.
#
# usage: badinput.sh	(FRLOCKSTAT=PATH tries another frlockstat build)
. "$(dirname "$0")/lib.sh"
B=/opt/frlock/bpf
F=${FRLOCKSTAT:-$B/.output/frlockstat}

# refused TEXT CMD...: CMD exits 2 within 20 s; the first line on stderr
# holds TEXT, every other one is the usage ("usage:" and its indented
# continuation lines); stdout is empty. A case that runs the tool for real
# instead is stopped by the timeout, and fails.
refused() {
	text=$1
	shift
	timeout 20 "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	first=$(head -n 1 "$tmp/err")
	what=$(printf '%s ' "$@" | sed 's|^[^ ]*/||; s/ $//' | cut -c1-60)
	case $first in *"$text"*) said=1 ;; *) said=0 ;; esac
	if [ $rc -eq 2 ] && [ $said = 1 ] && [ ! -s "$tmp/out" ] &&
		sed -n 2p "$tmp/err" | grep -qi '^usage:' &&
		! sed 1d "$tmp/err" | grep -qvi '^usage:\|^ '; then
		ok "$what: refused: $first"
	else
		not_ok "$what: wanted exit 2, '$text' in one line, then the usage (got exit $rc)"
		sed 's/^/  err: /' "$tmp/err" | head -6
		sed 's/^/  out: /' "$tmp/out" | head -3
	fi
}

# --- gtod-load ---------------------------------------------------------------
refused "unknown option '--bogus'" gtod-load --bogus
refused "unknown option '-x'" gtod-load -x
refused "option '-d' needs a value" gtod-load -d
refused "unexpected argument 'extra'" gtod-load extra
refused "invalid thread count '0'" gtod-load -t 0
refused "invalid thread count '1025'" gtod-load -t 1025
refused "invalid thread count '99999999999999999999'" gtod-load -t 99999999999999999999
refused "invalid thread count 'two'" gtod-load -t two
refused "invalid duration '0'" gtod-load -d 0
refused "invalid duration '86401'" gtod-load -d 86401
refused "invalid duration 'nan'" gtod-load -d nan
refused "invalid duration '1e400'" gtod-load -d 1e400
refused "invalid write rate '-1'" gtod-load -w -1
refused "invalid write rate '2e6'" gtod-load -w 2e6
refused "interval '0.001' too short" gtod-load -i 0.001
refused "unknown --via 'libc'" gtod-load --via libc
refused "unknown --writer 'ntp'" gtod-load --writer ntp

# --- timecheck ---------------------------------------------------------------
refused "missing subcommand" timecheck
refused "unknown subcommand 'bogus'" timecheck bogus
refused "unknown option '--bogus'" timecheck monotonic --bogus
refused "invalid duration '0'" timecheck monotonic -d 0
refused "invalid thread count" timecheck monotonic -t 0
refused "option '-d' does not apply" timecheck settime -d 5
refused "unknown state 'hibernate'" timecheck suspend -s hibernate
refused "invalid delay '61'" timecheck suspend -D 61

# --- frlockstat --------------------------------------------------------------
# argp's own error handling, as libbpf-tools': one line naming the fault
# (argp's wording for an option it cannot parse, ours for a bad value),
# then argp's pointer to --help, exit 2, nothing on stdout.
argp_refused() {
	text=$1
	shift
	timeout 60 "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	first=$(head -n 1 "$tmp/err")
	what=$(printf '%s ' "$@" | sed 's|^[^ ]*/||; s/ $//' | cut -c1-60)
	case $first in *"$text"*) said=1 ;; *) said=0 ;; esac
	if [ $rc -eq 2 ] && [ $said = 1 ] && [ ! -s "$tmp/out" ] &&
		[ "$(wc -l <"$tmp/err")" -eq 2 ] &&
		sed -n 2p "$tmp/err" | grep -q "^Try \`frlockstat --help' or \`frlockstat --usage'"; then
		ok "$what: refused: $first"
	else
		not_ok "$what: wanted exit 2, '$text' in one line, then argp's pointer to --help (got exit $rc)"
		sed 's/^/  err: /' "$tmp/err" | head -6
		sed 's/^/  out: /' "$tmp/out" | head -3
	fi
}
if [ -x "$F" ]; then
	argp_refused "unrecognized option '--bogus'" "$F" --bogus
	argp_refused "invalid option -- 'x'" "$F" -x
	argp_refused "option '--ver' is ambiguous" "$F" --ver
	argp_refused "invalid option -- '1'" "$F" -1
	argp_refused "option requires an argument -- 'L'" "$F" -L
	argp_refused "invalid lock name ''" "$F" -L ''
	long=a_name_that_is_far_too_long_for_a_lock_even_with_its_member_path_x
	argp_refused "invalid lock name '$long'" "$F" -L "$long"
	argp_refused "unknown kind 'spin' (want frlock or seqcount)" "$F" -k spin
	argp_refused "option requires an argument -- 'k'" "$F" -k
	argp_refused "invalid lock address '0xzz'" "$F" -L 0xzz
	argp_refused "invalid row count '0'" "$F" -n 0
	argp_refused "invalid row count '257'" "$F" -n 257
	argp_refused "option requires an argument -- 'n'" "$F" -n
	argp_refused "invalid site count '0'" "$F" --max-sites 0
	argp_refused "invalid lock count '257'" "$F" --max-locks 257
	argp_refused "invalid interval '0'" "$F" 0
	argp_refused "invalid interval 'abc'" "$F" abc
	argp_refused "invalid interval '86401'" "$F" 86401
	argp_refused "invalid interval '99999999999'" "$F" 99999999999
	argp_refused "invalid count '0'" "$F" 1 0
	argp_refused "invalid count '100000000'" "$F" 1 100000000
	argp_refused "unexpected argument '3'" "$F" 1 2 3
	argp_refused "invalid textfile 'x.txt' (want a path ending in .prom)" "$F" -P x.txt 1
	argp_refused "-P needs an interval" "$F" -P "$tmp/x.prom"
	check "frlockstat --help and -? still print the help (exit 0)" \
		sh -c "'$F' --help | grep -q '^Usage: frlockstat' && '$F' -? | grep -q '^Usage: frlockstat'"
	# -P into a directory that cannot be written (/proc: not even root can
	# create a file there): one line naming the file, exit 1, nothing left.
	unwritable() {
		timeout 120 "$F" -P /proc/frlockstat-test.prom 1 1 </dev/null >"$tmp/out" 2>"$tmp/err"
		rc=$?
		cat "$tmp/err"
		[ $rc -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
			grep -q "^frlockstat: cannot write /proc/frlockstat-test.prom: " "$tmp/err" &&
			! ls /proc/frlockstat-test.prom* 2>/dev/null
	}
	check "frlockstat -P into a directory it cannot write: one line naming the file, exit 1, nothing left" \
		unwritable
else
	not_ok "frlockstat is built (no $F: run make -C bpf)"
fi

# --- frlock-watch (frlockstat and the load) ----------------------------------
W=/opt/frlock/guest-rootfs/frlock-watch
refused "unknown option '--bogus'" "$W" --bogus
refused "option '-d' needs a value" "$W" -d
refused "-d wants whole seconds from 1 to 86400, not '0'" "$W" -d 0
refused "not '86401'" "$W" -d 86401
refused "not 'abc'" "$W" -d abc
refused "-t wants a number of threads from 1 to 1024, not '1025'" "$W" -t 1025
refused "-w wants writes per second from 0 to 1000000, not '-1'" "$W" -w -1
refused "not '1000001'" "$W" -w 1000001
refused "-i wants whole seconds from 1 to the duration (20), not '30'" "$W" -i 30
refused "--via wants syscall or vdso, not 'libc'" "$W" --via libc
refused "unknown option '--tool'" "$W" --tool perf
refused "-o wants a file or a port, not the directory '/proc'" "$W" -d 1 -o /proc
# A bad value with a new -o feed: no file is made.
refused "-t wants" "$W" -t 0 -o "$tmp/watch-out"
check "frlock-watch refused before it made its -o feed" test ! -e "$tmp/watch-out"

# --- the bpftrace tools themselves ------------------------------------------
# Run directly, their arguments are bpftrace's: it refuses garbage itself
# (exit 1, its own ERROR line), which is all that is asked of it here.
bt_refuses() {
	timeout 60 bpftrace "$B/frlock-retries.bt" abc </dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/err"
	[ $rc -eq 1 ] && grep -q 'ERROR: \$1 used numerically but given "abc"' "$tmp/err"
}
check "bpftrace frlock-retries.bt abc: bpftrace's own error, exit 1" bt_refuses

# Nothing a refused command line started is still running.
left=$(pgrep -l 'bpftrace|gtod-load|frlockstat|timecheck' 2>/dev/null)
check "no refused tool left a process behind${left:+: $left}" test -z "$left"
rm -rf "$tmp"
