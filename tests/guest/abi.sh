#!/bin/sh
# Runs inside the guest on the frlock kernel (series v5): the eight events
# of both trace systems mean the same, as their format files and their text
# show.
#
#  - The format files: all eight events have the same fields, with the
#    same types, in the same order (lock, caller, seq: no hole), and the same print
#    format, read from tracefs in this guest.
#  - Their text, as a kernel developer reads it: Debian's trace-cmd records
#    all eight events while gettimeofday(2) readers race the tick and
#    adjtimex on tk_core (frlock), path lookups race renames on rename_lock
#    and the dentries' d_seq (seqcount), and the two KUnit suites make
#    readers wait on both kinds (events.sh's ev_load). `trace-cmd report`'s
#    text goes to /results/events (run-guest --results), where the host
#    (host/judge-events) checks that every retry joins the write_begin of
#    its write and every wait the write_end of its write, on (lock, seq),
#    in both systems.
#
# usage: abi.sh [SECONDS]	(the recording's length, default 3)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/events.sh"
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
case $secs in '' | *[!0-9]*) echo "usage: abi.sh [SECONDS]" >&2; exit 2 ;; esac
T=/sys/kernel/tracing
OUT=/results/events

# --- The format files -------------------------------------------------------

want='const void * lock
unsigned long caller
unsigned int seq'
for ev in write_begin write_end read_retry read_wait; do
	for sys in frlock seqcount; do
		ev_format_fields $sys ${sys}_$ev >"$tmp/$sys.fields"
		check "$sys:${sys}_$ev has the fields lock, caller, seq, in that order ($(tr '\n' ';' <"$tmp/$sys.fields"))" \
			test "$(cat "$tmp/$sys.fields")" = "$want"
	done
	# Offsets, sizes, signedness and the print format too: the two files
	# differ in the name and ID lines only.
	for sys in frlock seqcount; do
		sed -e '/^name:/d' -e '/^ID:/d' "$T/events/$sys/${sys}_$ev/format" >"$tmp/$sys.format"
	done
	check "frlock_$ev and seqcount_$ev have the same format but for their names" \
		diff -u "$tmp/frlock.format" "$tmp/seqcount.format"
done
fmt=$(sed -n 's/^print fmt: //p' "$T/events/frlock/frlock_read_retry/format")
echo "  print fmt of all eight: $fmt"

# --- Their text: trace-cmd record, trace-cmd report -------------------------

if ! command -v trace-cmd >/dev/null; then
	not_ok "trace-cmd is in the guest (host/mkrootfs copies Debian's)"
	exit 0
fi
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "trace-cmd: $OUT is writable (run-guest --results)"
	exit 0
fi
# 20 MB a CPU: trace-cmd reads the buffers while it records, and the
# report's statistics show they lost nothing.
trace-cmd record -q -b 20000 -e frlock -e seqcount -o "$tmp/trace.dat" -- \
	sh -c ". $here/events.sh; ev_load $secs" >"$tmp/record.out" 2>&1
rc=$?
sed 's/^/  record: /' "$tmp/record.out" | tail -4
sed 's/^/  load: /' /tmp/ev-load.gtod /tmp/ev-load.paths
check "trace-cmd recorded frlock and seqcount events under both loads (exit $rc)" \
	test $rc -eq 0 -a -s "$tmp/trace.dat"
trace-cmd report -i "$tmp/trace.dat" >"$OUT/trace-cmd.txt" 2>"$tmp/report.err"
rc=$?
lost=$(trace-cmd report --stat -i "$tmp/trace.dat" 2>/dev/null |
	sed -n 's/^\(overrun\|commit overrun\|dropped events\): *//p' | awk '{ n += $1 } END { print n + 0 }')
ev_meta "$lost" >"$OUT/trace-cmd.meta"
check "trace-cmd report read the recording back (exit $rc)" test $rc -eq 0 -a -s "$OUT/trace-cmd.txt"
rm -rf "$tmp" /tmp/ev-load-paths
