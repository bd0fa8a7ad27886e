#!/bin/sh
# Runs inside the guest booted on the frlock kernel. Prints one
# "ok - ...", "not ok - ..." or "skip - ..." line per check.
T=/sys/kernel/tracing
E=$T/events/frlock
REPO=/opt/frlock
. "$(dirname "$0")/lib.sh"

# --- The events and their format ------------------------------------------

for ev in frlock:frlock_write_begin frlock:frlock_write_end frlock:frlock_read_retry \
	frlock:frlock_read_done seqcount:seqcount_write_begin seqcount:seqcount_write_end \
	seqcount:seqcount_read_retry seqcount:seqcount_read_wait; do
	f=$T/events/${ev%%:*}/${ev#*:}/format
	check "tracefs has $ev" test -r "$f"
	# The ID depends on the kernel build; every other line is the contract.
	sed '/^ID:/d' "$f" >"$tmp/${ev#*:}.format" 2>/dev/null
	check "$ev format matches tracepoints/format/${ev#*:}" \
		diff -u "$REPO/tracepoints/format/${ev#*:}" "$tmp/${ev#*:}.format"
done

# --- KUnit ----------------------------------------------------------------

# The stress case runs 100 ms by default (short for KUNIT_ALL_TESTS); readers
# wait while a write is open, so only a write that opens during a copy makes
# a reader retry: 2 retries in 100 ms in one run. 1 s here.
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
		sed 's/ # SKIP/ (skipped by KUnit)/'
	grep -q '^ *ok [0-9]* frlock$' "$tmp/kunit" && ok "kunit suite frlock" ||
		not_ok "kunit suite frlock"
	stress=$(grep -o 'reads=[0-9]* retries=[0-9]* torn=[0-9]* writes=[0-9]*' "$tmp/kunit" | head -1)
	retries=$(echo "$stress" | sed -n 's/.*retries=\([0-9]*\).*/\1/p')
	torn=$(echo "$stress" | sed -n 's/.*torn=\([0-9]*\).*/\1/p')
	echo "  stress: $stress"
	[ -n "$retries" ] && [ "$retries" -gt 0 ] && ok "kunit stress saw retries ($retries)" ||
		not_ok "kunit stress saw retries (${retries:-none reported})"
	[ "$torn" = 0 ] && ok "kunit stress saw no torn read" ||
		not_ok "kunit stress saw no torn read (torn=${torn:-none reported})"
}
kunit

# --- Timekeeping's frlock under a gettimeofday syscall load ---------------

# A buffer large enough that nothing is overwritten: then every event is
# there to pair (checked with the per-CPU overrun counters).
echo 16384 >"$T/buffer_size_kb"
# Switching an event takes milliseconds under TCG (code patching), so the
# window is cut by clearing the buffer and by tracing_on, which are instant:
# only the section in flight at each end can lack its other half.
echo 1 >"$E/enable"
echo >"$T/trace"
gtod-load -t 2 -d 5 -w 500 -i 0 >"$tmp/load" 2>&1
load_rc=$?
echo 0 >"$T/tracing_on"
echo 0 >"$E/enable"
# Events the ring buffer lost: overwritten, or dropped (full or nested).
overruns=$(cat "$T"/per_cpu/cpu*/stats |
	sed -n 's/^\(overrun\|commit overrun\|dropped events\): //p' | awk '{ n += $1 } END { print n + 0 }')
sed 's/^/  load: /' "$tmp/load"
[ $load_rc -eq 0 ] && ok "gtod-load ran with writer pressure" || not_ok "gtod-load ran (exit $load_rc)"
cat "$T/trace" >"$tmp/trace"
echo 1 >"$T/tracing_on"
echo "  trace lines: $(grep -c frlock_ "$tmp/trace")"
grep frlock_ "$tmp/trace" | head -8 | sed 's/^/  trace: /'
count() { grep -c "$1: lock=[^ ]* name=tk_core.lock .*$2" "$tmp/trace"; }
check "tick writes tk_core.lock (write_begin from timekeeping_advance)" \
	test "$(count frlock_write_begin caller=timekeeping_advance)" -gt 0
check "adjtimex writes tk_core.lock (write_begin from do_adjtimex)" \
	test "$(count frlock_write_begin caller=do_adjtimex)" -gt 0
# Pair begin and end by section number: only the sections in flight when
# tracing started and stopped may lack their other half.
unpaired=$(awk '/name=tk_core.lock seq=/ {
		match($0, /seq=[0-9]+/); seq = substr($0, RSTART + 4, RLENGTH - 4)
		if ($0 ~ /frlock_write_begin:/) { b[seq] = 1; nb++ }
		if ($0 ~ /frlock_write_end:/) { e[seq] = 1; ne++ }
	}
	END {
		for (s in b) if (!(s in e)) { u++; list = list " " s "b" }
		for (s in e) if (!(s in b)) { u++; list = list " " s "e" }
		print u + 0, nb + 0, ne + 0 > "/dev/stdout"
		print "unpaired seq:" list > "/dev/stderr"
	}' "$tmp/trace" 2>"$tmp/unpaired")
cat "$tmp/unpaired" | sed 's/^/  /'
for seq in $(sed 's/^unpaired seq://' "$tmp/unpaired" | tr -d 'be'); do
	grep "name=tk_core.lock seq=$seq " "$tmp/trace" | sed 's/^/  unpaired: /'
done | head -8
echo "  write sections: unpaired, begun, ended = $unpaired; ring buffer overruns: $overruns"
check "every write_begin has its write_end, same seq (unpaired, begun, ended: $unpaired)" \
	test "$overruns" -eq 0 -a "${unpaired%% *}" -le 2 -a "$(echo "$unpaired" | cut -d' ' -f2)" -gt 0
check "gettimeofday readers retry (read_retry from ktime_get_real_ts64)" \
	test "$(count frlock_read_retry caller=ktime_get_real_ts64)" -gt 0
check "retried reads complete (read_done from ktime_get_real_ts64)" \
	test "$(count frlock_read_done 'retries=[1-9][0-9]* caller=ktime_get_real_ts64')" -gt 0

# --- The ftrace hist-trigger recipes -----------------------------------------

# recipe NAME WHAT PATTERN: run a recipe for 3 s under load, grep its output.
recipe() {
	gtod-load -t 2 -d 4 -w 500 -i 0 >/dev/null 2>&1 &
	"$REPO/tracepoints/hist/$1" 3 >"$tmp/$1" 2>&1
	check "hist recipe $1 $2" grep -q "$3" "$tmp/$1"
	grep -v '^ *$' "$tmp/$1" | head -30 | sed "s/^/  $1: /"
	wait
}
recipe frlock-retries "counts tk_core.lock retries" 'name: tk_core.lock .*retries: *[1-9]'
recipe frlock-hold "histograms tk_core.lock hold times" 'name: tk_core.lock .*hold_ns: ~ 2^[0-9]'
check "hist recipes left no trigger behind" \
	sh -c "! grep -h '^hist' $E/*/trigger $T/events/syscalls/sys_enter_gettimeofday/trigger"
check "hist recipes removed their synthetic event" \
	sh -c "! grep -q frlock_hold $T/synthetic_events"

rm -rf "$tmp"
