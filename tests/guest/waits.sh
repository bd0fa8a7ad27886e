#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat's waits against a
# writer whose hold is known, and frlockstat -S, its own cost. The guest
# runs and keeps what frlockstat printed in /results/waits (run-guest
# --results); the host judges it (host/judge-waits: frlock/waitjudge.py
# says what each run must show).
#
# - dispatch: frlock_bench test=write, frlock's write sections with
#   nothing attached, with frlockstat -k frlock, and with frlockstat -S
#   -k frlock, interleaved REPS times: per section two tracepoint hits
#   (begin, end), each the tracepoint's dispatch and the program; -S's
#   statistics time the programs alone, so the rest is the dispatch.
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
OUT=/results/waits
HOLD=${1:-150}
REPS=${2:-3}
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh

if [ ! -x "$F" ]; then
	not_ok "frlockstat is built (no $F: run make -C bpf)"
	exit 0
fi
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "waits: $OUT is writable (run-guest --results)"
	exit 0
fi
rc() { echo "$1 $2" >>"$OUT/rc"; }
: >"$OUT/rc"
echo "$HOLD" >"$OUT/hold_us"

# attached NAME ARGS...: frlockstat ARGS in the background, its stdout in
# NAME.json, once it has attached. Sets stat.
attached() {
	_a_name=$1
	shift
	"$F" "$@" >"$OUT/$_a_name.json" 2>"$OUT/$_a_name.err" &
	stat=$!
	wait_attached $stat "$OUT/$_a_name.err" '^Tracing' 600
}

# bench NAME ARGS...: frlock_bench with ARGS, its result lines in NAME.dmesg.
bench() {
	_b_name=$1
	shift
	dmesg -c >/dev/null
	modprobe frlock_bench "$@" 2>>"$OUT/modprobe.err"
	rc "$_b_name" $?
	dmesg | grep 'frlock_bench: ' >>"$OUT/$_b_name.dmesg"
	rmmod frlock_bench 2>/dev/null
}

# The tracepoint's dispatch: frlock's write sections, off, with
# frlockstat, with frlockstat -S (REPS times, interleaved).
rep=1
while [ "$rep" -le "$REPS" ]; do
	bench write-off test=write loops=200000 rounds=1
	attached write-on -j -k frlock 600
	bench write-on test=write loops=200000 rounds=1
	kill -INT $stat
	wait_sigint $stat
	attached write-self.$rep -j -S -k frlock 600
	bench write-self test=write loops=200000 rounds=1
	kill -INT $stat
	wait_sigint $stat
	rc write-self.$rep $?
	rep=$((rep + 1))
done

# Waits on a write section held HOLD us, then on one holding its copy only.
for phase in hold short; do
	h=$HOLD
	[ $phase = short ] && h=0
	attached $phase -j -S -k frlock 600
	bench $phase test=window hold_us=$h period_us=4000 readers=1 clock=cycles \
		duration_ms=2000 rounds=1
	kill -INT $stat
	wait_sigint $stat
	rc $phase.stat $?
done

# -S as text and in the Prometheus page, under gettimeofday load.
"$F" -S -P /tmp/self.prom 3 2 >"$OUT/text.txt" 2>"$OUT/text.err" &
stat=$!
wait_attached $stat "$OUT/text.txt" '^Tracing' 600
gtod-load -t 1 -d 4 -w 500 -i 0 >/dev/null 2>&1
cp /tmp/self.prom "$OUT/self.prom" 2>/dev/null
wait $stat
rc text $?
exit 0
