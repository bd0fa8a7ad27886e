#!/bin/sh
# The guest side of `make bench`: runs one part of the benchmark on the
# booted kernel and prints one "bench KIND key=value..." line per figure,
# which bench/report turns into the table and the JSON.
#
# usage: guest.sh locks LOOPS ROUNDS LOCKOUT_MS HOLDS	frlock_bench: read, lockout,
#							window (each hold of the
#							comma-separated HOLDS, us), write
#        guest.sh refscale LOOPS RUNS ROUNDS	the kernel's refscale: ns per read
#        guest.sh gtod KERNEL SECONDS RUN WORKLOADS	gettimeofday(2) calls/s (gtod)
#							and path lookups/s (paths), 2
#							threads each, as WORKLOADS lists
#        guest.sh write LOOPS REPS		write sections, events off against
#							each tracer, REPS times (part of locks)
#        guest.sh exact-calls KERNEL SECONDS	exact mode (run-guest --icount, 1
#							vCPU): gettimeofday(2) and stat()
#							lookups per guest second, 1 thread
#        guest.sh exact-locks LOOPS		exact mode: frlock_bench's and
#							refscale's reads, 1 reader; write
#							sections with each tracer
#        guest.sh exact-tracing SECONDS WRITES,... [TOOLS]	exact mode:
#							gettimeofday(2) with nothing and
#							with each tracer (of TOOLS, default
#							frlockstat,makerun,bpftrace,ftrace,perf),
#							at each writer rate, and the events
#							each counted (frlockstat's NDJSON
#							kept in /results)
#        guest.sh tracing SECONDS PAIRS [TOOLS]	the same, nothing attached against
#							each tracer attached (of TOOLS,
#							default frlockstat,makerun,bpftrace),
#							PAIRS times;
#							with /results (run-guest --results),
#							make run's frlockstat's NDJSON and
#							the load's of each pair are kept
#							there (bench/report: events/s)
here=$(cd "$(dirname "$0")" && pwd)
# exact- before each frlock_bench and refscale line's kind in exact-locks.
EXACT=
top=${here%/bench}
tmp=$(mktemp -d /tmp/bench.XXXXXX)
pids=
trap 'for p in $pids; do kill -INT $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
usage() { echo "usage: guest.sh locks LOOPS ROUNDS LOCKOUT_MS HOLDS | refscale LOOPS RUNS ROUNDS | gtod KERNEL SECONDS RUN WORKLOADS | write LOOPS REPS | exact-calls KERNEL SECONDS | exact-locks LOOPS | exact-tracing SECONDS WRITES,... [TOOLS] | tracing SECONDS PAIRS [TOOLS]" >&2; exit 2; }
die() { echo "guest.sh: $*" >&2; exit 1; }
. "$top/guest-rootfs/lib.sh"
num() { case $1 in '' | *[!0-9]*) usage ;; esac; }

# modprobe frlock_bench PARAMS...: the module's result lines, as bench lines.
frlock_bench() {
	dmesg -c >/dev/null
	modprobe frlock_bench "$@" 2>"$tmp/modprobe.err" ||
		die "modprobe frlock_bench $*: $(cat "$tmp/modprobe.err"; dmesg | grep frlock_bench | tail -1)"
	rmmod frlock_bench
	dmesg | sed -n "s/.*frlock_bench: \\(read\\|lockout\\|write\\|window\\) /bench $EXACT\\1 /p" |
		sed "s/\$/ $EXTRA/"
}

