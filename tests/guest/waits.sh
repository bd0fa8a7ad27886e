#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat's waits against a
# writer whose hold is known, and frlockstat -S, its own cost. The guest
# runs and keeps what frlockstat printed in /results/waits (run-guest
# --results); the host judges it (host/judge-waits: frlock/waitjudge.py
# says what each run must show).
#
# - dispatch: frlock_bench test=write, frlock's write sections with
#   nothing attached, with empty tp_btf programs (tests/bpf/empty_probe),
#   with frlockstat -k frlock, and with frlockstat -S -k frlock,
#   interleaved REPS times: per section two tracepoint hits (begin, end);
#   an empty program's hit is the dispatch, frlockstat's the dispatch and
#   its program, which -S's statistics time alone.
# - hold: the benchmark module's hard-irq writer holds bench_fr (an
#   frlock) HOLD us longer than its copy, every 4 ms, against a reader
#   on the other CPU, with frlockstat -j -S -k frlock attached through
#   one interval.
# - short: the same writer holding only its copy: a write section about
#   as long as the wait event's dispatch, where the end can come before
#   the wait's program reads the clock.
# - text, prom: frlockstat -S's table and its Prometheus page.
#
# usage: waits.sh [HOLD_US] [REPS]
F=/opt/frlock/bpf/.output/frlockstat
E=/opt/frlock/bpf/.output/empty_probe
OUT=/results/waits
HOLD=${1:-150}
REPS=${2:-3}
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh

if [ ! -x "$F" ] || [ ! -x "$E" ]; then
	not_ok "frlockstat and empty_probe are built (no $F or $E: run make -C bpf)"
	exit 0
fi
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "waits: $OUT is writable (run-guest --results)"
	exit 0
fi
rc() { echo "$1 $2" >>"$OUT/rc"; }
: >"$OUT/rc"
echo "$HOLD" >"$OUT/hold_us"

# attached NAME PROG ARGS...: PROG ARGS in the background, its stdout in
# NAME.json, once it has attached. Sets stat.
attached() {
	_a_name=$1
	shift
	# Emptied first: the background job's redirection may come after the
	# wait below has read the banner of the run before.
	: >"$OUT/$_a_name.err"
	"$@" >"$OUT/$_a_name.json" 2>>"$OUT/$_a_name.err" &
	stat=$!
	wait_attached $stat "$OUT/$_a_name.err" '^Tracing' 600
}

# bench NAME ARGS...: frlock_bench with ARGS (the module stays loaded, so
# that frlockstat names its lock: unload), its result lines in NAME.dmesg.
bench() {
	_b_name=$1
	shift
	dmesg -c >/dev/null
	modprobe frlock_bench "$@" 2>>"$OUT/modprobe.err"
	rc "$_b_name" $?
	dmesg | grep 'frlock_bench: ' >>"$OUT/$_b_name.dmesg"
}
unload() { rmmod frlock_bench 2>/dev/null; }

# stopped NAME: stop the attached tool, its exit status as NAME's.
stopped() {
	kill -INT $stat
	wait_sigint $stat
	rc "$1" $?
}

# The tracepoint's dispatch: frlock's write sections with nothing
# attached, with empty programs, with frlockstat, and with frlockstat -S
# (REPS times, interleaved).
W="test=write loops=200000 rounds=1"
rep=1
while [ "$rep" -le "$REPS" ]; do
	# shellcheck disable=SC2086
	{
		bench write-off $W
		unload
		attached write-empty $E
		bench write-empty $W
		stopped write-empty.$rep
		unload
		attached write-on "$F" -j -k frlock 600
		bench write-on $W
		stopped write-on.$rep
		unload
		attached write-self.$rep "$F" -j -S -k frlock 600
		bench write-self $W
		stopped write-self.$rep
		unload
	}
	rep=$((rep + 1))
done

# Waits on a write section held HOLD us, then on one holding its copy only.
# A wait needs the reader's vCPU to run while the writer's holds the
# section; a loaded host that runs the two in turn gives none (one make
# test beside other guests: 527 retries, 0 waits in 4 s). So each phase
# runs again, twice as long each time, until ftrace's own hist trigger on
# frlock_read_wait counted a wait of the module's reader, at most
# WAIT_RUNS times (4, 8, 16, 32 s); the host judges the last run's
# frlockstat output, and NAME.runs says what each run counted.
WAIT_RUNS=4
for phase in hold short; do
	h=$HOLD
	[ $phase = short ] && h=0
	: >"$OUT/$phase.runs"
	ms=4000 n=0
	while [ $n -lt $WAIT_RUNS ]; do
		n=$((n + 1))
		read_wait_hist on
		attached $phase "$F" -j -S -k frlock 600
		bench $phase test=window hold_us="$h" period_us=4000 readers=1 clock=cycles \
			duration_ms=$ms rounds=1
		stopped $phase.stat
		# Read while the module is loaded: its reader's symbol names it.
		cp "$READ_WAIT_EVENT/hist" "$OUT/$phase.waits.hist"
		unload
		read_wait_hist off
		waits=$(waits_of frlock_bench "$OUT/$phase.waits.hist")
		echo "$ms $waits" >>"$OUT/$phase.runs"
		[ "$waits" -eq 0 ] || break
		ms=$((ms * 2))
	done
	echo "$WAIT_RUNS" >"$OUT/$phase.bound"
done

# -S as text and in the Prometheus page, under gettimeofday load.
"$F" -S -P /tmp/self.prom 3 3 >"$OUT/text.txt" 2>"$OUT/text.err" &
stat=$!
wait_attached $stat "$OUT/text.txt" '^Tracing' 600
gtod-load -t 1 -d 4 -w 500 -i 0 >/dev/null 2>&1
# The page is there from the first interval's end (late under TCG) to the exit.
wait_attached $stat /tmp/self.prom '^frlock_poller_cpu_seconds_total' 100
cp /tmp/self.prom "$OUT/self.prom" 2>/dev/null
wait $stat
rc text $?
exit 0
