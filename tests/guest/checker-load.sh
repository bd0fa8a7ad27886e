#!/bin/sh
# The checks a checker kernel (lockdep, KCSAN) runs: the KUnit suites, then
# the main job's load (gettimeofday(2) on every CPU with adjtimex writers)
# with a bpftrace tool attached, then frlockstat -c (a BPF program on each
# of the eight events, a stack walk at each read event) under that load and
# a rename storm, then recursion.sh (time-reading probes on every frlock
# and seqcount event under that load and a rename load). The host reads
# the console for reports.
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
	ok "KUnit seqcount_trace suite passed ($(grep '^ *ok [0-9]* seqcount_test_' "$sc" | grep -vc '# SKIP') cases, D8's among them; $(grep -c '^ *ok [0-9]* seqcount_test_.*# SKIP' "$sc") skipped)"
else
	not_ok "KUnit seqcount_trace suite passed ($(cat "$tmp/modprobe.err"; grep -m3 'not ok' "$sc" 2>/dev/null | tr '\n' ' '))"
fi
rmmod seqcount_kunit 2>/dev/null

traced_load "$1" 200 /opt/frlock/bpf/frlock-hold.bt 5
[ $load_rc -eq 0 ] && ok "gettimeofday load with adjtimex writers ran $1 s ($(tail -1 "$tmp/load.out"))" ||
	not_ok "gettimeofday load ran (exit $load_rc: $(tail -2 "$tmp/load.out"))"
grep -q 'tk_core' "$tmp/bt.out" && ok "frlock-hold.bt traced tk_core.lock under the load" ||
	not_ok "frlock-hold.bt traced tk_core.lock (exit $bt_rc: $(tail -2 "$tmp/bt.out"))"

# frlockstat -c: a program on every event, under both loads at once.
F=/opt/frlock/bpf/.output/frlockstat
"$F" -c 4 1 >"$tmp/fs.out" 2>"$tmp/fs.err" &
fs=$!
# Without -j the banner, flushed once attached, is on stdout.
if wait_attached $fs "$tmp/fs.out" '^Tracing' 1200; then
	mkdir -p /tmp/checker-renames
	path-load -d 4 --writer rename /tmp/checker-renames >"$tmp/renames.out" 2>&1 &
	renames=$!
	gtod-load -t 1 -d 4 -w 500 -i 0 >/dev/null 2>&1
	wait $renames
	wait $fs
	fs_rc=$?
else
	kill $fs 2>/dev/null
	fs_rc="no attach"
fi
grep -E '^(LOCK|tk_core|rename_lock|dentry.d_seq) ' "$tmp/fs.out" | sed 's/^/  frlockstat: /'
[ "$fs_rc" = 0 ] && grep -q '^tk_core ' "$tmp/fs.out" && grep -q '^rename_lock ' "$tmp/fs.out" &&
	ok "frlockstat -c ran on every event under gettimeofday load and a rename storm (tk_core and rename_lock rows)" ||
	not_ok "frlockstat -c ran under both loads (exit $fs_rc: $(tail -2 "$tmp/fs.err"))"

# Probes that read the time on every frlock and seqcount event, under the
# gettimeofday load and renames against path lookups: the checker sees the
# seqcount events' out-of-line calls from every kind of caller.
"$(dirname "$0")/recursion.sh" "$1"
