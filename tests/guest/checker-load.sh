#!/bin/sh
# The checks a checker kernel (lockdep, KCSAN) runs: the KUnit suite, then
# the main job's load (gettimeofday(2) on every CPU with adjtimex writers)
# with a bpftrace tool attached, then recursion.sh (time-reading probes on
# every frlock and seqcount event under that load and a rename load). The
# host reads the console for reports.
#
# usage: checker-load.sh SECONDS
. "$(dirname "$0")/lib.sh"
. /opt/frlock/guest-rootfs/lib.sh
case ${1:-} in '' | *[!0-9]*) echo "usage: checker-load.sh SECONDS" >&2; exit 2 ;; esac
results=/sys/kernel/debug/kunit/frlock/results

modprobe frlock_kunit 2>"$tmp/modprobe.err"
if [ -r "$results" ] && grep -q '^ *ok [0-9]* frlock$' "$results"; then
	ok "KUnit frlock suite passed"
else
	not_ok "KUnit frlock suite passed ($(cat "$tmp/modprobe.err"; grep -m3 'not ok' "$results" 2>/dev/null | tr '\n' ' '))"
fi
rmmod frlock_kunit 2>/dev/null
# The seqcount events' suite: on the lockdep kernel its
# seqcount_test_probe_reads_own_lock case is the review's D8 (a
# write_begin probe that reads the seqcount it traces must get no lockdep
# report); the console scan judges the rest.
sc=/sys/kernel/debug/kunit/seqcount_trace/results
modprobe seqcount_kunit 2>"$tmp/modprobe.err"
if [ -r "$sc" ] && grep -q '^ *ok [0-9]* seqcount_trace$' "$sc"; then
	ok "KUnit seqcount_trace suite passed ($(grep -c '^ *ok [0-9]* seqcount_test_' "$sc") cases, D8's among them)"
else
	not_ok "KUnit seqcount_trace suite passed ($(cat "$tmp/modprobe.err"; grep -m3 'not ok' "$sc" 2>/dev/null | tr '\n' ' '))"
fi
rmmod seqcount_kunit 2>/dev/null

traced_load "$1" 200 /opt/frlock/bpf/frlock-hold.bt 5
[ $load_rc -eq 0 ] && ok "gettimeofday load with adjtimex writers ran $1 s ($(tail -1 "$tmp/load.out"))" ||
	not_ok "gettimeofday load ran (exit $load_rc: $(tail -2 "$tmp/load.out"))"
grep -q 'tk_core' "$tmp/bt.out" && ok "frlock-hold.bt traced tk_core.lock under the load" ||
	not_ok "frlock-hold.bt traced tk_core.lock (exit $bt_rc: $(tail -2 "$tmp/bt.out"))"

# Probes that read the time on every frlock and seqcount event, under the
# gettimeofday load and renames against path lookups: the checker sees the
# seqcount events' out-of-line calls from every kind of caller.
"$(dirname "$0")/recursion.sh" "$1"