# refscale TYPE READERS LOOPS RUNS: the kernel's refscale module on one
# lock type; one bench line per experiment ("Runs Time(ns)" table: ns per
# read section, averaged over the readers).
refscale() {
	dmesg -c >/dev/null
	modprobe refscale scale_type="$1" nreaders="$2" loops="$3" nruns="$4" \
		2>"$tmp/modprobe.err" || die "modprobe refscale scale_type=$1: $(cat "$tmp/modprobe.err")"
	# The experiments run in a kthread after the module has loaded.
	n=0
	until dmesg | grep -q 'END OF TEST'; do
		n=$((n + 1))
		[ $n -le 6000 ] || die "refscale scale_type=$1 did not finish within 600 s"
		sleep 0.1
	done
	# The table is printed after the END line, so wait for its last row.
	n=0
	until [ "$(dmesg | sed -n '/Runs.Time(ns)/,$p' | grep -cE '^(\[[ 0-9.]*\] )?[0-9]+[[:space:]]+[0-9]+\.[0-9]+$')" -ge "$4" ]; do
		n=$((n + 1))
		[ $n -le 100 ] || die "refscale scale_type=$1 printed fewer than $4 results"
		sleep 0.1
	done
	rmmod refscale
	dmesg | sed -n '/Runs.Time(ns)/,$p' |
		sed -nE 's/^(\[[ 0-9.]*\] )?([0-9]+)[[:space:]]+([0-9]+\.[0-9]+)$/\2 \3/p' |
		while read -r exp ns; do
			echo "bench ${EXACT}refscale lock=$1 readers=$2 round=$ROUND exp=$exp ns_per_read=$ns"
		done
}

# gtod_rate SECONDS: total gettimeofday(2) calls per second on 2 threads,
# from gtod-load's summary line "  total : N calls R calls/s (...)".
gtod_rate() {
	gtod-load -t 2 -d "$1" -q >"$tmp/load.txt" ||
		die "gtod-load failed"
	awk '$1 == "total" && $2 == ":" && $6 == "calls/s" { print $5 }' "$tmp/load.txt"
}

# attach TOOL: start a tracer and wait until its probes are in place.
#   frlockstat  frlockstat -j 1: its programs and its once-a-second poll
#   makerun     frlockstat -j -c 1: everything make run attaches (the call
#               sites too, and a stack walk per retry and wait)
#   stacks      frlockstat -j -C 1: also a stack walk per write section,
#               which prices one walk
#   selfcost    frlockstat -j -S 1: its programs' run time counted by the
#               kernel (BPF statistics on), which prices -S
#   bpftrace    the two bpftrace tools of bpf/, frlock-hold.bt and
#               frlock-retries.bt (the syscall counting of the latter)
#   empty       a bpftrace program with an empty action on the eight
#               events: the tracepoints' dispatch alone
attach() {
	tools= outs=
	case $1 in
	frlockstat | makerun | stacks | selfcost)
		opt=
		[ "$1" = makerun ] && opt=-c
		[ "$1" = stacks ] && opt=-C
		[ "$1" = selfcost ] && opt=-S
		outs=$tmp/tool-frlockstat.out
		: >"$outs"
		# shellcheck disable=SC2086
		"$top/bpf/.output/frlockstat" -j $opt 1 >"$tmp/tool-frlockstat.ndjson" 2>"$outs" &
		tools=$! ;;
	bpftrace)
		for t in hold retries; do
			# Emptied here: the background job's redirection may come
			# after the wait below has read an older banner.
			: >"$tmp/tool-$t.out"
			bpftrace "$top/bpf/frlock-$t.bt" 1 >"$tmp/tool-$t.out" 2>&1 &
			tools="$tools $!" outs="$outs $tmp/tool-$t.out"
		done ;;
	empty)
		outs=$tmp/tool-empty.out
		: >"$outs"
		bpftrace -e 'BEGIN { printf("Tracing\n"); }
			tracepoint:frlock:*, tracepoint:seqcount:* { }' >"$outs" 2>&1 &
		tools=$! ;;
	esac
	pids=$tools
	set -- $tools
	for f in $outs; do
		wait_attached "$1" "$f" '^Tracing' 1200 ||
			die "$1 did not attach within 120 s: $(tail -n 1 "$f")"
		shift
	done
}

