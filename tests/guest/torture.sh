#!/bin/sh
# The frlock torture run: the KUnit stress case for MS milliseconds, with
# writers in hard irq, softirq and task context against a reader on every
# CPU. A case may run at most 240 s (KUnit's own timeout is 300 s), so a
# longer run loads the suite again for each 240 s. Prints its figures and
# one "ok - ..." / "not ok - ..." per check.
#
# usage: torture.sh MS
. "$(dirname "$0")/lib.sh"
case ${1:-} in '' | *[!0-9]*) echo "usage: torture.sh MS" >&2; exit 2 ;; esac
ms=$1
chunk_max=240000
results=/sys/kernel/debug/kunit/frlock/results

# field NAME: NAME's value in the current run's figures ($line).
field() { echo " $line" | sed -n "s/.* $1=\([0-9]*\).*/\1/p"; }

left=$ms runs=0 passed=0 ran=0 reads=0 retries=0 torn=0 hold=0
hardirq=0 softirq=0 task=0 refused=0
while [ "$left" -gt 0 ]; do
	chunk=$((left < chunk_max ? left : chunk_max))
	left=$((left - chunk))
	runs=$((runs + 1))
	[ -d /sys/module/frlock_kunit ] && rmmod frlock_kunit
	if ! modprobe frlock_kunit stress_ms="$chunk" 2>"$tmp/modprobe.err" || [ ! -r "$results" ]; then
		not_ok "torture ${ms} ms: the KUnit module ran, run $runs ($(cat "$tmp/modprobe.err"))"
		exit 0
	fi
	cat "$results" >"$tmp/kunit"
	rmmod frlock_kunit
	grep -E 'writer=|cpus=' "$tmp/kunit" | sed 's/^ *# frlock_test_stress: /  torture: /'
	line=$(grep -o 'ms=[0-9]* cpus=[0-9]* reads=[0-9]* retries=[0-9]* torn=[0-9]* writes=[0-9]* hold_max_ns=[0-9]* nested_refused=[0-9]*' "$tmp/kunit")
	if [ -z "$line" ]; then
		grep -m3 -E 'not ok|Expected' "$tmp/kunit"
		not_ok "torture ${ms} ms: run $runs reported its figures"
		exit 0
	fi
	grep -q '^ *ok [0-9]* frlock_test_stress$' "$tmp/kunit" && passed=$((passed + 1)) ||
		grep -m3 -E 'not ok|Expected|SKIP' "$tmp/kunit"
	run_ms=$(field ms)
	[ "$run_ms" -ge "$chunk" ] ||
		echo "  torture: run $runs lasted $run_ms ms, asked for $chunk"
	ran=$((ran + run_ms)) reads=$((reads + $(field reads)))
	retries=$((retries + $(field retries))) torn=$((torn + $(field torn)))
	refused=$((refused + $(field nested_refused)))
	h=$(field hold_max_ns)
	[ "$h" -gt "$hold" ] && hold=$h
	for ctx in hardirq softirq task; do
		n=$(sed -n "s/.*writer=$ctx writes=\([0-9]*\).*/\1/p" "$tmp/kunit")
		eval "$ctx=\$((\$$ctx + ${n:-0}))"
	done
done

[ "$passed" = "$runs" ] &&
	ok "torture ${ms} ms: stress case passed, $runs run(s) (reads=$reads retries=$retries, reported not judged; every read nested in the hard-irq writer's section refused: $refused)" ||
	not_ok "torture ${ms} ms: stress case passed ($passed of $runs runs)"
# The case measures its own length in jiffies: it must not end early, as
# it did while 6.1's KUnit ran module suites before parsing stress_ms.
[ "$ran" -ge "$ms" ] && ok "torture ${ms} ms: the stress ran as long as asked ($ran ms)" ||
	not_ok "torture ${ms} ms: the stress ran as long as asked (only $ran ms)"
[ "$torn" = 0 ] && ok "torture ${ms} ms: no torn read in $reads reads" ||
	not_ok "torture ${ms} ms: no torn read (torn=$torn)"
for ctx in hardirq softirq task; do
	eval "n=\$$ctx"
	[ "$n" -gt 0 ] && ok "torture ${ms} ms: $ctx writer wrote ($n writes)" ||
		not_ok "torture ${ms} ms: $ctx writer wrote ($n writes)"
done
# Hold times are reported, not judged: under TCG a preempted vCPU
# stretches any section.
echo "  torture: longest write section $hold ns"
