#!/bin/sh
# The guest side of `make lab`: runs one lab's experiment on the frlock
# kernel and leaves its raw results in OUT (run-guest's --results, at
# /results). The host (labs/lab) reads them; nothing is judged here.
#
# usage: guest.sh gtod OUT SECONDS VIA:WRITERS...   one frlock-watch run per
#            VIA:WRITERS pair (via syscall or vdso, adjtimex writes/s), each
#            its own feed OUT/run-VIA-WRITERS.ndjson; with the kernel's count
#            of gettimeofday system calls during the run in
#            OUT/run-VIA-WRITERS.syscalls (an ftrace hist trigger)
#        guest.sh lockout OUT MS READERS...   frlock_bench test=lockout for
#            each number of busy readers, MS per lock type; the module's
#            result lines in OUT/lockout.txt, as bench/guest.sh prints them
#        guest.sh window OUT MS RUNS   the tick's whole computation, measured
#            (timekeeping_advance() from entry to return, each tick for 2 s,
#            in OUT/advance.txt), then frlock_bench test=window with the
#            writer's section as short as a copy (hold_us=0) and as long as
#            that computation, MS per lock type and phase, RUNS times in
#            alternating order; the module's lines in OUT/window.txt, as
#            bench/guest.sh prints them, each with rep=1..RUNS
#        guest.sh paths OUT SECONDS WRITER...   path-load for SECONDS with
#            each --writer in turn; its JSON summary in OUT/paths-WRITER.json
#            and the seqcount readers' events, per instance
#            (hist_instances), in OUT/paths-WRITER.{retry,wait} (not the
#            writes: every negative dentry a rename makes is a new address,
#            too many for a hist)
#
# Exit status: 0; 1 if a run failed; 2 on bad usage.
here=$(cd "$(dirname "$0")" && pwd)
top=${here%/labs}
# shellcheck source=guest-rootfs/lib.sh
. "$top/guest-rootfs/lib.sh"
prog=labs/guest.sh
usage() {
	echo "usage: $prog gtod OUT SECONDS VIA:WRITERS... | lockout OUT MS READERS... | window OUT MS RUNS | paths OUT SECONDS WRITER..." >&2
	exit 2
}
die() { echo "$prog: $*" >&2; exit 1; }
num() { case $1 in '' | *[!0-9]*) usage ;; esac; }

[ $# -ge 3 ] || usage
mode=$1 out=$2 size=$3
shift 3
# window takes its number of runs; the others one run each at least.
case $mode in window) [ $# -eq 1 ] && num "$1" && [ "$1" -ge 1 ] ;; *) [ $# -ge 1 ] ;; esac || usage
[ -d "$out" ] || die "no folder $out"
num "$size"

# The kernel's count of gettimeofday system calls, from a hist trigger on
# their tracepoint (hitcount, one key): start_count, then stop_count FILE.
trig=/sys/kernel/tracing/events/syscalls/sys_enter_gettimeofday/trigger
start_count() { echo 'hist:keys=common_type:vals=hitcount' >"$trig" || die "cannot set $trig"; }
stop_count() {
	hits=$(sed -n 's/^ *Hits: *\([0-9]*\).*/\1/p' "${trig%trigger}hist")
	echo '!hist:keys=common_type:vals=hitcount' >"$trig"
	echo "${hits:-0}" >"$1"
}

case $mode in
gtod)
	for run in "$@"; do
		via=${run%%:*} w=${run#*:}
		case $via in syscall | vdso) ;; *) usage ;; esac
		num "$w"
		name=run-$via-$w
		echo "$prog: $name: gettimeofday via $via, $w adjtimex writes/s, $size s"
		start_count
		"$top/guest-rootfs/frlock-watch" -d "$size" -t 2 --via "$via" -w "$w" -i 1 \
			-o "$out/$name.ndjson" >"$out/$name.log" 2>&1 ||
			{ stop_count "$out/$name.syscalls"; cat "$out/$name.log" >&2; die "$name failed"; }
		stop_count "$out/$name.syscalls"
		echo "$prog: $name: done, $(cat "$out/$name.syscalls") gettimeofday system calls counted"
	done
	;;
