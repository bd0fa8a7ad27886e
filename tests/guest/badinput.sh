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
if [ -x "$F" ]; then
	refused "unknown option '--bogus'" "$F" --bogus
	refused "unknown option '-x'" "$F" -x
	refused "ambiguous option '--ver'" "$F" --ver
	refused "unknown option '-1'" "$F" -1
	refused "option '-L' needs a value" "$F" -L
	refused "invalid lock name ''" "$F" -L ''
	refused "invalid lock name 'a_name_that_is_far_too_long_for_a_lock'" \
		"$F" -L a_name_that_is_far_too_long_for_a_lock
	refused "unknown kind 'spin' (want frlock or seqcount)" "$F" -k spin
	refused "option '-k' needs a value" "$F" -k
	refused "invalid lock address '0xzz'" "$F" -L 0xzz
	refused "invalid row count '0'" "$F" -n 0
	refused "invalid row count '257'" "$F" -n 257
	refused "option '-n' needs a value" "$F" -n
	refused "invalid interval '0'" "$F" 0
	refused "invalid interval 'abc'" "$F" abc
	refused "invalid interval '86401'" "$F" 86401
	refused "invalid interval '99999999999'" "$F" 99999999999
	refused "invalid count '0'" "$F" 1 0
	refused "invalid count '100000000'" "$F" 1 100000000
	refused "unexpected argument '3'" "$F" 1 2 3
	check "frlockstat --help and -? still print the help (exit 0)" \
		sh -c "'$F' --help | grep -q '^Usage: frlockstat' && '$F' -? | grep -q '^Usage: frlockstat'"
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
