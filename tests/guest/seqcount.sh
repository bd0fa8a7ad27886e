#!/bin/sh
# Runs inside the guest on a kernel with the seqcount events: real workloads
# make named sequence locks retry, and frlockstat reports the same retries
# and writes as ftrace's own hist triggers on the same events.
#
#  - renames against path lookups and getcwd(): rename_lock and d_seq;
#  - mounts and unmounts against lookups that cross the mount point:
#    mount_lock;
#  - the tick: jiffies_seq's writes. This guest's kernel has no NO_HZ, and
#    on 64-bit nothing else reads jiffies_seq, so it has writes and no
#    retries; the check says so;
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
# the triggers' window. The workloads make the only retries of these locks
# in between, so the retries must be equal; writes also come from
# elsewhere (the tick, the shell), so frlockstat must count at least as
# many.
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


# hist_callers HIST INSTANCE: the call sites of INSTANCE's hits, "FUNCTION
# HITS" lines, most first.
hist_callers() {
	awk -v want="$2" '/^[{] lock:/ {
		sym = ""
		if (match($0, /\] [^,]*,/)) sym = substr($0, RSTART + 2, RLENGTH - 3)
		sub(/ +$/, "", sym)
		sub(/\+0x[0-9a-f]*\/0x[0-9a-f]*$/, "", sym)
		key = (sym != "" && sym !~ /^0x/) ? sym : "heap"
		if (key != want) next
		c = $0; sub(/.*caller: \[[0-9a-f]*\] */, "", c); sub(/[+ ].*/, "", c)
		n = $0; sub(/.*hitcount: */, "", n)
		hits[c] += n
	}
	END { for (c in hits) print c, hits[c] }' "$1" | sort -k2 -rn
}

# The functions that write a dentry's d_seq: fs/dcache.c's __d_move,
# ___d_drop, __d_instantiate, __d_add and dentry_unlink_inode, or the
# d_*/dentry_* functions they are inlined into, GCC's split parts too
# (__d_drop.part.0).
DCACHE_WRITERS='^_*(d|dentry)_[a-z_]*(\.[a-z]*\.[0-9]*)? |^dput |^shrink_dentry_list '

# hist_count EVENT INSTANCE: the hits of INSTANCE, -1 if the hist dropped
# entries.
hist_count() {
	hist_instances $E/$1/hist >"$tmp/hist" || { echo -1; return; }
	awk -v want="$2" '$1 == want { n = $2 } END { print n + 0 }' "$tmp/hist"
}

# fs_count FILE INSTANCE FIELD: FIELD of frlockstat's final JSON object for
# INSTANCE (no interval: one object per instance, the run's totals).
fs_count() {
	grep '^{"type":"frlockstat",' "$1" | grep -F "\"lock\":\"$2\"" | tail -1 |
		sed -n "s/.*\"$3\":\\([0-9]*\\).*/\\1/p"
}

# workload NAME COMMAND...: frlockstat, then the hist triggers, then COMMAND;
# the triggers are paused before frlockstat stops. Leaves $tmp/NAME.fs (its
# JSON) and $tmp/NAME.{retry,write,wait} (the hists).
workload() {
	_w=$1
	shift
	"$F" -j -c >"$tmp/$_w.fs" 2>"$tmp/$_w.fs.err" &
	_fs=$!
	if ! wait_attached $_fs "$tmp/$_w.fs.err" 'Tracing' 600; then
		cat "$tmp/$_w.fs.err"
		not_ok "$_w: frlockstat attached"
		return 1
	fi
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev on
	done
	"$@" >"$tmp/$_w.load" 2>&1
	_rc=$?
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev pause
	done
	kill -INT $_fs
	wait_sigint $_fs
	cat "$tmp/$_w.load"
	cp $E/seqcount_read_retry/hist "$tmp/$_w.retry"
	cp $E/seqcount_write_begin/hist "$tmp/$_w.write"
	cp $E/seqcount_read_wait/hist "$tmp/$_w.wait"
	return $_rc
}

