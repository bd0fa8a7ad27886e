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
#        guest.sh tracing SECONDS PAIRS [TOOLS]	the same, nothing attached against
#							each tracer attached (of TOOLS,
#							default frlockstat,makerun,bpftrace),
#							PAIRS times;
#							with /results (run-guest --results),
#							make run's frlockstat's NDJSON and
#							the load's of each pair are kept
#							there (bench/report: events/s)
here=$(cd "$(dirname "$0")" && pwd)
top=${here%/bench}
tmp=$(mktemp -d /tmp/bench.XXXXXX)
pids=
trap 'for p in $pids; do kill -INT $p 2>/dev/null; done; rm -rf "$tmp"' EXIT
usage() { echo "usage: guest.sh locks LOOPS ROUNDS LOCKOUT_MS HOLDS | refscale LOOPS RUNS ROUNDS | gtod KERNEL SECONDS RUN WORKLOADS | write LOOPS REPS | tracing SECONDS PAIRS [TOOLS]" >&2; exit 2; }
die() { echo "guest.sh: $*" >&2; exit 1; }
. "$top/guest-rootfs/lib.sh"
num() { case $1 in '' | *[!0-9]*) usage ;; esac; }

# modprobe frlock_bench PARAMS...: the module's result lines, as bench lines.
frlock_bench() {
	dmesg -c >/dev/null
	modprobe frlock_bench "$@" 2>"$tmp/modprobe.err" ||
		die "modprobe frlock_bench $*: $(cat "$tmp/modprobe.err"; dmesg | grep frlock_bench | tail -1)"
	rmmod frlock_bench
	dmesg | sed -n 's/.*frlock_bench: \(read\|lockout\|write\|window\) /bench \1 /p' | sed "s/\$/ $EXTRA/"
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
			echo "bench refscale lock=$1 readers=$2 round=$ROUND exp=$exp ns_per_read=$ns"
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
#   bpftrace    the two bpftrace tools of bpf/, frlock-hold.bt and
#               frlock-retries.bt (the syscall counting of the latter)
attach() {
	tools= outs=
	case $1 in
	frlockstat | makerun | stacks)
		opt=
		[ "$1" = makerun ] && opt=-c
		[ "$1" = stacks ] && opt=-C
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
		EXTRA="events=off rep=$rep" frlock_bench test=write loops="$1" rounds=1
		echo 1 >/sys/kernel/tracing/events/frlock/enable
		EXTRA="events=ftrace rep=$rep" frlock_bench test=write loops="$1" rounds=1
		echo 0 >/sys/kernel/tracing/events/frlock/enable
		echo >/sys/kernel/tracing/trace
		for tool in frlockstat makerun stacks bpftrace; do
			attach $tool
			EXTRA="events=$tool rep=$rep" frlock_bench test=write loops="$1" rounds=1
			detach
		done
		rep=$((rep + 1))
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