# path_rate SECONDS: stat() lookups per second on 2 threads, no writer,
# from path-load's summary line "path-load: ... s: R lookups/s (...)".
path_rate() {
	path-load -t 2 -d "$1" --writer none /tmp/bench-paths >"$tmp/paths.txt" ||
		die "path-load failed"
	sed -n 's/^path-load: .* s: \([0-9]*\) lookups\/s .*/\1/p' "$tmp/paths.txt"
}

# poller_ticks: the CPU time the attached frlockstat's own process has
# taken (user and system, in USER_HZ ticks: 100 a second).
poller_ticks() {
	set -- $(cut -d' ' -f14,15 "/proc/$tools/stat" 2>/dev/null)
	echo $((${1:-0} + ${2:-0}))
}

# keep TOOL PAIR START END TICKS0 TICKS1: with a results share, make run's
# frlockstat's NDJSON so far and the load's summary with the wall-clock
# seconds the measurement it was attached for began and ended in, and its
# poller's CPU ticks then, for the events it ran a program for per second
# and the poller's share (bench/report).
keep() {
	[ "$1" = makerun ] && [ -d /results ] || return 0
	{ cat "$tmp/load.json"
	  echo "{\"type\":\"window\",\"start\":$3,\"end\":$4,\"poller_ticks\":$(($6 - $5)),\"hz\":100}"
	} >"/results/makerun-$2.load.ndjson"
	# Its last interval, to the end of the load: SIGINT prints it.
	kill -INT $tools 2>/dev/null
	wait_sigint $tools >/dev/null
	cp "$tmp/tool-frlockstat.ndjson" "/results/makerun-$2.frlockstat.ndjson"
	tools=
}

# write_cost LOOPS REPS: write sections, events off and on, interleaved
# (ftrace, frlockstat, make run's frlockstat -j -c, frlockstat -j -C, the
# bpftrace tools), REPS times: the difference is the price of two
# tracepoint hits (and with -C of a stack walk).
write_cost() {
	rep=1
	while [ $rep -le "$2" ]; do
		write_tools "$1" "frlockstat makerun stacks bpftrace"
		rep=$((rep + 1))
	done
}

# write_tools LOOPS TOOLS: one write_cost repetition (rep=$rep): events
# off, ftrace's, then each of TOOLS attached.
write_tools() {
	EXTRA="events=off rep=$rep" frlock_bench test=write loops="$1" rounds=1
	echo 1 >/sys/kernel/tracing/events/frlock/enable
	EXTRA="events=ftrace rep=$rep" frlock_bench test=write loops="$1" rounds=1
	echo 0 >/sys/kernel/tracing/events/frlock/enable
	echo >/sys/kernel/tracing/trace
	for tool in $2; do
		attach $tool
		EXTRA="events=$tool rep=$rep" frlock_bench test=write loops="$1" rounds=1
		detach
	done
}

# --- exact mode: run-guest --icount, 1 vCPU, 1 guest ns per instruction ---

# exact_gtod SECONDS WRITES: gettimeofday(2) calls per guest second on the
# one vCPU (one thread), WRITES adjtimex writes a second beside it.
exact_gtod() {
	gtod-load -t 1 -d "$1" -w "$2" -i 0 -q >"$tmp/load.txt" || die "gtod-load failed"
	awk '$1 == "total" && $2 == ":" && $6 == "calls/s" { print $5 }' "$tmp/load.txt"
}

# now_s: the realtime clock in seconds, to the microsecond (frlockstat's
# records' "ts" is realtime too; busybox's date has no %N).
now_s() {
	adjtimex | awk '$1 == "time.tv_sec:" { s = $2 } $1 == "time.tv_usec:" { u = $2 }
		END { printf "%d.%06d", s, u }'
}

# ftrace_events: the events ftrace's ring buffer took since it was
# cleared, kept or overwritten (entries + overrun, every CPU).
ftrace_events() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats |
		awk '$1 == "entries:" || $1 == "overrun:" { n += $2 } END { print n + 0 }'
}