# agree NAME INSTANCE [ROW]: frlockstat's retries of INSTANCE (its row ROW,
# if frlockstat names it otherwise: every dentry's d_seq is dentry.d_seq,
# by its slab cache's type) equal the hist
# triggers' count but for the retry events it reported missed, and are more
# than 0 (NOZERO=0 allows 0); its writes are at least the triggers' count.
agree() {
	_h_retries=$(hist_count seqcount_read_retry "$2")
	_h_writes=$(hist_count seqcount_write_begin "$2")
	# The heap holds other seqcounts than the dentries' (per-CPU hrtimer
	# bases, inodes, ...): its d_seq writes are dcache's.
	[ "$2" != heap ] || _h_writes=$(hist_callers "$E/seqcount_write_begin/hist" heap |
		grep -E "$DCACHE_WRITERS" | awk '{ n += $2 } END { print n + 0 }')
	_f_retries=$(fs_count "$tmp/$1.fs" "${3:-$2}" retries)
	_f_writes=$(fs_count "$tmp/$1.fs" "${3:-$2}" writes)
	echo "  $1: $2: retries ftrace=$_h_retries frlockstat=$_f_retries, writes ftrace=$_h_writes frlockstat=$_f_writes"
	if [ "${NOZERO:-1}" = 1 ]; then
		check "$1: $2 retried ($_h_retries retries counted by ftrace's hist trigger)" \
			test "$_h_retries" -gt 0
	fi
	# A retry in an interrupt that lands while frlockstat's retry program
	# runs in the task it interrupted is not run (the kernel's recursion
	# guard): frlockstat counts those misses and says so, for every lock.
	_missed=$(grep '^{"type":"frlockstat_missed",' "$tmp/$1.fs" | tail -1 |
		sed -n 's/.*"seqcount_read_retry":\([0-9]*\).*/\1/p')
	# AMBIENT=1: the kernel's own readers retry this lock too (the timer
	# interrupt reads tk_core), also in frlockstat's wider window, so it may
	# count more; it must still have lost none that ftrace counted.
	if [ "${AMBIENT:-0}" = 1 ]; then
		check "$1: frlockstat saw every retry of $2 that ftrace counted ($_f_retries + ${_missed:-0} missed >= $_h_retries)" \
			test $((${_f_retries:-0} + ${_missed:-0})) -ge "$_h_retries"
	else
		check "$1: frlockstat reports $2's retries as ftrace counts them ($_f_retries, $_h_retries; ${_missed:-0} missed retry events reported)" \
			test "${_f_retries:-0}" -le "$_h_retries" -a $((${_f_retries:-0} + ${_missed:-0})) -ge "$_h_retries"
	fi
	# Writes also come from outside the workload (the tick, the shell's own
	# files), and frlockstat's window holds the triggers': it must have
	# seen every write they counted.
	check "$1: frlockstat saw every write of $2 that ftrace counted ($_f_writes >= $_h_writes)" \
		test "${_f_writes:-0}" -ge "$_h_writes" -a "$_h_writes" -gt 0
}

# --- Renames against lookups ------------------------------------------------
workload rename path-load -d "$SECS" -j --writer rename /tmp/pl-rename
check "rename: path-load ran ($(tail -1 "$tmp/rename.load"))" \
	grep -q '"write_errors":0' "$tmp/rename.load"
