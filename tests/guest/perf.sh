#!/bin/sh
# Runs inside the guest on the frlock kernel (series v4): Debian's own perf
# on the eight events, as a kernel developer would use it.
#
#  - perf record -e 'frlock:*' -e 'seqcount:*' -a over gettimeofday(2)
#    readers racing the tick and adjtimex (tk_core), path lookups racing
#    renames (rename_lock, d_seq) and the two KUnit suites (readers that
#    wait), then perf script, whose text goes to /results/events, where
#    the host (host/judge-events) checks that all eight events came back
#    with their fields and that the retries join their writes on (lock,
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
OUT=/results/events
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "perf: $OUT is writable (run-guest --results)"
	exit 0
fi

# --- perf record, perf script -----------------------------------------------

# 4 MB of ring buffer a CPU (-m 1024 pages): under TCG perf reads it slowly.
perf record -q -m 1024 -e 'frlock:*' -e 'seqcount:*' -a -o "$tmp/perf.data" -- sh -c "$load" \
	>"$tmp/record.out" 2>&1
rc=$?
sed 's/^/  record: /' "$tmp/record.out" | grep -v '^  record: *$' | tail -5
check "perf record -e 'frlock:*' -e 'seqcount:*' -a recorded (exit $rc)" \
	test $rc -eq 0 -a -s "$tmp/perf.data"
perf script --ns -i "$tmp/perf.data" >"$OUT/perf.txt" 2>"$tmp/script.err"
rc=$?
# Records the kernel could not hand perf (its ring buffer was full).
lost=$(perf report -i "$tmp/perf.data" --stats 2>/dev/null |
	awk '$1 == "LOST" && $2 ~ /^events:/ { n = $3; exit } END { print n + 0 }')
ev_meta "$lost" >"$OUT/perf.meta"
check "perf script read the recording back (exit $rc)" test $rc -eq 0 -a -s "$OUT/perf.txt"

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