exact_tracing() {
	for writes in $(echo "$2" | tr , ' '); do
		num "$writes"
		for tool in none $(echo "$3" | tr , ' '); do
			extra=
			case $tool in
			none | frlockstat | makerun | bpftrace | ftrace | perf) ;;
			*) usage ;;
			esac
			case $tool in
			none) calls=$(exact_gtod "$1" "$writes") ;;
			ftrace)
				echo >/sys/kernel/tracing/trace
				echo 1 >/sys/kernel/tracing/events/frlock/enable
				echo 1 >/sys/kernel/tracing/events/seqcount/enable
				calls=$(exact_gtod "$1" "$writes")
				echo 0 >/sys/kernel/tracing/events/frlock/enable
				echo 0 >/sys/kernel/tracing/events/seqcount/enable
				extra="events=$(ftrace_events)"
				echo >/sys/kernel/tracing/trace ;;
			perf)
				# The load is perf's command: its samples are its run's.
				perf record -q -m 1024 -e 'frlock:*' -e 'seqcount:*' -a \
					-o "$tmp/perf.data" -- gtod-load -t 1 -d "$1" -w "$writes" -i 0 -q \
					>"$tmp/load.txt" 2>"$tmp/perf.err" ||
					die "perf record failed: $(tail -n 1 "$tmp/perf.err")"
				calls=$(awk '$1 == "total" && $2 == ":" && $6 == "calls/s" { print $5 }' \
					"$tmp/load.txt")
				perf report -i "$tmp/perf.data" --stats >"$tmp/perf.stats" 2>/dev/null
				# Its samples, and the records of samples it lost or
				# the kernel throttled (perf_event_max_sample_rate).
				extra=$(awk '$2 == "events:" { n[$1] = $3 } END {
					printf "events=%d lost_records=%d throttle_records=%d",
					n["SAMPLE"], n["LOST"], n["THROTTLE"] }' "$tmp/perf.stats")
				rm -f "$tmp/perf.data" ;;
			*)
				attach $tool
				t0=$(now_s)
				calls=$(exact_gtod "$1" "$writes")
				t1=$(now_s)
				extra="start=$t0 end=$t1"
				if [ "$tool" != bpftrace ] && [ -d /results ]; then
					# Its last interval, to the end of the load: SIGINT prints it.
					kill -INT $tools 2>/dev/null
					wait_sigint $tools >/dev/null
					cp "$tmp/tool-frlockstat.ndjson" \
						"/results/exact-$writes-$tool.frlockstat.ndjson"
					tools=
				fi
				detach ;;
			esac
			[ -n "$calls" ] || die "no gettimeofday(2) rate with $tool"
			echo "bench exact-gtod writes=$writes tool=$tool seconds=$1 calls_per_s=$calls $extra"
		done
	done
}

detach() {
	for p in $tools; do kill -INT "$p" 2>/dev/null; done
	for p in $tools; do wait_sigint "$p" >/dev/null; done
	rm -f "$tmp"/tool-*.out
	pids=
}

