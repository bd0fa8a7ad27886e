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
# locks' addresses and the events the tracer lost.
ev_meta() {
	echo "tk_core $(ev_sym tk_core)"
	echo "rename_lock $(ev_sym rename_lock)"
	echo "lost $1"
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

# ev_load SECONDS: the load under which all eight events fire, for a
# recording tool to run as its command: gettimeofday(2) readers racing the
# tick and 500 adjtimex writes a second on tk_core (frlock) beside path
# lookups racing renames on rename_lock and the dentries' d_seq
# (seqcount), for SECONDS; then, on the frlock kernel, the two KUnit
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
	mkdir -p /tmp/ev-load-paths
	gtod-load -t 1 -d "$1" -w 500 -i 0 >/tmp/ev-load.gtod 2>&1 &
	path-load -t 1 -d "$1" --writer rename /tmp/ev-load-paths >/tmp/ev-load.paths 2>&1 &
	wait
	for m in frlock_kunit seqcount_kunit; do
		if modinfo $m >/dev/null 2>&1; then
			modprobe $m
			rmmod $m 2>/dev/null
		fi
	done
}
