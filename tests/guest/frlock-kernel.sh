#!/bin/sh
# Runs inside the guest booted on the frlock kernel. Prints one
# "ok - ...", "not ok - ..." or "skip - ..." line per check.
T=/sys/kernel/tracing
E=$T/events/frlock
REPO=/opt/frlock
. "$(dirname "$0")/lib.sh"

# --- The events and their format ------------------------------------------

# Series v4: four events in each system, one class, the same fields.
for ev in frlock:frlock_write_begin frlock:frlock_write_end frlock:frlock_read_retry \
	frlock:frlock_read_wait seqcount:seqcount_write_begin seqcount:seqcount_write_end \
	seqcount:seqcount_read_retry seqcount:seqcount_read_wait; do
	f=$T/events/${ev%%:*}/${ev#*:}/format
	check "tracefs has $ev" test -r "$f"
	# The ID depends on the kernel build; every other line is the contract.
	sed '/^ID:/d' "$f" >"$tmp/${ev#*:}.format" 2>/dev/null
	check "$ev format matches tracepoints/format/${ev#*:}" \
		diff -u "$REPO/tracepoints/format/${ev#*:}" "$tmp/${ev#*:}.format"
done
check "frlock_read_done is gone (series v4)" test ! -e "$E/frlock_read_done"

# --- KUnit ----------------------------------------------------------------

# The stress case runs 100 ms by default (short for KUNIT_ALL_TESTS); 1 s
# here. It reports its retries and no longer expects any (readers wait
# while a write is open, so a short run may see none: the review's D5);
# frlock_test_read_overlaps_write checks retries deterministically.
kunit() {
	results=/sys/kernel/debug/kunit/frlock/results
	modprobe frlock_kunit stress_ms=1000 2>"$tmp/modprobe.err" ||
		insmod "$(find /lib/modules -name frlock_kunit.ko | head -1)" stress_ms=1000 2>>"$tmp/modprobe.err"
	if [ ! -r "$results" ]; then
		not_ok "KUnit frlock suite ran (no $results)"
		cat "$tmp/modprobe.err"
		return
	fi
	cat "$results" >"$tmp/kunit"
	sed 's/^/  kunit: /' "$tmp/kunit"
	# Relay each case of the suite, whatever the KTAP nesting depth.
	sed -n 's/^ *\(not ok\|ok\) [0-9]* \(frlock_test_[a-z_]*\)\(.*\)$/\1 - kunit \2\3/p' "$tmp/kunit" |
		sed 's/^ok - \(.*\) # SKIP\(.*\)$/skip - \1 (skipped by KUnit:\2)/'
	grep -q '^ *ok [0-9]* frlock$' "$tmp/kunit" && ok "kunit suite frlock" ||
		not_ok "kunit suite frlock"
	# D1: a reader that only looks nested (a whole write ran on its CPU
	# between its two loads) reads on. The case needs KPROBES: it must
	# have run, not been skipped.
	d1=$(grep -E '^ *(not )?ok [0-9]* frlock_test_nested_only_if_count_unmoved' "$tmp/kunit")
	case $d1 in
	*'# SKIP'*|'') not_ok "kunit D1 case ran and passed (${d1:-no result line})" ;;
	*'not ok'*) not_ok "kunit D1 case ran and passed ($d1)" ;;
	*) ok "kunit D1 case ran and passed: a write whole on the reader's CPU between its two loads is not nesting" ;;
	esac
	stress=$(grep -o 'reads=[0-9]* retries=[0-9]* torn=[0-9]* writes=[0-9]*' "$tmp/kunit" | head -1)
	torn=$(echo "$stress" | sed -n 's/.*torn=\([0-9]*\).*/\1/p')
	echo "  stress (retries reported, not judged): $stress"
	[ -n "$stress" ] && [ "$torn" = 0 ] && ok "kunit stress saw no torn read ($stress)" ||
		not_ok "kunit stress saw no torn read (${stress:-no figures reported})"
	rmmod frlock_kunit 2>/dev/null
}
kunit

# The seqcount events' own suite (patches/seqcount/, patch 2).
"$(dirname "$0")/seqcount-kunit.sh"

# --- Timekeeping's frlock under a gettimeofday syscall load ---------------