case ${1:-} in
locks)
	[ $# -eq 5 ] || usage
	num "$2"; num "$3"; num "$4"
	holds=$(echo "$5" | tr , ' ')
	for hold in $holds; do num "$hold"; done
	for r in 1 2; do
		EXTRA= frlock_bench test=read readers=$r loops="$2" rounds="$3"
	done
	for r in 0 1 2; do
		EXTRA= frlock_bench test=lockout readers=$r duration_ms="$4"
	done
	# Readers that arrive mid-write: sections held HOLDS us longer than
	# the copy, with the clock read from the CPU's counter and from the
	# clocksource (the HPET under TCG without tsc=reliable).
	for clock in cycles clocksource; do
		for hold in $holds; do
			EXTRA= frlock_bench test=window hold_us=$hold period_us=4000 readers=1 \
				clock=$clock duration_ms="$4" rounds=1
		done
	done
	write_cost "$2" 2
	;;
refscale)
	# Rounds rotate the order of the types, as frlock_bench's do.
	[ $# -eq 4 ] || usage
	num "$2"; num "$3"; num "$4"
	set -- "$2" "$3" "$4" rwlock seqcount frlock
	ROUND=0
	while [ $ROUND -lt "$3" ]; do
		types="$4 $5 $6"
		k=0
		while [ $k -lt $((ROUND % 3)) ]; do
			types="${types#* } ${types%% *}"
			k=$((k + 1))
		done
		for t in $types; do
			for r in 1 2; do
				refscale "$t" "$r" "$1" "$2"
			done
		done
		ROUND=$((ROUND + 1))
	done
	;;
gtod)
	[ $# -eq 5 ] || usage
	num "$3"; num "$4"
	for w in $(echo "$5" | tr , ' '); do
		case $w in
		gtod) echo "bench gtod kernel=$2 run=$4 calls_per_s=$(gtod_rate "$3")" ;;
		paths) echo "bench paths kernel=$2 run=$4 lookups_per_s=$(path_rate "$3")" ;;
		*) usage ;;
		esac
	done
	;;
exact-calls)
	[ $# -eq 3 ] || usage
	num "$3"
	# The boot's deferred work done first: under -icount sleep=off an idle
	# guest's clock jumps ahead, so this costs no host time.
	sleep 2
	echo "bench exact-calls kernel=$2 workload=gtod per_s=$(exact_gtod "$3" 0)"
	path-load -t 1 -d "$3" --writer none /tmp/bench-paths >"$tmp/paths.txt" ||
		die "path-load failed"
	echo "bench exact-calls kernel=$2 workload=paths per_s=$(sed -n \
		's/^path-load: .* s: \([0-9]*\) lookups\/s .*/\1/p' "$tmp/paths.txt")"
	;;
exact-locks)
	[ $# -eq 2 ] || usage
	num "$2"
	# Their lines named exact-read, exact-refscale, exact-write.
	EXACT=exact-
	EXTRA= frlock_bench test=read readers=1 loops="$2" rounds=1
	ROUND=0
	for t in rwlock seqcount frlock; do
		refscale "$t" 1 "$2" 1
	done
	rep=1
	write_tools "$2" "empty frlockstat makerun selfcost bpftrace"
	;;
exact-tracing)
	[ $# -eq 3 ] || [ $# -eq 4 ] || usage
	num "$2"
	exact_tracing "$2" "$3" "${4:-frlockstat,makerun,bpftrace,ftrace,perf}"
	;;
write)
	[ $# -eq 3 ] || usage
	num "$2"; num "$3"
	write_cost "$2" "$3"
	;;
tracing)
	# Pairs inside one boot: nothing attached, then the tool (or the tool
	# first, every other pair), so that the guest's and the host's drift
	# falls on both sides of each ratio.
	[ $# -eq 3 ] || [ $# -eq 4 ] || usage
	num "$2"; num "$3"
	which=${4:-frlockstat,makerun,bpftrace}
	pair=1
	while [ $pair -le "$3" ]; do
		for tool in $(echo "$which" | tr , ' '); do
			case $tool in frlockstat | makerun | bpftrace) ;; *) usage ;; esac
			if [ $((pair % 2)) = 1 ]; then
				none=$(gtod_rate "$2")
				attach $tool
				t0=$(date +%s) p0=$(poller_ticks)
				with=$(gtod_rate "$2")
				keep $tool $pair "$t0" "$(date +%s)" "$p0" "$(poller_ticks)"
				detach
			else
				attach $tool
				t0=$(date +%s) p0=$(poller_ticks)
				with=$(gtod_rate "$2")
				keep $tool $pair "$t0" "$(date +%s)" "$p0" "$(poller_ticks)"
				detach
				none=$(gtod_rate "$2")
			fi
			echo "bench tracing tool=$tool pair=$pair none=$none with=$with"
		done
		pair=$((pair + 1))
	done
	;;
*) usage ;;
esac
