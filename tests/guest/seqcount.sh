#!/bin/sh
# Runs inside the guest on a kernel with the seqcount events: real workloads
# make named sequence locks retry, and frlockstat must report the same
# retries and writes as ftrace's own hist triggers on the same events. The
# guest keeps both in /results/seqcount (run-guest --results); the host
# compares them (host/judge-seqcount: frlock/judges/seqcount.py).
#
#  - renames against path lookups and getcwd(): rename_lock and d_seq;
#  - mounts and unmounts against lookups that cross the mount point:
#    mount_lock;
#  - the tick: jiffies_seq's writes. Its one reader on 64-bit is a CPU
#    going idle (tick_nohz_next_event(), NO_HZ_IDLE), which a busy guest
#    seldom meets in a write section: the check counts its retries and
#    does not ask for any. Each write section advances jiffies by the
#    ticks since the last one, which is more than one when the tick came
#    late (a vCPU the host did not run): the host compares the sections
#    with the jiffies they advanced, and jiffies with the guest's own
#    clock, both read from /proc/timer_list around the triggers' window;
#  - with "stock-timekeeping", on the seqcount series alone (kernel/build
#    --series seqcount: 6.1's own timekeeping): gettimeofday readers
#    against adjtimex writers on tk_core.seq.
#
# The events carry no name (series v4): the hist triggers count per lock
# address, lock.sym naming the static ones (rename_lock, mount_lock,
# jiffies_seq, tk_core: its seqcount is its first member). Every lock
# outside the kernel image counts as one instance, "heap": under the rename
# storm, the dentries' d_seq (frlockstat names them dentry.d_seq, by their
# slab cache), which the check shows by the writers of those locks.
# frlockstat is attached first and stopped last, so that its window holds
# the triggers' window.
#
# usage: seqcount.sh [frlock|stock-timekeeping] [SECONDS]
#	(default frlock 5: the kernel, and each workload's length)
REPO=/opt/frlock
F=$REPO/bpf/.output/frlockstat
T=/sys/kernel/tracing
E=$T/events/seqcount
MODE=${1:-frlock}
SECS=${2:-5}
case $MODE in
frlock|stock-timekeeping) ;;
*) echo "usage: seqcount.sh [frlock|stock-timekeeping] [SECONDS]" >&2; exit 2 ;;
esac
# shellcheck source=guest-rootfs/lib.sh
. "$REPO/guest-rootfs/lib.sh"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

if [ ! -d $E ]; then
	skip "seqcount workloads: no seqcount events (a kernel without patch 4)"
	exit 0
fi
if [ ! -x "$F" ]; then
	not_ok "seqcount workloads: frlockstat is built (no $F: run make -C bpf)"
	exit 0
fi
OUT=/results/seqcount
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "seqcount workloads: $OUT is writable (run-guest --results)"
	exit 0
fi
echo "$MODE $SECS" >"$OUT/mode"
: >"$OUT/workloads"

# workload NAME COMMAND...: frlockstat, then the hist triggers, then COMMAND;
# the triggers are paused before frlockstat stops. Leaves NAME.fs (its
# JSON), NAME.{retry,write,wait} (the hists) and NAME.load in $OUT, and
# /proc/timer_list (jiffies and the monotonic clock) read just before the
# triggers start and just after they pause, in NAME.timer_list.{begin,end}.
workload() {
	_w=$1
	shift
	"$F" -j -c >"$OUT/$_w.fs" 2>"$tmp/$_w.fs.err" &
	_fs=$!
	if ! wait_attached $_fs "$tmp/$_w.fs.err" 'Tracing' 600; then
		cat "$tmp/$_w.fs.err"
		not_ok "$_w: frlockstat attached"
		return 1
	fi
	cat /proc/timer_list >"$OUT/$_w.timer_list.begin"
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev on
	done
	"$@" >"$OUT/$_w.load" 2>&1
	_rc=$?
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev pause
	done
	cat /proc/timer_list >"$OUT/$_w.timer_list.end"
	kill -INT $_fs
	wait_sigint $_fs
	cp $E/seqcount_read_retry/hist "$OUT/$_w.retry"
	cp $E/seqcount_write_begin/hist "$OUT/$_w.write"
	cp $E/seqcount_read_wait/hist "$OUT/$_w.wait"
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev off
	done
	echo "$_w $_rc" >>"$OUT/workloads"
}