agree rename rename_lock
# The heap's retried locks are the dentries' d_seq: every write of a heap
# lock that retried is dcache's (fs/dcache.c writes d_seq in __d_move,
# ___d_drop, __d_instantiate, __d_add and dentry_unlink_inode, or the
# d_*/dentry_* functions they are inlined into).
awk 'NR == FNR { if (/^[{] lock: \[[0-9a-f]*\] 0x/) { sub(/^[{] lock: \[/, ""); sub(/\].*/, ""); r[$0] = 1 } next }
	/^[{] lock: \[[0-9a-f]*\] 0x/ {
		a = $0; sub(/^[{] lock: \[/, "", a); sub(/\].*/, "", a)
		if (!(a in r)) next
		c = $0; sub(/.*caller: \[[0-9a-f]*\] */, "", c); sub(/[+ ].*/, "", c)
		n = $0; sub(/.*hitcount: */, "", n)
		w[c] += n
	}
	END { for (c in w) print c, w[c] }' "$tmp/rename.retry" "$tmp/rename.write" | sort -k2 -rn >"$tmp/heapw"
sed 's/^/  retried heap locks written by: /' "$tmp/heapw" | head -8
others=$(grep -v -E "$DCACHE_WRITERS" "$tmp/heapw" | awk '{ n += $2 } END { print n + 0 }')
check "rename: the heap's retried locks are dentries' d_seq: written by dcache only ($(awk '{ n += $2 } END { print n + 0 }' "$tmp/heapw") writes, $others by others)" \
	test -s "$tmp/heapw" -a "$others" -eq 0
agree rename heap dentry.d_seq
for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
	seqcount_hist $ev off
done

# caused NAME INSTANCE: "SITE COUNT" per writer site that frlockstat -c
# joined INSTANCE's retries to (the write each retried read overlapped).
caused() {
	grep '^{"type":"frlockstat_caller",' "$tmp/$1.fs" | grep -F "\"lock\":\"$2\"" |
		grep -F '"kind":"caused"' |
		sed -n 's/.*"caller":"\([^"+]*\)+[^"]*".*"count_total":\([0-9]*\).*/\1 \2/p'
}
# Who caused the retries: every rename_lock write is d_move()'s, so every
# rename_lock retry that frlockstat joined to its write names d_move.
caused rename rename_lock >"$tmp/caused"
sed 's/^/  caused rename_lock retries: /' "$tmp/caused"
joined=$(grep '^{"type":"frlockstat",' "$tmp/rename.fs" | grep -F '"lock":"rename_lock"' | tail -1 |
	sed -n 's/.*"retries_joined":\([0-9]*\).*/\1/p')
check "rename: frlockstat joined rename_lock's retries to their writes (${joined:-none} joined), all to d_move" \
	sh -c "test '${joined:-0}' -gt 0 && test \"\$(cut -d' ' -f1 '$tmp/caused' | sort -u)\" = d_move &&
		test \"\$(awk '{ n += \$2 } END { print n + 0 }' '$tmp/caused')\" = '$joined'"

# The plain command, no configuration: `frlockstat 1 5` during a rename
# storm lists rename_lock and the dentries' d_seq with retries.
path-load -d $((SECS + 8)) --writer rename /tmp/pl-plain >"$tmp/plain.load" 2>&1 &
plain=$!
"$F" 1 5 >"$tmp/plain" 2>&1
wait $plain
grep -E '^(LOCK|rename_lock|dentry.d_seq) ' "$tmp/plain" | sed 's/^/  /' | head -12
# RETRY/s is the 7th column of the table.
check "rename: frlockstat 1 5 lists rename_lock and dentry.d_seq, each with retries in some interval" \
	sh -c "awk '\$1 == \"rename_lock\" && \$7 > 0' '$tmp/plain' | grep -q . &&
		awk '\$1 == \"dentry.d_seq\" && \$7 > 0' '$tmp/plain' | grep -q ."

# --- Mounts against lookups -------------------------------------------------
workload mount path-load -d "$SECS" -j --writer mount /tmp/pl-mount
check "mount: path-load ran ($(tail -1 "$tmp/mount.load"))" \
	grep -q '"write_errors":0' "$tmp/mount.load"
agree mount mount_lock
for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
	seqcount_hist $ev off
done

# --- The tick ---------------------------------------------------------------
workload tick sleep "$SECS"
NOZERO=0 agree tick jiffies_seq
tick_writes=$(hist_count seqcount_write_begin jiffies_seq)
hz_writes=$(awk -v n="$tick_writes" -v s="$SECS" 'BEGIN { printf "%d", n / s }')
check "tick: jiffies_seq is written about HZ=250 times a second ($hz_writes/s)" \
	test "$hz_writes" -ge 200 -a "$hz_writes" -le 300
for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
	seqcount_hist $ev off
done

# --- gettimeofday on stock timekeeping --------------------------------------
if [ "$MODE" = stock-timekeeping ]; then
	workload gtod gtod-load -t 2 -d "$SECS" -w 500 -i 0
	AMBIENT=1 agree gtod tk_core
	for ev in seqcount_read_retry seqcount_write_begin seqcount_read_wait; do
		seqcount_hist $ev off
	done
fi
