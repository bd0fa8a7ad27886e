# The eight sequence-lock events' recordings: sourced by the guest scripts
# that record them (busybox sh). The guest records; the host reads and
# joins the text (host/frlock/judges/eventtext.py, through host/judge-events).

# ev_sym SYMBOL: SYMBOL's address in /proc/kallsyms (tk_core's frcount_t
# is its first member; rename_lock's seqcount is the seqlock_t's first
# member).
ev_sym() {
	awk -v s="$1" '$3 == s { print $1; exit }' /proc/kallsyms
}

# ev_meta LOST: a recording's NAME.meta for host/judge-events: the two
# locks' addresses, the events the tracer lost and, after an ev_load, its
# rename storm's rounds, bound and count (written by ev_load).
ev_meta() {
	echo "tk_core $(ev_sym tk_core)"
	echo "rename_lock $(ev_sym rename_lock)"
	echo "lost $1"
	cat /tmp/ev-load.rename 2>/dev/null
}

# ev_format_fields SYSTEM EVENT: the event's own fields, in order, one
# "TYPE NAME" a line (the common_ fields left out).
ev_format_fields() {
	sed -n 's/^[[:space:]]*field:\(.*\)[[:space:]]\([a-z_]*\);[[:space:]]*offset:.*/\1 \2/p' \
		"/sys/kernel/tracing/events/$1/$2/format" | grep -v ' common_'
}

# ev_overruns: events the ftrace ring buffer lost since it was last
# cleared (overwritten, or dropped), summed over the CPUs.
ev_overruns() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats |
		sed -n 's/^\(overrun\|commit overrun\|dropped events\): //p' |
		awk '{ n += $1 } END { print n + 0 }'
}

# The rename storm's bound: after the first SECONDS, at most this many
# rounds of EV_RENAME_ROUND_S seconds more until a retry of rename_lock
# was counted. A getcwd() retries only when a rename on the other vCPU
# overlaps it, and on a loaded host TCG's vCPU threads take turns: 3 s
# of storm beside the gettimeofday load saw 590 retries in one run and
# none in another.
EV_RENAME_ROUNDS=15
EV_RENAME_ROUND_S=2
EV_RENAME_HIST=/sys/kernel/tracing/instances/ev-rename

# ev_rename_count on|read|off: rename_lock's seqcount_read_retry events,
# counted by an ftrace hist trigger in a tracing instance of its own (the
# recording tools use the top level, and the trigger sees every hit of
# the tracepoint whoever else records it); read prints the count.
ev_rename_count() {
	_t="$EV_RENAME_HIST/events/seqcount/seqcount_read_retry"
	_h="hist:keys=lock:vals=hitcount if lock == 0x$(ev_sym rename_lock)"
	case $1 in
	on) mkdir -p "$EV_RENAME_HIST" && echo "$_h" >>"$_t/trigger" ;;
	read) awk '$1 == "Hits:" { print $2; exit }' "$_t/hist" ;;
	off) echo "!$_h" >>"$_t/trigger" && rmdir "$EV_RENAME_HIST" ;;
	*) return 2 ;;
	esac
}

# ev_load SECONDS: the load under which all eight events fire, for a
# recording tool to run as its command: gettimeofday(2) readers racing the
# tick and 500 adjtimex writes a second on tk_core (frlock) beside path
# lookups racing renames on rename_lock and the dentries' d_seq
# (seqcount), for SECONDS; then the rename storm alone, in rounds of
# EV_RENAME_ROUND_S seconds, until ftrace has counted a retry of
# rename_lock or EV_RENAME_ROUNDS rounds have run (/tmp/ev-load.rename,
# for ev_meta and the host's judge: the rounds, the bound, the retries
# counted); then, on the frlock kernel, the two KUnit
# suites (frlock, with its 100 ms stress: readers on every CPU against
# hard-irq, softirq and task writers; and seqcount_trace). Readers that
# find a write open and wait are rare on timekeeping's short sections under
# TCG (none in some 3 s runs, 6.1's tk_core.seq none in 2 s), and
# frlock_bench's window test gave none in 2 of 3 runs; the suites' read_wait
# cases wait for certain. Those open their section with a bare store (a
# section "another CPU" left open) and fire no write event for it, so
# their one wait each has no write_end to join: the host's join counts
# them among the edges (no end of that lock follows).
ev_load() {
	rm -f /tmp/ev-load.rename
	mkdir -p /tmp/ev-load-paths
	# Without its counter the storm runs no extra round and says so
	# ("none" counted): the host's check still reads the recording.
	_counting=no
	ev_rename_count on && _counting=yes || echo "ev_load: no hist trigger for rename_lock's retries" >&2
	gtod-load -t 1 -d "$1" -w 500 -i 0 >/tmp/ev-load.gtod 2>&1 &
	path-load -t 1 -d "$1" --writer rename /tmp/ev-load-paths >/tmp/ev-load.paths 2>&1 &
	wait
	_rounds=0 _seen=none
	[ $_counting = no ] || _seen=$(ev_rename_count read)
	while [ "$_seen" = 0 ] && [ $_rounds -lt $EV_RENAME_ROUNDS ]; do
		path-load -t 1 -d $EV_RENAME_ROUND_S --writer rename /tmp/ev-load-paths >>/tmp/ev-load.paths 2>&1
		_rounds=$((_rounds + 1))
		_seen=$(ev_rename_count read)
	done
	[ $_counting = no ] || ev_rename_count off
	printf 'rename_first_s %s\nrename_rounds %s\nrename_round_s %s\nrename_rounds_max %s\nrename_retries_counted %s\n' \
		"$1" $_rounds $EV_RENAME_ROUND_S $EV_RENAME_ROUNDS "${_seen:-none}" >/tmp/ev-load.rename
	for m in frlock_kunit seqcount_kunit; do
		if modinfo $m >/dev/null 2>&1; then
			modprobe $m
			rmmod $m 2>/dev/null
		fi
	done
}
