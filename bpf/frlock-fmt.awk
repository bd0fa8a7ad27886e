# frlock-fmt.awk - render bpftrace `-f json` output (and gtod-load -j lines)
# as text, for a terminal. Runs under busybox awk in the guest.
#
# usage: bpftrace -f json TOOL.bt | awk -f frlock-fmt.awk [-v live=0]
#        gtod-load -j ... | awk -f frlock-fmt.awk
#
# The tools of this folder print totals since they started and never clear
# their maps (clearing lost events: see frlock-retries.bt), so what is drawn
# is the growth since the previous print of the same map, i.e. one interval:
# - printf and time records are printed as they are;
# - hist records are drawn as bpftrace draws them in text mode, buckets and
#   keys that did not grow left out;
# - map and stats records are printed as "@name[key]: value", min and max
#   maps (@seq_first, @seq_last, @hold_ns_max*) as they are;
# - after frlock-retries.bt's @retried_reads, a line with the share of
#   gettimeofday reads that needed no retry (bpftrace cannot divide counts);
# - maps printed outside an interval are bpftrace's print at exit: they
#   are shown as the last, partial interval;
# - frlock-summary.bt's intervals (a printf "frlock-summary: interval_ns=N",
#   then its maps, then a printf "\n") become one table per interval: reads/s,
#   retried share, retries/s, writes/s, hold p50/p99/max per lock; at the end
#   of the input, the same table over the whole run;
# - gtod-load's "load_summary" line becomes one line of text; its per-
#   interval "load" lines are skipped.
# Output is written one interval at a time (a printf record of just "\n"
# ends one), in a single write when it fits, so that several tools can
# share a terminal without mixing their lines. -v live=0 prints only the
# whole-run summary and errors. -v final=FILE writes the whole-run table to
# FILE instead of stdout; -v mark=FILE leaves out of it the intervals that
# ended before FILE existed.

BEGIN {
	if (live == "") live = 1
	# The reader behind the syscalls that frlock-retries.bt and
	# frlock-summary.bt count (gettimeofday, clock_gettime(CLOCK_REALTIME)).
	RDR = "ktime_get_real_ts64"
	RDR_KEY = "tk_core.lock," RDR
	# Maps that are not counts: shown as they are, not as growth.
	NODELTA = "^@(seq_first|seq_last|hold_ns_max|hold_ns_max_run)$"
	out = ""
	nsum = 0
	insum = 0
}

# --- JSON helpers (bpftrace's output is regular enough for these) ---------

