#!/bin/sh
# Runs inside the guest on the frlock kernel (series v4): Debian's own perf
# on the eight events, as a kernel developer would use it.
#
#  - perf record -e 'frlock:*' -e 'seqcount:*' -a over gettimeofday(2)
#    readers racing the tick and adjtimex (tk_core), path lookups racing
#    renames (rename_lock, d_seq) and the two KUnit suites (readers that
#    wait), then perf script: all eight events come
#    back with their fields, and the retries join their writes on (lock,
#    seq) as in ftrace's own text;
#  - perf stat counts the same events;
#  - perf trace and perf lock contention are tried: what they do on this
#    kernel is printed ("# perf trace: ..." lines) and judged only where it
#    must work (perf trace shows the events it is asked for).
#
# usage: perf.sh [SECONDS]	(the load's length, default 3)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/events.sh"
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
case $secs in '' | *[!0-9]*) echo "usage: perf.sh [SECONDS]" >&2; exit 2 ;; esac

if ! command -v perf >/dev/null; then
	not_ok "perf is in the guest (host/mkrootfs copies Debian's linux-perf)"
	exit 0
fi
# events.sh's ev_load: gettimeofday and rename loads, then the KUnit
# suites, whose readers wait on both kinds of lock.
load=". $here/events.sh; ev_load $secs"
tk=$(ev_sym tk_core) rl=$(ev_sym rename_lock)

# --- perf record, perf script -----------------------------------------------

# 4 MB of ring buffer a CPU (-m 1024 pages): under TCG perf reads it slowly.
perf record -q -m 1024 -e 'frlock:*' -e 'seqcount:*' -a -o "$tmp/perf.data" -- sh -c "$load" \
	>"$tmp/record.out" 2>&1
rc=$?
sed 's/^/  record: /' "$tmp/record.out" | grep -v '^  record: *$' | tail -5
check "perf record -e 'frlock:*' -e 'seqcount:*' -a recorded (exit $rc)" \
	test $rc -eq 0 -a -s "$tmp/perf.data"
perf script -i "$tmp/perf.data" >"$tmp/script" 2>"$tmp/script.err"
rc=$?
# Records the kernel could not hand perf (its ring buffer was full).
lost=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null |
	awk '$1 == "LOST" && $2 ~ /^events:/ { n = $3; exit } END { print n + 0 }')
echo "  script: $(wc -l <"$tmp/script") lines, $lost LOST events (perf report --stats)"
head -3 "$tmp/script" | sed 's/^/  script: /'
grep -m1 'frlock:frlock_read_retry:' "$tmp/script" | sed 's/^/  script: /'
grep -m1 'seqcount:seqcount_read_retry:' "$tmp/script" | sed 's/^/  script: /'
check "perf script read the recording back (exit $rc)" test $rc -eq 0 -a -s "$tmp/script"
ev_records <"$tmp/script" >"$tmp/rec"
for sys in frlock seqcount; do
	for ev in write_begin write_end read_retry read_wait; do
		n=$(awk -v e=${sys}_$ev '$2 == e { n++ } END { print n + 0 }' "$tmp/rec")
		bad=$(awk -v e=${sys}_$ev '$2 == e && ($3 !~ /^[0-9a-f]+$/ || $4 !~ /^[0-9]+$/ || $5 == "")' "$tmp/rec" | wc -l)
		# perf script names a caller from /proc/kallsyms as it is when it
		# runs: the KUnit modules, unloaded by then, stay addresses.
		named=$(awk -v e=${sys}_$ev '$2 == e && $5 !~ /^0x/' "$tmp/rec" | wc -l)
		check "perf script: $sys:${sys}_$ev with lock, seq and caller ($n events, $bad without; callers named $named, the rest the KUnit modules')" \
			test "$n" -gt 0 -a "$bad" -eq 0
	done
done
n=$(awk -v l="$tk" '$2 == "frlock_read_retry" && $3 == l && $5 == "ktime_get_real_ts64"' "$tmp/rec" | wc -l)
check "perf script: gettimeofday's retries on tk_core ($n from ktime_get_real_ts64)" test "$n" -gt 0
n=$(awk -v l="$rl" '$2 == "seqcount_read_retry" && $3 == l' "$tmp/rec" | wc -l)
check "perf script: rename_lock retried under the renames ($n)" test "$n" -gt 0
if [ "$lost" -eq 0 ]; then
	for sys in frlock seqcount; do
		grep "^$sys " "$tmp/rec" | ev_join 4 >"$tmp/$sys.join"
		rc=$?
		sed "s/^/  $sys join: /" "$tmp/$sys.join"
		check "perf script, $sys: retries and waits join their writes on (lock, seq), begin with end ($(head -1 "$tmp/$sys.join"))" \
			test $rc -eq 0
	done
else
	not_ok "perf script: the joins need every event, and perf lost $lost"
fi

# --- perf stat ----------------------------------------------------------------

perf stat -a -x, -e frlock:frlock_write_begin -e frlock:frlock_read_retry \
	-e seqcount:seqcount_write_begin -e seqcount:seqcount_read_retry -- sh -c "$load" \
	>/dev/null 2>"$tmp/stat"
rc=$?
sed 's/^/  stat: /' "$tmp/stat" | grep -E 'frlock|seqcount'
counts=$(awk -F, '$3 ~ /^(frlock|seqcount):/ && $1 + 0 > 0' "$tmp/stat" | wc -l)
check "perf stat counted the write and retry events of both systems (exit $rc, $counts of 4 counted)" \
	test $rc -eq 0 -a "$counts" -eq 4

# --- perf trace, perf lock contention: tried, reported ------------------------

perf trace --no-syscalls -a -e frlock:frlock_read_retry -e seqcount:seqcount_read_retry -- sh -c "$load" \
	>"$tmp/trace.out" 2>&1
rc=$?
n=$(grep -c -E 'frlock:frlock_read_retry|seqcount:seqcount_read_retry' "$tmp/trace.out")
sed 's/^/# perf trace: /' "$tmp/trace.out" | grep -E 'read_retry|rror|not|ailed' | head -4
check "perf trace --no-syscalls -e frlock:frlock_read_retry -e seqcount:seqcount_read_retry shows retries (exit $rc, $n lines)" \
	test $rc -eq 0 -a "$n" -gt 0
# perf 6.1's lock contention reads a recording (live only with BPF).
perf lock record -a -o "$tmp/lock.data" -- sh -c "$load" >"$tmp/lock.out" 2>&1
rc=$?
perf lock contention -i "$tmp/lock.data" >>"$tmp/lock.out" 2>&1
rc2=$?
echo "# perf lock record -a: exit $rc; perf lock contention: exit $rc2. It reads the lock:contention_* events of spinning and sleeping locks, never a sequence lock's retry:"
sed 's/^/# perf lock: /' "$tmp/lock.out" | head -14
rm -rf "$tmp" /tmp/ev-load-paths
