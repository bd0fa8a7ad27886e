# The eight sequence-lock events as text, read and joined: sourced by the
# guest scripts that check them (busybox sh, busybox awk). The text may be
# ftrace's own trace file, `trace-cmd report` or `perf script`: each line of
# an event holds its name ("frlock_read_retry:", perf's
# "frlock:frlock_read_retry:") and the fields "lock=... seq=... caller=...".
#
# Series v4's ABI, the same in both systems: every event carries (lock,
# seq, caller), and seq names a write section by the even count it opened
# at. A write's begin and end carry its seq; a retry the seq of the write
# that made it fail; a wait the seq of the write it waits for, which that
# write's end ends. So every join is equality on (lock, seq).

# ev_records: trace text on stdin; one line per frlock or seqcount event
# on stdout: "SYSTEM EVENT LOCK SEQ FUNCTION", LOCK as 16 lower-case hex
# digits (as /proc/kallsyms prints addresses; ftrace prints %p without 0x,
# and hashed unless options/hash-ptr is 0), FUNCTION the caller's function
# without its offset.
ev_records() {
	awk '{
		ev = ""
		for (i = 1; i <= NF; i++)
			if ($i ~ /^((frlock|seqcount):)?(frlock|seqcount)_(write_begin|write_end|read_retry|read_wait):$/) {
				ev = $i
				break
			}
		if (ev == "")
			next
		sub(/:$/, "", ev)
		sub(/^[a-z]*:/, "", ev)
		lock = seq = fn = ""
		for (; i <= NF; i++) {
			if ($i ~ /^lock=/) lock = substr($i, 6)
			else if ($i ~ /^seq=/) seq = substr($i, 5)
			else if ($i ~ /^caller=/) fn = substr($i, 8)
		}
		sub(/^0x/, "", lock)
		lock = tolower(lock)
		while (length(lock) < 16)
			lock = "0" lock
		sub(/[+\/].*/, "", fn)
		sys = ev
		sub(/_.*/, "", sys)
		print sys, ev, lock, seq, fn
	}'
}

# ev_join [EDGE_MAX]: ev_records lines of one trace on stdin (one system,
# or both: a lock is one system's). Joins every event on (lock, seq) and
# prints one summary line,
#   "begins=N ends=N paired=N unpaired_at_edges=N retries=N joined=N
#    waits=N ended=N edge=N bad=N"
# then one "  edge: ..." or "  bad: ..." line per event that did not join
# (at most 12 of each). Returns 0 if no event is bad and at most EDGE_MAX
# (default 4) did not join at the trace's edges.
#
# The trace is a window: the events of a write that began before it
# opened, or ended after it closed, are partly outside. So, per lock:
#  - a write_end without its write_begin is an edge only if it is the
#    lock's first end and no begin of the lock has a lower seq (the write
#    began before the window); a write_begin without its end only if it is
#    the lock's last begin (still open when the window closed);
#  - a read_retry without a write_begin of the same (lock, seq) is an edge
#    only if that write began before the window: no begin of the lock has
#    a seq as low;
#  - a read_wait without a write_end of the same (lock, seq) is an edge
#    only if that write had not ended when the window closed: no end of the
#    lock has a higher seq.
# Anything else that does not join is bad. The retries and waits at the
# edges are reads that spanned the window's opening or closing: at most one
# per context in a read section then, a task and an interrupt on each of
# the guest's 2 vCPUs, hence the default of 4 (the lock's own begin and
# end at the edges are not counted: at most one each per lock by the rules).
ev_join() {
	awk -v edge_max="${1:-4}" '
	{
		k = $3 " " $4
		if ($2 ~ /_write_begin$/) { nb[k]++; b++; lo(bmin, bmax, $3, $4) }
		else if ($2 ~ /_write_end$/) { ne[k]++; e++; lo(emin, emax, $3, $4) }
		else if ($2 ~ /_read_retry$/) { nr++; r[nr] = $0 }
		else if ($2 ~ /_read_wait$/) { nw++; w[nw] = $0 }
	}
	function lo(mn, mx, l, s) {
		s += 0
		if (!(l in mn) || s < mn[l]) mn[l] = s
		if (!(l in mx) || s > mx[l]) mx[l] = s
	}
	function note(kind, what) {
		if (kind == "edge") { edge++; if (edge <= 12) el = el "  edge: " what "\n" }
		else { bad++; if (bad <= 12) bl = bl "  bad: " what "\n" }
	}
	END {
		for (k in nb) {
			split(k, a, " ")
			d = nb[k] - ((k in ne) ? ne[k] : 0)
			if (d == 0) { paired += nb[k]; continue }
			paired += nb[k] - (d > 0 ? d : 0)
			if (d == 1 && a[2] + 0 == bmax[a[1]] && !((a[1] in emax) && emax[a[1]] > a[2] + 0))
				lockedge++
			else
				note("bad", "lock " a[1] " seq " a[2] ": " nb[k] " write_begin, " ne[k] + 0 " write_end")
		}
		for (k in ne) {
			if (k in nb)
				continue
			split(k, a, " ")
			if (ne[k] == 1 && a[2] + 0 == emin[a[1]] && !((a[1] in bmin) && bmin[a[1]] <= a[2] + 0))
				lockedge++
			else
				note("bad", "lock " a[1] " seq " a[2] ": " ne[k] " write_end, no write_begin")
		}
		for (i = 1; i <= nr; i++) {
			split(r[i], a, " ")
			if ((a[3] " " a[4]) in nb) { joined++; continue }
			if (!(a[3] in bmin) || a[4] + 0 < bmin[a[3]])
				note("edge", r[i] " (its write began before the trace)")
			else
				note("bad", r[i] " (no " a[1] "_write_begin with lock " a[3] " seq " a[4] ")")
		}
		for (i = 1; i <= nw; i++) {
			split(w[i], a, " ")
			if ((a[3] " " a[4]) in ne) { ended++; continue }
			if (!(a[3] in emax) || a[4] + 0 > emax[a[3]])
				note("edge", w[i] " (its write ended after the trace)")
			else
				note("bad", w[i] " (no " a[1] "_write_end with lock " a[3] " seq " a[4] ")")
		}
		printf "begins=%d ends=%d paired=%d unpaired_at_edges=%d retries=%d joined=%d waits=%d ended=%d edge=%d bad=%d\n",
			b, e, paired, lockedge, nr, joined, nw, ended, edge, bad
		printf "%s%s", el, bl
		exit (bad > 0 || edge > edge_max) ? 1 : 0
	}'
}

# ev_sym SYMBOL: SYMBOL's address in /proc/kallsyms, as ev_records prints
# a lock (tk_core's frcount_t is its first member; rename_lock's seqcount
# is the seqlock_t's first member).
ev_sym() {
	awk -v s="$1" '$3 == s { print $1; exit }' /proc/kallsyms
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
# their one wait each has no write_end to join: ev_join counts them among
# the edges (no end of that lock follows).
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
