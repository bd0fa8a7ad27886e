#!/bin/sh
# The frlock torture run: the KUnit stress case for MS milliseconds, with
# writers in hard irq, softirq and task context against a reader on every
# CPU. Prints its figures and one "ok - ..." / "not ok - ..." per check.
#
# usage: torture.sh MS
. "$(dirname "$0")/lib.sh"
case ${1:-} in '' | *[!0-9]*) echo "usage: torture.sh MS" >&2; exit 2 ;; esac
ms=$1
results=/sys/kernel/debug/kunit/frlock/results

if ! modprobe frlock_kunit stress_ms="$ms" 2>"$tmp/modprobe.err" || [ ! -r "$results" ]; then
	not_ok "torture ${ms} ms: the KUnit module ran ($(cat "$tmp/modprobe.err"))"
	exit 0
fi
cat "$results" >"$tmp/kunit"
grep -E 'writer=|cpus=' "$tmp/kunit" | sed 's/^ *# frlock_test_stress: /  torture: /'
line=$(grep -o 'cpus=[0-9]* reads=[0-9]* retries=[0-9]* torn=[0-9]* writes=[0-9]* hold_max_ns=[0-9]*' "$tmp/kunit")
field() { echo "$line" | sed -n "s/.*$1=\([0-9]*\).*/\1/p"; }
reads=$(field reads) retries=$(field retries) torn=$(field torn) hold=$(field hold_max_ns)
grep -q '^ *ok [0-9]* frlock_test_stress' "$tmp/kunit" &&
	ok "torture ${ms} ms: stress case passed (reads=$reads retries=$retries writes=$(field writes))" ||
	not_ok "torture ${ms} ms: stress case passed ($(grep -m3 -E 'not ok|Expected' "$tmp/kunit" | tr '\n' ' '))"
[ "$torn" = 0 ] && ok "torture ${ms} ms: no torn read in $reads reads" ||
	not_ok "torture ${ms} ms: no torn read (torn=${torn:-not reported})"
for ctx in hardirq softirq task; do
	n=$(sed -n "s/.*writer=$ctx writes=\([0-9]*\).*/\1/p" "$tmp/kunit")
	[ -n "$n" ] && [ "$n" -gt 0 ] && ok "torture ${ms} ms: $ctx writer wrote ($n writes)" ||
		not_ok "torture ${ms} ms: $ctx writer wrote (${n:-not reported})"
done
# Hold times are reported, not judged: under TCG a preempted vCPU
# stretches any section.
echo "  torture: longest write section ${hold:-?} ns"
rmmod frlock_kunit
