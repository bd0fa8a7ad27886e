#!/bin/sh
# Recursion safety: BPF programs that read the time through bpftrace's
# nsecs, elapsed, time() and strftime(), attached to the frlock writer
# tracepoints, to every seqcount event and inside tk_core's write
# section, under gettimeofday load with adjtimex writers and a rename load
# against path lookups (path-load: rename_lock and d_seq writes, retries
# and waits). The guest must neither hang (run-guest's timeout would end
# it) nor warn.
#
# usage: recursion.sh [SECONDS]
. "$(dirname "$0")/lib.sh"
. /opt/frlock/guest-rootfs/lib.sh
secs=${1:-10}
case $secs in '' | *[!0-9]*) echo "usage: recursion.sh [SECONDS]" >&2; exit 2 ;; esac

dmesg -c >/dev/null
# Both loads start once every probe is in: attaching them takes tens of
# seconds under TCG (a static key patched per event), longer than a load
# started beside bpftrace would last.
t0=$(date +%s)
bpftrace "$(dirname "$0")/recursion.bt" >"$tmp/bt.out" 2>&1 &
bt=$!
wait_attached $bt "$tmp/bt.out" '^Attaching' 1200
sleep 1
echo "  recursion: probes attached after $(($(date +%s) - t0)) s"
path-load -d "$secs" -j /tmp/recursion-paths >"$tmp/paths.out" 2>&1 &
paths=$!
gtod-load -t 2 -d "$secs" -w 500 -i 0 >"$tmp/load.out" 2>&1
load_rc=$?
wait $paths
paths_rc=$?
kill -INT $bt 2>/dev/null
wait_sigint $bt
bt_rc=$?
grep '^@hits' "$tmp/bt.out" | sed 's/^/  recursion: /'

[ $load_rc -eq 0 ] && ok "recursion: gettimeofday load with 500 adjtimex writes/s completed under the probes" ||
	not_ok "recursion: load completed (exit $load_rc: $(tail -1 "$tmp/load.out"))"
[ $bt_rc -eq 0 ] || [ $bt_rc -eq 130 ] && ok "recursion: bpftrace ended cleanly on SIGINT" ||
	not_ok "recursion: bpftrace ended cleanly (exit $bt_rc)"
[ $paths_rc -eq 0 ] && ok "recursion: rename load completed under the probes ($(cat "$tmp/paths.out"))" ||
	not_ok "recursion: rename load completed (exit $paths_rc: $(tail -1 "$tmp/paths.out"))"
for p in tracepoint:frlock:frlock_write_begin tracepoint:frlock:frlock_write_end kprobe:update_vsyscall \
	tracepoint:seqcount:seqcount_write_begin tracepoint:seqcount:seqcount_write_end; do
	hits=$(sed -n "s/^@hits\[$p\]: \([0-9]*\)$/\1/p" "$tmp/bt.out")
	[ -n "$hits" ] && [ "$hits" -gt 0 ] && ok "recursion: $p fired $hits times, reading the time each" ||
		not_ok "recursion: $p fired (${hits:-no count})"
done
# The readers' events: retries are rare under these probes (a slow
# lockdep guest saw none in 10 s), waits at path_init's rename_lock are not.
for sys in frlock seqcount; do
	retry=$(sed -n "s/^@hits\[tracepoint:$sys:${sys}_read_retry\]: \([0-9]*\)$/\1/p" "$tmp/bt.out")
	wait_=$(sed -n "s/^@hits\[tracepoint:$sys:${sys}_read_wait\]: \([0-9]*\)$/\1/p" "$tmp/bt.out")
	[ $((${retry:-0} + ${wait_:-0})) -gt 0 ] &&
		ok "recursion: the $sys reader events fired ${retry:-0} (read_retry) and ${wait_:-0} (read_wait) times, reading the time each" ||
		not_ok "recursion: the $sys reader events fired (read_retry ${retry:-none}, read_wait ${wait_:-none})"
done
grep -q '[0-9][0-9]:[0-9][0-9]:[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9] ' "$tmp/bt.out" &&
	ok "recursion: time() and strftime() printed from the probes" ||
	not_ok "recursion: time() and strftime() printed from the probes"
if dmesg | grep -E 'read nested in its own write section|WARNING:|BUG:|rcu.*stall' >"$tmp/warn"; then
	not_ok "recursion: no kernel warning ($(head -1 "$tmp/warn"))"
else
	ok "recursion: no kernel warning, no RCU stall"
fi