lockout)
	: >"$out/lockout.txt"
	for r in "$@"; do
		num "$r"
		echo "$prog: frlock_bench test=lockout readers=$r duration_ms=$size (rwlock, frlock, seqlock)"
		dmesg -c >/dev/null
		modprobe frlock_bench test=lockout readers="$r" duration_ms="$size" 2>"$out/modprobe.err" ||
			die "modprobe frlock_bench: $(cat "$out/modprobe.err"; dmesg | grep frlock_bench | tail -1)"
		rmmod frlock_bench
		dmesg | sed -n 's/.*frlock_bench: \(lockout\) /bench \1 /p' >>"$out/lockout.txt"
	done
	grep -q '^bench lockout' "$out/lockout.txt" || die "frlock_bench printed no lockout line"
	;;
window)
	echo "$prog: timekeeping_advance(), each tick for 2 s"
	bpftrace -e 'kprobe:timekeeping_advance { @start[tid] = nsecs; }
		kretprobe:timekeeping_advance /@start[tid]/ {
			printf("advance_ns %d\n", nsecs - @start[tid]); delete(@start[tid]); }
		interval:s:2 { exit(); }' >"$out/advance.bt" 2>&1 || die "bpftrace: $(tail -1 "$out/advance.bt")"
	grep '^advance_ns ' "$out/advance.bt" | cut -d' ' -f2 | sort -n >"$out/advance.txt"
	n=$(wc -l <"$out/advance.txt")
	[ "$n" -gt 0 ] || die "no timekeeping_advance() return seen in 2 s"
	p50=$(sed -n "$(((n + 1) / 2))p" "$out/advance.txt")
	hold=$(((p50 + 999) / 1000))
	echo "$prog: timekeeping_advance() p50 ${p50} ns over $n ticks: the long section holds ${hold} us"
	: >"$out/window.txt"
	# Runs with the order of the two sections swapped each time, each
	# line tagged rep=N: a host that takes a vCPU's core away spoils a
	# run, not the lab (the host side judges the least disturbed one).
	runs=$1 rep=1
	while [ "$rep" -le "$runs" ]; do
		if [ $((rep % 2)) = 1 ]; then holds="0 $hold"; else holds="$hold 0"; fi
		for h in $holds; do
			echo "$prog: run $rep of $runs: frlock_bench test=window hold_us=$h period_us=4000 readers=1 clock=clocksource duration_ms=$size"
			dmesg -c >/dev/null
			modprobe frlock_bench test=window hold_us="$h" period_us=4000 readers=1 clock=clocksource \
				duration_ms="$size" rounds=1 2>"$out/modprobe.err" ||
				die "modprobe frlock_bench: $(cat "$out/modprobe.err"; dmesg | grep frlock_bench | tail -1)"
			rmmod frlock_bench
			dmesg | sed -n "s/.*frlock_bench: \(window\) \(.*\)/bench \1 \2 rep=$rep/p" >>"$out/window.txt"
		done
		rep=$((rep + 1))
	done
	n=$(grep -c '^bench window' "$out/window.txt")
	[ "$n" -eq $((runs * 8)) ] || die "frlock_bench printed $n window lines, not $((runs * 8))"
	;;
paths)
	ev=/sys/kernel/tracing/events/seqcount
	[ -d $ev ] || die "this kernel has no seqcount events"
	for w in "$@"; do
		case $w in rename | rename-elsewhere | none) ;; *) usage ;; esac
		echo "$prog: path-load --writer $w, $size s"
		for e in seqcount_read_retry seqcount_read_wait; do
			seqcount_hist $e on || die "cannot set the $e hist trigger"
		done
		path-load -d "$size" -j --writer "$w" "/tmp/lab-paths-$w" >"$out/paths-$w.json" 2>"$out/paths-$w.err" ||
			die "path-load --writer $w: $(cat "$out/paths-$w.err")"
		for e in retry:seqcount_read_retry wait:seqcount_read_wait; do
			seqcount_hist ${e#*:} pause
			hist_instances $ev/${e#*:}/hist >"$out/paths-$w.${e%%:*}" || die "the ${e#*:} hist could not be read"
			seqcount_hist ${e#*:} off
		done
		echo "$prog: $w: $(cat "$out/paths-$w.json")"
	done
	;;
*) usage ;;
esac