function rtype(s) {
	if (match(s, /"type": ?"[a-z_]+"/)) {
		t = substr(s, RSTART, RLENGTH)
		sub(/^"type": ?"/, "", t)
		sub(/"$/, "", t)
		return t
	}
	return ""
}

# The part after "data": up to the closing brace of the record.
function rdata(s) {
	if (!match(s, /"data": ?/)) return ""
	d = substr(s, RSTART + RLENGTH)
	sub(/}[ \t\r]*$/, "", d)
	return d
}

# A JSON string literal's content, unescaped.
function unjson(d,   r, i, c, n) {
	sub(/^[ \t]*"/, "", d)
	sub(/"[ \t]*$/, "", d)
	r = ""
	n = length(d)
	for (i = 1; i <= n; i++) {
		c = substr(d, i, 1)
		if (c == "\\" && i < n) {
			i++
			c = substr(d, i, 1)
			if (c == "n") c = "\n"
			else if (c == "t") c = "\t"
			else if (c == "r") c = ""
		}
		r = r c
	}
	return r
}

# A number field of a flat JSON object: num(line, "total").
function num(s, k,   v) {
	if (!match(s, "\"" k "\": ?-?[0-9.e+]+")) return ""
	v = substr(s, RSTART, RLENGTH)
	sub(/^[^:]*: ?/, "", v)
	return v
}

function strf(s, k,   v) {
	if (!match(s, "\"" k "\": ?\"[^\"]*\"")) return ""
	v = substr(s, RSTART, RLENGTH)
	sub(/^[^:]*: ?"/, "", v)
	sub(/"$/, "", v)
	return v
}

function emit(s) { out = out s }
# Maps printed outside an interval are bpftrace's print at exit.
function exit_heading() {
	if (inblock) return
	inblock = 1
	emit("at exit, the last (partial) interval:\n")
}
function flush() {
	if (out != "") { printf "%s", out; fflush() }
	out = ""
}

# --- hist ------------------------------------------------------------------

# bpftrace's bucket bound: 4096 -> 4K.
# (busybox awk may lack its math library: no ^ here.)
function bound(n,   u, i, m) {
	split("K M G T P", u, " ")
	if (n == 0) return "0"
	i = 0
	while (i < 5 && n >= 1024 && int(n / 1024) * 1024 == n) {
		n = n / 1024
		i++
	}
	return n (i > 0 ? u[i] : "")
}

# Draws the growth of hist NAME[KEY] since its last print: the tools print
# totals and never clear (see frlock-retries.bt). Nothing if it did not grow.
function draw_hist(name, key, list,   n, lo, hi, cnt, i, max, bar, w, b, id, first, last) {
	n = 0
	max = 0
	while (match(list, /"min": ?-?[0-9]+, ?"max": ?-?[0-9]+, ?"count": ?[0-9]+/)) {
		b = substr(list, RSTART, RLENGTH)
		list = substr(list, RSTART + RLENGTH)
		n++
		lo[n] = num(b, "min")
		hi[n] = num(b, "max")
		id = name SUBSEP key SUBSEP lo[n]
		cnt[n] = num(b, "count") - prev[id]
		prev[id] = num(b, "count")
		if (cnt[n] > max) max = cnt[n]
	}
	first = 0
	for (i = 1; i <= n; i++) if (cnt[i] > 0) { if (!first) first = i; last = i }
	if (!first) return
	emit(name (key == "" ? "" : "[" key "]") ": \n")
	for (i = first; i <= last; i++) {
		if (lo[i] == hi[i]) b = "[" bound(lo[i]) "]"
		else b = "[" bound(lo[i]) ", " bound(hi[i] + 1) ")"
		w = max > 0 ? int(cnt[i] * 52 / max) : 0
		bar = sprintf("%" w "s", "")
		gsub(/ /, "@", bar)
		emit(sprintf("%-16s%8d |%-52s|\n", b, cnt[i], bar))
	}
	emit("\n")
}

function do_hist(d,   name, rest, key, list) {
	match(d, /"@[^"]*"/)
	name = substr(d, RSTART + 1, RLENGTH - 2)
	rest = substr(d, RSTART + RLENGTH)
	sub(/^: ?/, "", rest)
	if (substr(rest, 1, 1) == "[") {
		draw_hist(name, "", rest)
		return
	}
	while (match(rest, /"[^"]*": ?\[[^]]*\]/)) {
		list = substr(rest, RSTART, RLENGTH)
		rest = substr(rest, RSTART + RLENGTH)
		match(list, /^"[^"]*"/)
		key = substr(list, 2, RLENGTH - 2)
		gsub(/,/, ", ", key)
		draw_hist(name, key, substr(list, RLENGTH + 1))
	}
}

# --- map -------------------------------------------------------------------

# Calls back store(name, key, value) for each entry; key "" if unkeyed.
# Calls entry(mode, name, key, value) for each entry of a map record, key
# "" if unkeyed. Counts are the growth since the last print (the tools print
# totals); min and max maps (NODELTA) are passed as they are. Keys that
# print alike (two call sites in one function) are added up first.
function each_entry(d, mode,   name, rest, pair, key, val, n, i, order, v, id) {
	match(d, /"@[^"]*"/)
	name = substr(d, RSTART + 1, RLENGTH - 2)
	rest = substr(d, RSTART + RLENGTH)
	sub(/^: ?/, "", rest)
	n = 0
	if (substr(rest, 1, 1) != "{") {
		val = rest
		sub(/}.*$/, "", val)
		n = 1
		order[1] = ""
		v[""] = val + 0
	} else {
		while (match(rest, /"[^"]*": ?-?[0-9]+/)) {
			pair = substr(rest, RSTART, RLENGTH)
			rest = substr(rest, RSTART + RLENGTH)
			match(pair, /^"[^"]*"/)
			key = substr(pair, 2, RLENGTH - 2)
			val = substr(pair, RLENGTH + 1)
			sub(/^: ?/, "", val)
			if (!(key in v)) order[++n] = key
			v[key] += val
		}
	}
	shown = 0
	for (i = 1; i <= n; i++) {
		key = order[i]
		val = v[key]
		if (name !~ NODELTA) {
			id = name SUBSEP key
			val = v[key] - prev[id]
			prev[id] = v[key]
			# a keyed count that did not grow is left out
			if (mode == "print" && key != "" && val == 0) continue
		}
		entry(mode, name, key, val)
		if (key != "") shown++
	}
	if (mode == "print" && shown > 0) emit("\n")
	return n
}

function entry(mode, name, key, val,   k, lock, b) {
	if (mode == "print") {
		k = key
		gsub(/,/, ", ", k)
		emit(name (key == "" ? "" : "[" k "]") ": " val "\n")
		# frlock-retries.bt: @reads, then @retried_reads[lock, reader]
		if (name == "@reads") { rreads = val; have_reads = 1 }
		if (name == "@retried_reads" && key == RDR_KEY) rretried += val
		return
	}
	# frlock-summary.bt's maps, one interval.
	if (name == "@reads") { reads += val; return }
	if (name == "@hold_ns_q") {
		# key "lock,bucket": the lock name may not hold a comma-digit tail
		b = key
		sub(/^.*,/, "", b)
		lock = key
		sub(/,[0-9]+$/, "", lock)
		locks[lock] = 1
		q[lock, b] += val
		qb[lock] = qb[lock] " " b
		return
	}
	if (name == "@retried_reads") {
		# key "lock,reader"
		lock = key
		sub(/,[^,]*$/, "", lock)
		locks[lock] = 1
		if (key == lock "," RDR) retried[lock] += val
		return
	}
	locks[key] = 1
	if (name == "@retries") retries[key] += val
	else if (name == "@writes") writes[key] += val
	else if (name == "@hold_ns_max") { if (val > mx[key]) mx[key] = val }
	else if (name == "@hold_ns_max_run") { if (val > runmx[key]) runmx[key] = val }
}

# --- frlock-retries --------------------------------------------------------

# The line frlock-retries.bt cannot print: reads that needed no retry.
function share() {
	have_reads = 0
	if (rreads == 0)
		emit("tk_core.lock: no gettimeofday syscall (no load yet, or vDSO reads only)\n\n")
	else if (rretried > rreads)
		emit(sprintf("tk_core.lock: %d gettimeofday reads, %d retried in %s\n\n", rreads, rretried, RDR))
	else
		emit(sprintf("tk_core.lock: %d gettimeofday reads, %d retried: %.3f%% needed no retry\n\n",
			rreads, rretried, 100 - 100 * rretried / rreads))
}

# --- frlock-summary --------------------------------------------------------

function hns(v) {
	if (v == "") return "-"
	if (v < 1000) return sprintf("%d ns", v)
	if (v < 1000000) return sprintf("%.1f us", v / 1000)
	if (v < 1000000000) return sprintf("%.2f ms", v / 1000000)
	return sprintf("%.2f s", v / 1000000000)
}

# Percentile p (0..1) of lock's buckets, from the bucket list bl and the
# count array given by which ("i" this interval, "t" whole run).
function pct(lock, bl, which, p,   n, b, i, j, t, seen, c, cum, need, u) {
	n = split(bl, b, " ")
	# unique and sorted, numerically (insertion sort: a few dozen buckets)
	j = 0
	for (i = 1; i <= n; i++) {
		if ((b[i] "") in seen) continue
		seen[b[i] ""] = 1
		j++
		u[j] = b[i] + 0
	}
	for (i = 2; i <= j; i++) {
		t = u[i]
		for (c = i - 1; c >= 1 && u[c] > t; c--) u[c + 1] = u[c]
		u[c + 1] = t
	}
	t = 0
	for (i = 1; i <= j; i++) t += (which == "t" ? tq[lock, u[i]] : q[lock, u[i]])
	if (t == 0) return ""
	need = p * t
	cum = 0
	for (i = 1; i <= j; i++) {
		cum += (which == "t" ? tq[lock, u[i]] : q[lock, u[i]])
		if (cum >= need) return u[i]
	}
	return u[j]
}

function table(title, dt, rd, which,   l, s, r) {
	s = title "\n"
	s = s sprintf("%-16s %9s %8s %9s %8s %10s %10s %10s\n", "lock", "reads/s",
		"retried", "retries/s", "writes/s", "hold p50", "p99", "max")
	for (l in locks) {
		if (l == "") continue
		r = (which == "t" ? tretried[l] : retried[l]) + 0
		s = s sprintf("%-16s %9s %8s %9s %8s %10s %10s %10s\n", l,
			(l == "tk_core.lock" && dt > 0) ? sprintf("%d", rd / dt + 0.5) : "-",
			(l == "tk_core.lock" && rd > 0) ? sprintf("%.3f%%", 100 * r / rd) : "-",
			sprintf("%d", (which == "t" ? tretries[l] : retries[l]) / dt + 0.5),
			sprintf("%d", (which == "t" ? twrites[l] : writes[l]) / dt + 0.5),
			hns(pct(l, which == "t" ? tqb[l] : qb[l], which, 0.50)),
			hns(pct(l, which == "t" ? tqb[l] : qb[l], which, 0.99)),
			hns(which == "t" ? tmx[l] : mx[l]))
	}
	return s
}

function end_interval(   l, k, x, kp) {
	insum = 0
	if (dt <= 0) return
	# @hold_ns_max is cleared every interval, and so may miss a section
	# that ended between its print and its clear: the highest bucket that
	# grew is a floor.
	for (k in q) {
		split(k, kp, SUBSEP)
		if (q[k] > 0 && kp[2] + 0 > mx[kp[1]]) mx[kp[1]] = kp[2] + 0
	}
	if (live)
		emit(table(sprintf("frlock-summary %s (%.2f s)", stime, dt), dt, reads, "i") "\n")
	# With -v mark=FILE, the whole run starts with the first interval
	# that ends once FILE exists (frlock-watch creates it as the load starts).
	if (mark != "" && !marked) {
		if ((getline x <mark) < 0) { clear_interval(); return }
		close(mark)
		marked = 1
	}
	nsum++
	tdt += dt
	treads += reads
	for (l in locks) {
		tlocks[l] = 1
		tretried[l] += retried[l]
		tretries[l] += retries[l]
		twrites[l] += writes[l]
		if (mx[l] > tmx[l]) tmx[l] = mx[l]
		for (k in q) {
			split(k, kp, SUBSEP)
			if (kp[1] == l) {
				tq[l, kp[2]] += q[k]
				tqb[l] = tqb[l] " " kp[2]
			}
		}
	}
	clear_interval()
}

function clear_interval(   k) {
	for (k in q) delete q[k]
	for (k in qb) delete qb[k]
}

function start_interval(ns) {
	insum = 1
	nsum_seen = 1
	dt = ns / 1e9
	reads = 0
	stime = ""
	for (k in retried) delete retried[k]
	for (k in retries) delete retries[k]
	for (k in writes) delete writes[k]
	for (k in mx) delete mx[k]
	for (k in q) delete q[k]
	for (k in qb) delete qb[k]
}

# --- gtod-load -------------------------------------------------------------

function load_summary(s,   w) {
	w = strf(s, "writer")
	emit(sprintf("gtod-load: %d threads via %s for %.1f s: %d calls/s in total",
		num(s, "threads"), strf(s, "via"), num(s, "duration_s"), num(s, "total")))
	if (num(s, "write_rate") + 0 > 0 || num(s, "write_count") + 0 > 0)
		emit(sprintf("; %s writer %.1f writes/s (asked %s), %d errors%s",
			w, num(s, "writes"), num(s, "write_rate"), num(s, "write_errors"),
			s ~ /"restored": ?true/ ? ", clock restored" : ""))
	emit("\n")
}

# --- main ------------------------------------------------------------------

{
	t = rtype($0)
	if (t == "") next
	d = rdata($0)
	if (t == "printf") {
		d = unjson(d)
		if (d ~ /^frlock-summary: interval_ns=[0-9]+\n$/) {
			sub(/^frlock-summary: interval_ns=/, "", d)
			start_interval(d + 0)
		} else if (d == "\n") {
			if (insum) end_interval()
			else if (live && have_reads) share()
			inblock = 0
			rreads = 0
			rretried = 0
			flush()
		} else if (live || d ~ /^Tracing/) {
			emit(d)
			if (d ~ /^Tracing/) flush()
		}
	} else if (t == "time") {
		if (insum) { stime = unjson(d); sub(/\n$/, "", stime) }
		else if (live) emit(unjson(d))
		inblock = 1
	} else if (t == "hist") {
		if (live) { exit_heading(); do_hist(d) }
	} else if (t == "map") {
		if (insum) each_entry(d, "sum")
		else if (nsum_seen) {
			# frlock-summary.bt: what bpftrace prints at exit, after the
			# END block, is the zero of a cleared map
		} else if (live) {
			exit_heading()
			if (d ~ /^\{"@retried_reads"/) rretried = 0
			each_entry(d, "print")
			if (d ~ /^\{"@retried_reads"/) share()
		}
	} else if (t == "stats") {
		if (live && match(d, /"@[^"]*"/)) {
			emit(substr(d, RSTART + 1, RLENGTH - 2) ": count " num(d, "count") \
				", average " num(d, "average") ", total " num(d, "total") "\n")
		}
	} else if (t == "load_summary") {
		load_summary($0)
	} else if (t == "load") {
		# per-interval load lines: kept in the NDJSON, not shown
	} else if (t == "attached_probes") {
		# "Attaching N probes..." in text mode; the banner follows
	} else {
		# lost_events, errors, anything new: show it raw
		emit($0 "\n")
	}
}

END {
	if (insum) end_interval()
	if (have_reads) share()
	if (nsum > 0 && tdt > 0) {
		for (l in tlocks) locks[l] = 1
		# without a mark the whole run is the tool's: its exact maximum
		if (mark == "") for (l in runmx) tmx[l] = runmx[l]
		s = table(sprintf("frlock-summary over the %s (%.1f s, %d intervals)",
			mark != "" ? "load" : "whole run",
			tdt, nsum), tdt, treads, "t")
		if (final != "") { printf "%s", s >final; close(final) }
		else emit(s)
	}
	flush()
}