. "$(dirname "$0")/events.sh"
OUT=/results/events
echo "  tk_core is at $(ev_sym tk_core) (/proc/kallsyms); its frcount_t is its first member"
# A buffer large enough that nothing is overwritten: then every event is
# there to pair (checked with the per-CPU overrun counters). Addresses as
# they are, to compare with /proc/kallsyms.
echo 16384 >"$T/buffer_size_kb"
echo 0 >"$T/options/hash-ptr"
# Switching an event takes milliseconds under TCG (code patching), so the
# window is cut by clearing the buffer and by tracing_on, which are instant:
# only the reads and writes in flight at each end can lack their other half.
echo 1 >"$E/enable"
echo >"$T/trace"
gtod-load -t 2 -d 5 -w 500 -i 0 >"$tmp/load" 2>&1
load_rc=$?
echo 0 >"$T/tracing_on"
echo 0 >"$E/enable"
overruns=$(ev_overruns)
sed 's/^/  load: /' "$tmp/load"
[ $load_rc -eq 0 ] && ok "gtod-load ran with writer pressure" || not_ok "gtod-load ran (exit $load_rc)"
# The host reads and judges the text (host/judge-events ftrace): which
# writers and readers, every event tk_core's, and the joins on (lock, seq).
if mkdir -p "$OUT" && cat "$T/trace" >"$OUT/ftrace.txt"; then
	ev_meta "$overruns" >"$OUT/ftrace.meta"
else
	not_ok "the trace was left in $OUT for the host (run-guest --results)"
fi
echo 1 >"$T/tracing_on"
echo 1 >"$T/options/hash-ptr"

# --- The ftrace hist-trigger recipes -----------------------------------------

# recipe NAME WHAT PATTERN: run a recipe for 3 s under load, grep its output.
recipe() {
	gtod-load -t 2 -d 4 -w 500 -i 0 >/dev/null 2>&1 &
	"$REPO/tracepoints/hist/$1" 3 >"$tmp/$1" 2>&1
	check "hist recipe $1 $2" grep -q "$3" "$tmp/$1"
	grep -v '^ *$' "$tmp/$1" | head -30 | sed "s/^/  $1: /"
	wait
}
recipe frlock-retries "counts tk_core's retries from ktime_get_real_ts64" \
	'lock: \[[0-9a-f]*\] tk_core  *, caller: \[[0-9a-f]*\] ktime_get_real_ts64 .*hitcount: *[1-9]'
recipe frlock-hold "histograms tk_core's hold times" 'lock: \[[0-9a-f]*\] tk_core  *, hold_ns: ~ 2^[0-9]'
recipe retry-join "joins tk_core's retries to the tick's or adjtimex's writes" \
	'lock: \[[0-9a-f]*\] tk_core  *, writer: \[[0-9a-f]*\] \(timekeeping_advance\|do_adjtimex\) .*reader: .*hitcount: *[1-9]'
# The write hist dropped none, and the recipe joined at least 95% of the
# retries. Not every one: the trace above joins all but those at its
# edges, but in one run of the recipe 34 of 2,031 retries found no
# write_begin entry in the hist (none dropped); the cause is not known yet,
# and the recipe prints both totals so that the gap is never hidden.
joined=$(awk '/^# Retries joined/ { on = 1 } on && /^ *Hits:/ { print $2; exit }' "$tmp/retry-join")
retried=$(sed -n 's/^retries Hits: //p' "$tmp/retry-join")
dropped=$(sed -n 's/^writes Dropped: //p' "$tmp/retry-join")
check "retry-join joined at least 95% of the retries (${joined:-?} of ${retried:-?}; ${dropped:-?} writes dropped)" \
	test -n "$joined" -a -n "$retried" -a "${dropped:-1}" = 0 -a "${joined:-0}" -le "${retried:-0}" -a \
		"$((${joined:-0} * 100))" -ge "$((${retried:-0} * 95))" -a "${retried:-0}" -gt 0
check "hist recipes left no trigger behind" \
	sh -c "! grep -h '^hist' $E/*/trigger $T/events/syscalls/sys_enter_gettimeofday/trigger"
check "hist recipes removed their synthetic events" \
	sh -c "! grep -q 'frlock_hold\\|frlock_retry_join' $T/synthetic_events"

rm -rf "$tmp"