# Renames against lookups and getcwd(), then the plain command during a
# rename storm: `frlockstat 1 5`, no configuration. A retry needs a
# reader's pass to overlap a rename on the other vCPU, which a loaded host
# seldom grants (0 rename_lock retries in one make test beside other
# guests, 590 in another): the storm runs again, twice as long each time,
# until ftrace's hist trigger counted retries of rename_lock and of a
# dentry's d_seq, at most RENAME_RUNS times (8, 16, 32 s in make test);
# the plain command likewise until its table shows both retried. The host
# judges the last run, and rename.runs / plain.runs say what each counted.
RENAME_RUNS=3
: >"$OUT/rename.runs"
secs=$SECS n=0
while [ $n -lt $RENAME_RUNS ]; do
	n=$((n + 1))
	sed -i '/^rename /d' "$OUT/workloads"
	workload rename path-load -d "$secs" -j --writer rename /tmp/pl-rename
	counts=$(hist_instances "$OUT/rename.retry" | awk '
		$1 == "rename_lock" { r = $2 } $1 == "heap" { h = $2 }
		END { print r + 0, h + 0 }')
	echo "$secs $counts" >>"$OUT/rename.runs"
	case $counts in 0\ * | *\ 0) ;; *) break ;; esac
	secs=$((secs * 2))
done
echo "$RENAME_RUNS" >"$OUT/rename.bound"
: >"$OUT/plain.runs"
secs=$SECS n=0
while [ $n -lt $RENAME_RUNS ]; do
	n=$((n + 1))
	path-load -d $((secs + 8)) --writer rename /tmp/pl-plain >"$tmp/plain.load" 2>&1 &
	plain=$!
	"$F" 1 $((secs * 5 / SECS)) >"$OUT/plain.txt" 2>&1
	wait $plain
	both=$(awk '$1 == "rename_lock" && $7 + 0 > 0 { r = 1 } $1 == "dentry.d_seq" && $7 + 0 > 0 { d = 1 }
		END { print (r && d) ? "yes" : "no" }' "$OUT/plain.txt")
	echo "$((secs * 5 / SECS)) $both" >>"$OUT/plain.runs"
	[ "$both" = no ] || break
	secs=$((secs * 2))
done
# Path-walk fallbacks (frlockstat -W) in a rename storm, against an
# independent count in the same run: echild.bt's kretprobes count the
# returns of -ECHILD of path_lookupat, path_openat and path_parentat called
# with LOOKUP_RCU. frlockstat attaches first and stops last, bpftrace
# inside its window, the storm inside bpftrace's; nothing else renames, so
# no walk falls back outside the storm and the counts must be equal. A
# fallback needs a rename to land inside a lookup's RCU walk (7 in 320,000
# lookups in one 5 s storm): the storm runs again, twice as long, until
# echild.bt counted a fallback, at most RENAME_RUNS times; walk.runs says
# what each run counted, and the host checks that frlockstat charged them
# to rename_lock or a dentry's d_seq.
: >"$OUT/walk.runs"
secs=$SECS n=0
while [ $n -lt $RENAME_RUNS ]; do
	n=$((n + 1))
	"$F" -W -j >"$OUT/walk.fs" 2>"$tmp/walk.fs.err" &
	fs=$!
	if ! wait_attached $fs "$tmp/walk.fs.err" 'Tracing' 600; then
		cat "$tmp/walk.fs.err"
		not_ok "path-walk fallbacks: frlockstat -W attached"
		break
	fi
	bpftrace "$(dirname "$0")/echild.bt" >"$OUT/walk.bt" 2>"$tmp/walk.bt.err" &
	bt=$!
	if ! wait_attached $bt "$OUT/walk.bt" 'Tracing' 900; then
		cat "$tmp/walk.bt.err"
		not_ok "path-walk fallbacks: echild.bt attached"
		kill -INT $fs
		wait_sigint $fs
		break
	fi
	path-load -d "$secs" -j --writer rename /tmp/pl-walk >"$OUT/walk.load" 2>&1
	kill -INT $bt
	wait_sigint $bt
	kill -INT $fs
	wait_sigint $fs
	# bpftrace's text: "@echild[path_lookupat]: 7" (the host judges the JSON)
	fell=$(awk '/^@echild\[/ { n += $2 } END { print n + 0 }' "$OUT/walk.bt")
	echo "$secs $fell" >>"$OUT/walk.runs"
	[ "$fell" -eq 0 ] || break
	secs=$((secs * 2))
done
# Mounts against lookups that cross the mount point; the tick alone.
workload mount path-load -d "$SECS" -j --writer mount /tmp/pl-mount
workload tick sleep "$SECS"
# gettimeofday on stock timekeeping: tk_core.seq is a seqcount there.
[ "$MODE" != stock-timekeeping ] || workload gtod gtod-load -t 2 -d "$SECS" -w 500 -i 0
rm -rf "$tmp"
