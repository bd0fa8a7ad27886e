#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat under a
# gettimeofday syscall load with adjtimex writers, file churn, a rename
# storm and the benchmark module's writer. The guest runs the tool and
# keeps what it printed in /results/frlockstat (run-guest --results); the
# host judges it (host/judge-frlockstat: frlock/judges/frlockstat.py says what
# each run must show).
#
# usage: frlockstat.sh [modes [FRLOCKSTAT [SITES]]]
#   modes: only the first runs (-j SITES under gettimeofday load, tp_btf and
#   raw_tp), with FRLOCKSTAT (default the x86-64 build) and SITES (default
#   -c; its record in modes.opt): make test-long's i386 guest, with
#   bpf/.output-i386/frlockstat (judge-frlockstat --modes).
ONLY=${1:-}
F=${2:-/opt/frlock/bpf/.output/frlockstat}
SITES=${3:--c}
OUT=/results/frlockstat
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh

if [ ! -x "$F" ]; then
	not_ok "frlockstat is built (no $F: run make -C bpf)"
	exit 0
fi
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "frlockstat: $OUT is writable (run-guest --results)"
	exit 0
fi
# rc NAME STATUS: a run's exit status, for the judge.
rc() { echo "$1 $2" >>"$OUT/rc"; }
: >"$OUT/rc"
echo "$SITES" >"$OUT/modes.opt"

# attached_run NAME ARGS...: frlockstat ARGS in the background, its stdout
# in NAME.json; returns once it has attached (its start, BTF and the
# verifier, takes seconds under TCG). Sets stat.
attached_run() {
	_ar_name=$1
	shift
	"$F" "$@" >"$OUT/$_ar_name.json" 2>"$tmp/$_ar_name.err" &
	stat=$!
	wait_attached $stat "$tmp/$_ar_name.err" '^Tracing' 600
}

# -j -c under gettimeofday load, with tp_btf and with raw_tp programs.
for mode in tp_btf raw_tp; do
	opt=
	[ $mode = raw_tp ] && opt=-r
	# shellcheck disable=SC2086
	attached_run $mode $opt -j "$SITES" 6 1
	gtod-load -t 2 -d 5 -w 1000 -i 0 >/dev/null 2>&1
	wait $stat
	rc $mode $?
done
if [ "$ONLY" = modes ]; then
	rm -rf "$tmp"
	exit 0
fi

# Running totals, printed as differences, over intervals ended by Ctrl-C.
attached_run intervals -j 1
gtod-load -t 2 -d 4 -w 500 -i 0 >/dev/null 2>&1
kill -INT $stat
wait_sigint $stat
rc intervals $?

# The table: -L with a name no lock has, every kind (-w: wide), each kind
# alone, the top row only, one static seqcount by name and by address.
"$F" -L no_such_lock 2 1 >"$OUT/filter.txt" 2>&1
rc filter $?
"$F" -w 2 1 >"$OUT/all.txt" 2>&1
"$F" -k seqcount 2 1 >"$OUT/seqcount.txt" 2>&1
"$F" -k frlock 2 1 >"$OUT/frlock.txt" 2>&1
"$F" -n 1 2 1 >"$OUT/top1.txt" 2>&1
"$F" -L jiffies_seq -C 2 1 >"$OUT/jiffies.txt" 2>&1
addr=$(awk '$3 == "jiffies_seq" { print "0x" $1; exit }' /proc/kallsyms)
echo "$addr" >"$OUT/jiffies_seq.addr"
"$F" -L "$addr" 2 1 >"$OUT/byaddr.txt" 2>&1
"$F" -h >"$OUT/help.txt" 2>&1

# Names: creating and removing files kills dentries, which writes their
# d_seq; chdir writes each task's fs_struct's seq while the hrtimer bases'
# per-CPU seq is written as timers run: two counters the call sites both
# spell "seq".
attached_run dseq -j -L dentry.d_seq 4 1
i=0
while [ $i -lt 400 ]; do
	: >"$tmp/churn.$i" && rm -f "$tmp/churn.$i"
	i=$((i + 1))
done
wait $stat
rc dseq $?
attached_run seq -j -w -k seqcount 4 1
i=0
while [ $i -lt 300 ]; do
	cd /tmp && cd /
	i=$((i + 1))
done
wait $stat
rc seq $?

# A rename storm: rename_lock's and the dentries' readers wait and retry.
mkdir -p /tmp/fs-rename
path-load -d 40 --writer rename /tmp/fs-rename >"$tmp/rename.load" 2>&1 &
load=$!
sleep 2
"$F" -c -k seqcount 4 1 >"$OUT/storm-c.txt" 2>&1
"$F" 2 1 >"$OUT/storm.txt" 2>&1
kill $load 2>/dev/null
wait $load 2>/dev/null

# The join against a writer whose site and hold time are known: the
# benchmark module's hard-irq writer holds bench_sc (a seqcount) HOLD us
# longer than its copy, every 4 ms, against a reader on the other CPU.
HOLD=200
echo "$HOLD" >"$OUT/join.hold_us"
attached_run join -j -c -k seqcount 60
modprobe frlock_bench test=window hold_us=$HOLD period_us=4000 readers=1 clock=cycles \
	duration_ms=2000 rounds=1 2>"$tmp/join.modprobe"
rc bench $?
kill -INT $stat
wait_sigint $stat
dmesg | grep 'frlock_bench: window lock=seqcount' >"$OUT/join.dmesg"
# The module's functions, before it goes.
grep '\[frlock_bench\]' /proc/kallsyms | awk '{ print $3 }' | sort -u >"$OUT/join.syms"
rmmod frlock_bench 2>/dev/null
rm -rf "$tmp"
