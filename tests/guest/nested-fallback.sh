#!/bin/sh
# Timekeeping's readers nested in tk_core's own write section (the review's
# D6): frlock_bench test=nested calls every exported timekeeping reader from
# a pvclock_gtod notifier, which timekeeping_update() calls with the section
# open on the writer's CPU, for duration_ms, with only the tick writing (no
# adjtimex writers). Each reader must answer (refused by
# fr_read_try_begin(), it falls back to the fast timekeeper: no torn copy,
# no hang) with a value no earlier than the same CPU's reads just before
# the section; the readers that answer no clock must answer as before the
# section (ktime_mono_to_any, ktime_get_resolution_ns) or refuse
# (get_device_system_crosststamp: -EDEADLK, the device never asked); and
# the caller's bug must be reported: a WARNING line naming tk_core,
# followed by the nested reader's call trace through the notifier.
#
# The module prints per reader "samples=N backwards_from_before=N
# ahead_of_after=N ahead_max_ns=N": ahead_of_after counts answers later
# than the same CPU's read just after the section, which the fast
# timekeeper gives when the update lowers the multiplier (the NMI-safe
# accessors' documented caveat); it is reported, not judged.
#
# usage: nested-fallback.sh [MS]	(duration_ms, default 3000)
. "$(dirname "$0")/lib.sh"
ms=${1:-3000}
case $ms in '' | *[!0-9]*) echo "usage: nested-fallback.sh [MS]" >&2; exit 2 ;; esac

dmesg -c >/dev/null
taint0=$(cat /proc/sys/kernel/tainted)
modprobe frlock_bench test=nested duration_ms="$ms" 2>"$tmp/modprobe.err"
rc=$?
# The report comes from an irq_work after the section: let it print.
sleep 1
dmesg >"$tmp/dmesg"
rmmod frlock_bench 2>/dev/null
grep 'frlock_bench: nested' "$tmp/dmesg" | sed 's/^\[[ 0-9.]*\] //' >"$tmp/nested"
sed 's/^/  /' "$tmp/nested"
check "frlock_bench test=nested duration_ms=$ms ran (exit $rc$(cat "$tmp/modprobe.err"))" \
	sh -c "test $rc -eq 0 && grep -q 'frlock_bench: done test=nested' '$tmp/dmesg'"

total=$(sed -n 's/.*nested samples=\([0-9]*\) refused=.*/\1/p' "$tmp/nested")
refused=$(sed -n 's/.* refused=\([0-9]*\).*/\1/p' "$tmp/nested")
asked=$(sed -n 's/.* device_asked_inside=\([0-9]*\).*/\1/p' "$tmp/nested")
check "nested reads happened inside the section and were refused (samples=${total:-none}, refused=${refused:-none})" \
	test "${total:-0}" -gt 0 -a "${refused:-0}" -gt 0
check "get_device_system_crosststamp() never asked the device inside the section (device_asked_inside=${asked:-none})" \
	test "${asked:-1}" = 0

readers=0
# ordered READER: a fine or coarse clock, read inside the section.
while read -r line; do
	r=$(echo "$line" | sed -n 's/.*reader=\([^ ]*\) .*/\1/p')
	[ -n "$r" ] || continue
	readers=$((readers + 1))
	s=$(echo "$line" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')
	case $line in
	*backwards_from_before=*)
		b=$(echo "$line" | sed -n 's/.*backwards_from_before=\([0-9]*\).*/\1/p')
		check "nested $r: $s answers, none earlier than the read before the section ($(echo "$line" | sed 's/.*reader=[^ ]* //'))" \
			test "${s:-0}" -gt 0 -a "$b" = 0
		;;
	*unexpected=*)
		u=$(echo "$line" | sed -n 's/.*unexpected=\([0-9]*\).*/\1/p')
		check "nested $r: $s answers, as before the section or refused (unexpected=$u)" \
			test "${s:-0}" -gt 0 -a "$u" = 0
		;;
	*) not_ok "nested $r: a line the test understands ($line)" ;;
	esac
done <<EOF
$(grep 'nested reader=' "$tmp/nested")
EOF
check "every one of the 20 readers reported (${readers})" test "$readers" -eq 20

# The report: a WARNING naming tk_core, then the nested reader's stack.
sed -n '/WARNING: CPU: [0-9]*: frlock tk_core/,/^\[[ 0-9.]*\] *$/p' "$tmp/dmesg" | head -24 >"$tmp/report"
sed 's/^/  report: /' "$tmp/report"
check "the kernel log reports the nested read: 'WARNING: CPU: N: frlock tk_core... read nested in its own write section'" \
	grep -q 'WARNING: CPU: [0-9]*: frlock tk_core[+0-9a-fx/]* read nested in its own write section' "$tmp/report"
check "the report's call trace holds the nested reader, nested_notify" \
	sh -c "sed -n '/Nested reader.s call trace/,\$p' '$tmp/report' | grep -q 'nested_notify'"
taint1=$(cat /proc/sys/kernel/tainted)
check "the report taints the kernel as a WARN does (/proc/sys/kernel/tainted $taint0 before, $taint1 after; W is 512)" \
	test $((taint0 & 512)) -eq 0 -a $((taint1 & 512)) -ne 0
rm -rf "$tmp"
