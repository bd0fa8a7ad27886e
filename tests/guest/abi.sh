#!/bin/sh
# Runs inside the guest on the frlock kernel (series v4): the eight events
# of both trace systems mean the same, as their format files and their text
# show.
#
#  - The format files: all eight events have the same fields, with the
#    same types, in the same order (lock, seq, caller), and the same print
#    format, read from tracefs in this guest.
#  - Their text, as a kernel developer reads it: Debian's trace-cmd records
#    all eight events while gettimeofday(2) readers race the tick and
#    adjtimex on tk_core (frlock), path lookups race renames on rename_lock
#    and the dentries' d_seq (seqcount), and the two KUnit suites make
#    readers wait on both kinds (events.sh's ev_load); in
#    `trace-cmd report`'s
#    text every retry joins the write_begin of its write and every wait the
#    write_end of its write, on (lock, seq), in both systems (edges: see
#    events.sh).
#
# usage: abi.sh [SECONDS]	(the recording's length, default 3)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/events.sh"
here=$(cd "$(dirname "$0")" && pwd)
secs=${1:-3}
case $secs in '' | *[!0-9]*) echo "usage: abi.sh [SECONDS]" >&2; exit 2 ;; esac
T=/sys/kernel/tracing

# --- The format files -------------------------------------------------------

want='const void * lock
unsigned int seq
unsigned long caller'
for ev in write_begin write_end read_retry read_wait; do
	for sys in frlock seqcount; do
		ev_format_fields $sys ${sys}_$ev >"$tmp/$sys.fields"
		check "$sys:${sys}_$ev has the fields lock, seq, caller, in that order ($(tr '\n' ';' <"$tmp/$sys.fields"))" \
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
tk=$(ev_sym tk_core) rl=$(ev_sym rename_lock)
echo "  tk_core at $tk, rename_lock at $rl (/proc/kallsyms)"
# 20 MB a CPU: trace-cmd reads the buffers while it records, and the check
# below shows they lost nothing.
trace-cmd record -q -b 20000 -e frlock -e seqcount -o "$tmp/trace.dat" -- \
	sh -c ". $here/events.sh; ev_load $secs" >"$tmp/record.out" 2>&1
rc=$?
sed 's/^/  record: /' "$tmp/record.out" | tail -4
sed 's/^/  load: /' /tmp/ev-load.gtod /tmp/ev-load.paths
check "trace-cmd recorded frlock and seqcount events under both loads (exit $rc)" \
	test $rc -eq 0 -a -s "$tmp/trace.dat"
trace-cmd report -i "$tmp/trace.dat" >"$tmp/report" 2>"$tmp/report.err"
rc=$?
lost=$(trace-cmd report --stat -i "$tmp/trace.dat" 2>/dev/null |
	sed -n 's/^\(overrun\|commit overrun\|dropped events\): *//p' | awk '{ n += $1 } END { print n + 0 }')
unparsed=$(grep -c 'FAILED TO PARSE' "$tmp/report")
echo "  report: $(wc -l <"$tmp/report") lines, $unparsed unparsed, $lost events lost by the ring buffer"
grep -m1 'frlock_read_retry:' "$tmp/report" | sed 's/^/  report: /'
grep -m1 'seqcount_read_retry:' "$tmp/report" | sed 's/^/  report: /'
grep -m1 'seqcount_read_wait:' "$tmp/report" | sed 's/^/  report: /'
check "trace-cmd report parsed every event (exit $rc, $unparsed unparsed)" \
	test $rc -eq 0 -a "$unparsed" -eq 0
ev_records <"$tmp/report" >"$tmp/rec"
for sys in frlock seqcount; do
	for ev in write_begin write_end read_retry read_wait; do
		n=$(awk -v e=${sys}_$ev '$2 == e { n++ } END { print n + 0 }' "$tmp/rec")
		# Every record has its three fields: an address, a count, a function.
		bad=$(awk -v e=${sys}_$ev '$2 == e && ($3 !~ /^[0-9a-f]+$/ || $4 !~ /^[0-9]+$/ || $5 == "")' "$tmp/rec" | wc -l)
		check "trace-cmd text: ${sys}_$ev with lock, seq and caller ($n events, $bad without)" \
			test "$n" -gt 0 -a "$bad" -eq 0
	done
done

# join SYSTEM LOCK WHAT: ev_join over SYSTEM's events; the retries of LOCK
# (an address, or "heap" for every lock outside the kernel image) must have
# joined.
for sys in frlock seqcount; do
	grep "^$sys " "$tmp/rec" | ev_join 4 >"$tmp/$sys.join"
	rc=$?
	sed "s/^/  $sys join: /" "$tmp/$sys.join"
	check "trace-cmd text, $sys: every retry joins its write_begin and every wait its write_end on (lock, seq), begin with end, at most 4 reads at the edges; nothing lost ($(head -1 "$tmp/$sys.join"); lost $lost)" \
		test $rc -eq 0 -a "$lost" -eq 0
done
# joined LOCK EVENT: LOCK's EVENTs (LOCK an address, or heap: the direct
# map's, ff11... here; not the kernel image's or a module's, ffffffff...,
# nor a KUnit case's on its vmalloc'd stack, ffa0...) that found their
# write.
joined() {
	awk -v l="$1" -v e="$2" '
		NR == FNR { if ($2 ~ /_write_begin$/) b[$3 " " $4] = $5; if ($2 ~ /_write_end$/) x[$3 " " $4] = 1; next }
		$2 ~ e && (l == "heap" ? $3 !~ /^ff(ffffff|[a-e])/ : $3 == l) {
			n++
			k = $3 " " $4
			if (e ~ /retry/ && (k in b)) { j++; w[b[k]]++ }
			if (e ~ /wait/ && (k in x)) j++
		}
		END {
			s = ""
			for (f in w) s = s " " f ":" w[f]
			print n + 0, j + 0, s
		}' "$tmp/rec" "$tmp/rec"
}
set -- $(joined "$tk" frlock_read_retry)
check "trace-cmd text: tk_core's retries joined to their writes ($2 of $1;$(shift 2; echo " by writer:" "$@"))" \
	test "$1" -gt 0 -a "$2" -ge $(($1 - 4))
set -- $(joined "$rl" seqcount_read_retry)
check "trace-cmd text: rename_lock's retries joined to their writes ($2 of $1;$(shift 2; echo " by writer:" "$@"))" \
	test "$1" -gt 0 -a "$2" -ge $(($1 - 4))
set -- $(joined heap seqcount_read_retry)
check "trace-cmd text: the dentries' d_seq retries (locks in the heap) joined to their writes ($2 of $1;$(shift 2; echo " by writer:" "$@"))" \
	test "$1" -gt 0 -a "$2" -ge $(($1 - 4))
# One join as it reads: a retry of rename_lock and the write_begin with its
# (lock, seq), in trace-cmd's own words.
awk -v l="$rl" '$2 == "seqcount_read_retry" && $3 == l { print $4; exit }' "$tmp/rec" >"$tmp/seq"
if [ -s "$tmp/seq" ]; then
	grep -E "seqcount_(write_begin|read_retry): +lock=0x$rl seq=$(cat "$tmp/seq") " "$tmp/report" |
		head -3 | sed 's/^ */  joined in the text: /'
fi
set -- $(joined "$rl" seqcount_read_wait)
echo "  rename_lock's waits: $2 of $1 joined to the write_end that ended them"
set -- $(joined "$tk" frlock_read_wait)
echo "  tk_core's waits: $2 of $1 joined to the write_end that ended them"
rm -rf "$tmp" /tmp/ev-load-paths
