#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat and the bpftrace
# tools of bpf/, attached at the same time to one bounded workload, must
# report the same events. One ok/not ok line per comparison, with the
# numbers compared.
#
# The workload is the KUnit suite's stress case: its lock "s->lock" lives
# only while the case runs (readers on every vCPU, a writer thread and an
# hrtimer writer in hard irq), so no event of it can fall before the tools
# attach or after they detach; the tools are stopped once modprobe has
# returned, and the suite reports its own counts of write sections and
# retries, which both tools must match.
#
# Two runs, because of a kernel rule the tools do not share: a BPF program
# on a perf tracepoint (bpftrace's tracepoint:) is skipped when another one
# already runs on that CPU (one per-CPU guard, bpf_prog_active), while a
# raw tracepoint program (frlockstat's tp_btf/raw_tp) is skipped only when
# it nests in itself. A hard-irq write that lands while a bpftrace program
# runs in a reader (frlock-retries.bt's read_done) is lost to every
# bpftrace tool and seen by frlockstat: 2 of 1884 sections in one run with
# three tools together. So:
#  - writers: frlockstat beside frlock-hold.bt alone, whose programs all run
#    with interrupts off (task writer) or in hard irq (the hrtimer): nothing
#    can nest under them, and each must see every write section;
#  - readers: frlockstat beside frlock-retries.bt. Reads are all in task
#    context, where nothing nests: both see every retry.
# Counts and the retries-per-read histogram must be equal; the hold-time
# histograms cannot be, as each tool's timing of a section holds part of
# the other's probes (see the writers' part): their totals, per-writer
# counts, bucket bounds and medians are compared instead.
#
# usage: agreement.sh [STRESS_MS]	(default 1500: the stress case's length)
REPO=/opt/frlock
B=$REPO/bpf
F=$B/.output/frlockstat
LOCK='s->lock'
STRESS_MS=${1:-1500}
# shellcheck source=guest-rootfs/lib.sh
. "$REPO/guest-rootfs/lib.sh"
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"

if [ ! -d /sys/kernel/tracing/events/frlock ]; then
	skip "frlockstat and bpftrace agreement: no frlock events (not the frlock kernel)"
	exit 0
fi
if [ ! -x "$F" ]; then
	not_ok "frlockstat and bpftrace agreement: frlockstat is built (no $F: run make -C bpf)"
	exit 0
fi

# --- Reading the tools' output ----------------------------------------------

# fs_line FILE: frlockstat's NDJSON object for $LOCK (one: no interval).
fs_line() { grep '^{"type":"frlockstat",' "$1" | grep -F "\"lock\":\"$LOCK\"" | tail -1; }
# fs_num FILE NAME: a number of that object.
fs_num() { fs_line "$1" | sed -n "s/.*\"$2\":\\([0-9]*\\).*/\\1/p"; }
# bt_line FILE MAP: the last print of a bpftrace map (-f json), spaces out.
# The maps are totals and the probes are detached before the last print,
# so the last one is the whole run whoever printed it (END or bpftrace's
# own print at exit).
bt_line() { grep "\"data\": {\"$2\": " "$1" | tail -1 | tr -d ' '; }
# buckets KEY: from one JSON line on stdin, every log2 histogram
# "KEY":[{"min":..,"max":..,"count":..},...] whose KEY is $1 or starts with
# "$1," (bpftrace's per-writer keys), summed bucket by bucket: "min max
# count" lines, by min.
buckets() {
	awk -v p="$1" '{
		d = $0
		while (match(d, /"[^"]*":\[[^]]*\]/)) {
			seg = substr(d, RSTART, RLENGTH); d = substr(d, RSTART + RLENGTH)
			k = seg; sub(/":\[.*$/, "", k); sub(/^"/, "", k)
			if (k != p && index(k, p ",") != 1)
				continue
			while (match(seg, /"min":-?[0-9]+,"max":-?[0-9]+,"count":[0-9]+/)) {
				b = substr(seg, RSTART, RLENGTH); seg = substr(seg, RSTART + RLENGTH)
				split(b, f, /[:,]/)
				n[f[2]] += f[6]; hi[f[2]] = f[4]
			}
		}
	# bpftrace also prints the empty buckets between filled ones, frlockstat
	# only the filled ones: compare those.
	} END { for (m in n) if (n[m]) print m, hi[m], n[m] }' | sort -n
}
# keyed KEY: from one bpftrace map line on stdin, the sum of the values
# whose key is $1 or starts with "$1,".
keyed() {
	awk -v p="$1" '{
		d = $0; sub(/^.*"data":\{"@[^"]*":/, "", d)
		while (match(d, /"[^"]*":-?[0-9]+/)) {
			kv = substr(d, RSTART, RLENGTH); d = substr(d, RSTART + RLENGTH)
			k = kv; sub(/":-?[0-9]+$/, "", k); sub(/^"/, "", k)
			v = kv; sub(/^.*":/, "", v)
			if (k == p || index(k, p ",") == 1) s += v
		}
	} END { print s + 0 }'
}
# total: the sum of the counts of "min max count" lines on stdin.
total() { awk '{ s += $3 } END { print s + 0 }'; }
# show_hists A_NAME A_FILE B_NAME B_FILE: the two histograms side by side.
show_hists() {
	awk -v an="$1" -v bn="$3" 'FNR == 1 { f++ }
		{ hi[$1] = $2; if (f == 1) a[$1] = $3; else b[$1] = $3 }
		END { for (m in hi) printf "%d %d %d %d\n", m, hi[m], a[m], b[m] }' "$2" "$4" |
		sort -n | awk -v an="$1" -v bn="$3" '{
			printf "  [%d, %d]: %s %d, %s %d%s\n", $1, $2, an, $3, bn, $4,
				$3 == $4 ? "" : "  <- differs" }'
}
# num X: X if it is a number, else -1 (so that a missing figure fails).
num() { case $1 in '' | *[!0-9]*) echo -1 ;; *) echo "$1" ;; esac; }

# --- One run: the tools attached together, one KUnit stress run ------------

# stop PID...: SIGINT to each, then wait for all (guest-rootfs/lib.sh
# repeats a SIGINT that bpftrace 0.17 missed, and kills after 2 minutes).
stop() {
	for p in "$@"; do kill -INT "$p" 2>/dev/null; done
	stuck=
	for p in "$@"; do wait_sigint "$p" || [ $? -ne 137 ] || stuck="$stuck $p"; done
	[ -z "$stuck" ] || not_ok "the tools stop on SIGINT (killed:$stuck)"
}

# run NAME TOOL...: frlockstat -j -c -L $LOCK and bpf/frlock-TOOL.bt (an
# interval longer than the run: only the print at exit) attached, then the
# KUnit suite, then all stopped. Output in $tmp/NAME.*; the suite's counts
# in $reads $retries $torn $writes.
run() {
	ph=$1
	shift
	tools=$*
	# shellcheck disable=SC2034 # reads and torn: set by the eval below, shown above
	reads='' retries='' torn='' writes=''
	# frlock-kernel.sh may have run the suite already: unload it, so that
	# modprobe runs it again.
	if [ -d /sys/module/frlock_kunit ] && ! rmmod frlock_kunit; then
		not_ok "$ph: rmmod frlock_kunit, to run the suite again"
		return 1
	fi
	"$F" -j -c -L "$LOCK" >"$tmp/$ph.fs" 2>"$tmp/$ph.fs.err" &
	pids=$!
	for t in "$@"; do
		bpftrace -f json "$B/frlock-$t.bt" 3600 >"$tmp/$ph.$t" 2>"$tmp/$ph.$t.err" &
		pids="$pids $!"
	done
	# Compiling and attaching takes 5 to 25 s under TCG; frlockstat says
	# "Tracing" on stderr once attached, bpftrace runs BEGIN once all its
	# probes are.
	start=$(date +%s)
	set -- $pids
	if ! wait_attached "$1" "$tmp/$ph.fs.err" '^Tracing' 1800; then
		not_ok "$ph: frlockstat attached"; cat "$tmp/$ph.fs.err"; stop $pids; return 1
	fi
	shift
	for t in $tools; do
		if ! wait_attached "$1" "$tmp/$ph.$t" '"type": "printf"' 1800; then
			not_ok "$ph: frlock-$t.bt attached"; cat "$tmp/$ph.$t.err"; stop $pids; return 1
		fi
		shift
	done
	set -- $tools
	echo "  $ph: frlockstat and frlock-$(echo "$*" | sed 's/ /.bt, frlock-/g').bt attached after $(($(date +%s) - start)) s"
	# The suite runs in modprobe (kunit runs it at module init): when it
	# returns, the stress case has stopped its writers and readers.
	if ! modprobe frlock_kunit stress_ms="$STRESS_MS" 2>"$tmp/$ph.modprobe"; then
		insmod "$(find /lib/modules -name frlock_kunit.ko | head -1)" stress_ms="$STRESS_MS" \
			2>>"$tmp/$ph.modprobe"
	fi
	cp /sys/kernel/debug/kunit/frlock/results "$tmp/$ph.kunit" 2>>"$tmp/$ph.modprobe"
	stop $pids
	stress=$(grep -o 'reads=[0-9]* retries=[0-9]* torn=[0-9]* writes=[0-9]*' "$tmp/$ph.kunit" 2>/dev/null | head -1)
	echo "  $ph: KUnit stress ($STRESS_MS ms): ${stress:-no result}"
	if [ -z "$stress" ]; then
		not_ok "$ph: the KUnit stress case ran and reported its counts"
		cat "$tmp/$ph.modprobe" "$tmp/$ph.kunit" 2>/dev/null | tail -20 | sed 's/^/  /'
		return 1
	fi
	for kv in $stress; do eval "${kv%%=*}=${kv#*=}"; done
	for f in "$tmp/$ph.fs.err" "$tmp/$ph.modprobe"; do
		grep -v '^Tracing' "$f" | sed "s/^/  $ph: $(basename "$f"): /"
	done
	for t in "$@"; do
		[ -s "$tmp/$ph.$t.err" ] && sed "s/^/  $ph: frlock-$t.bt stderr: /" "$tmp/$ph.$t.err"
	done
	return 0
}

# --- Writers: frlockstat beside frlock-hold.bt --------------------------------

if run writers hold; then
	W=$tmp/writers
	fs_writes=$(num "$(fs_num "$W.fs" writes)")
	bt_writes=$(num "$(bt_line "$W.hold" @writes | keyed "$LOCK")")
	seq_first=$(num "$(bt_line "$W.hold" @seq_first | keyed "$LOCK")")
	seq_last=$(num "$(bt_line "$W.hold" @seq_last | keyed "$LOCK")")
	fs_line "$W.fs" | buckets hold_ns >"$W.fs.hold"
	bt_line "$W.hold" @hold_ns | buckets "$LOCK" >"$W.bt.hold"
	fs_samples=$(total <"$W.fs.hold")
	bt_samples=$(total <"$W.bt.hold")
	echo "  writers: suite writes=$writes; frlockstat writes=$fs_writes samples=$fs_samples;" \
		"frlock-hold.bt write_end=$bt_writes samples=$bt_samples sections $seq_first..$seq_last"
	check "writers: frlockstat counts the suite's write sections ($fs_writes == $writes)" \
		test "$fs_writes" -eq "$writes" -a "$writes" -gt 0
	check "writers: frlock-hold.bt counts the same write_end events ($bt_writes == $fs_writes)" \
		test "$bt_writes" -eq "$fs_writes"
	check "writers: hold-time samples, frlock-hold.bt == frlockstat ($bt_samples == $fs_samples)" \
		test "$bt_samples" -eq "$fs_samples" -a "$fs_samples" -eq "$fs_writes"
	# The kernel numbers the sections of a lock from 1.
	check "writers: frlock-hold.bt sampled sections 1 to $writes ($seq_first..$seq_last)" \
		test "$seq_first" -eq 1 -a "$seq_last" -eq "$writes"

	# Per writer: frlockstat -c names the call site of each write_end,
	# frlock-hold.bt the function of each write_begin; both are in the
	# writer's function.
	grep '"type":"frlockstat_caller"' "$W.fs" | grep -F "\"lock\":\"$LOCK\"" |
		grep '"kind":"write"' | sed 's/.*"caller":"\([^"+]*\)[^"]*","count":\([0-9]*\).*/\1 \2/' |
		awk '{ n[$1] += $2 } END { for (f in n) print f, n[f] }' | sort >"$W.fs.writers"
	bt_line "$W.hold" @hold_ns | awk -v p="$LOCK," '{
		d = $0
		while (match(d, /"[^"]*":\[[^]]*\]/)) {
			seg = substr(d, RSTART, RLENGTH); d = substr(d, RSTART + RLENGTH)
			k = seg; sub(/":\[.*$/, "", k); sub(/^"/, "", k)
			if (index(k, p) != 1) continue
			k = substr(k, length(p) + 1)
			while (match(seg, /"count":[0-9]+/)) {
				n[k] += substr(seg, RSTART + 8, RLENGTH - 8); seg = substr(seg, RSTART + RLENGTH)
			}
		}
	} END { for (f in n) print f, n[f] }' | sort >"$W.bt.writers"
	fs_per=$(tr '\n' ' ' <"$W.fs.writers")
	bt_per=$(tr '\n' ' ' <"$W.bt.writers")
	check "writers: write sections per writer agree (frlockstat -c: ${fs_per% }; frlock-hold.bt: ${bt_per% })" \
		sh -c "test -s '$W.fs.writers' && diff '$W.fs.writers' '$W.bt.writers' &&
			grep -q '^frlock_stress_timer ' '$W.fs.writers' && grep -q '^frlock_stress_writer ' '$W.fs.writers'"

	# A suite that counts its writes per context (hard irq: the hrtimer,
	# softirq: a timer, task: the writer thread) must agree with both.
	sed -n 's/.*writer=\([a-z]*\) writes=\([0-9]*\).*/\1 \2/p' "$W.kunit" |
		sed 's/^hardirq /frlock_stress_timer /; s/^softirq /frlock_stress_soft_timer /;
			s/^task /frlock_stress_writer /' | sort >"$W.kunit.writers"
	if [ -s "$W.kunit.writers" ]; then
		check "writers: write sections per writer as the suite counts them ($(tr '\n' ' ' <"$W.kunit.writers" | sed 's/ $//'))" \
			diff "$W.kunit.writers" "$W.fs.writers"
	fi

	# Hold-time buckets are not compared one by one, because the two tools
	# do not time the same interval. Each reads the clock in its own
	# program, and the programs of one event run one after the other: each
	# tool's interval, from its write_begin program to its write_end
	# program, holds part of the other tool's probes. Under TCG that is
	# microseconds, as long as the sections themselves (4 to 16 us), and it
	# follows the order of attachment: frlockstat attached first, 129 of
	# 1493 samples one bucket apart; bpftrace attached first, frlockstat's
	# hold times came out about a bucket longer (962 one-bucket moves for
	# 1817 samples). What must hold whatever the order: the same bucket
	# bounds, and median buckets at most one apart (a unit or bucketing
	# error would be ten apart).
	show_hists frlockstat "$W.fs.hold" frlock-hold.bt "$W.bt.hold"
	moved=$(awk 'FNR == 1 { f++ } { if (f == 1) a[$1] = $3; else b[$1] = $3; m[$1] = 1 }
		END { n = 0; for (k in m) keys[++n] = k
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (keys[j] + 0 < keys[i] + 0) { t = keys[i]; keys[i] = keys[j]; keys[j] = t }
			for (i = 1; i <= n; i++) { c += a[keys[i]] - b[keys[i]]; s += c < 0 ? -c : c }
			print s + 0 }' "$W.fs.hold" "$W.bt.hold")
	# Bounds: the same [min, max] for each bucket, as bpftrace's hist().
	bounds=$(cat "$W.fs.hold" "$W.bt.hold" | awk '
		{ want = $1 < 2 ? $1 : 2 * $1 - 1; p = $1; while (p > 1 && p % 2 == 0) p /= 2 }
		$2 != want || p != 1 { bad++ }
		END { print bad + 0 }')
	check "writers: hold-time buckets have bpftrace's bounds in both tools ($(wc -l <"$W.fs.hold") and $(wc -l <"$W.bt.hold") buckets, $bounds bad)" \
		test "$bounds" -eq 0 -a "$fs_samples" -gt 0
	# median FILE: the index (log2) of the bucket of the middle sample.
	median() {
		awk -v n="$1" '{ c += $3 } c * 2 >= n && !done { m = $1; done = 1 }
			END { l = 0; while (m > 1) { m /= 2; l++ } print l }' "$2"
	}
	m_fs=$(median "$fs_samples" "$W.fs.hold")
	m_bt=$(median "$bt_samples" "$W.bt.hold")
	check "writers: median hold-time buckets at most one apart (frlockstat 2^$m_fs ns, frlock-hold.bt 2^$m_bt ns; $moved one-bucket moves between the histograms, not compared: see agreement.sh)" \
		test "$m_fs" -le $((m_bt + 1)) -a "$m_bt" -le $((m_fs + 1)) -a "$fs_samples" -gt 0
fi

# --- Readers: frlockstat beside frlock-retries.bt ----------------------------

if run readers retries; then
	R=$tmp/readers
	fs_writes=$(num "$(fs_num "$R.fs" writes)")
	fs_retried=$(num "$(fs_num "$R.fs" retried_reads)")
	fs_retries=$(num "$(fs_num "$R.fs" retries)")
	rt_retried=$(num "$(bt_line "$R.retries" @retried_reads | keyed "$LOCK")")
	# frlockstat -c's retried reads per reader site ("read" call sites)
	fs_sites=$(grep '"type":"frlockstat_caller"' "$R.fs" | grep -F "\"lock\":\"$LOCK\"" |
		grep '"kind":"read"' | sed 's/.*"count":\([0-9]*\).*/\1/' | awk '{ s += $1 } END { print s + 0 }')
	fs_line "$R.fs" | buckets retries_per_read >"$R.fs.retries"
	bt_line "$R.retries" @retries | buckets "$LOCK" >"$R.bt.retries"
	fs_hist=$(total <"$R.fs.retries")
	bt_hist=$(total <"$R.bt.retries")
	echo "  readers: suite retries=$retries writes=$writes; frlockstat retried_reads=$fs_retried" \
		"retries=$fs_retries writes=$fs_writes (read sites: $fs_sites); frlock-retries.bt retried_reads=$rt_retried"
	check "readers: frlockstat counts the suite's retries ($fs_retries == $retries)" \
		test "$fs_retries" -eq "$retries" -a "$retries" -gt 0
	check "readers: frlockstat -c's read call sites add up to its retried reads ($fs_sites == $fs_retried)" \
		test "$fs_sites" -eq "$fs_retried"
	check "readers: retried reads, frlock-retries.bt == frlockstat ($rt_retried == $fs_retried)" \
		test "$rt_retried" -eq "$fs_retried" -a "$fs_retried" -gt 0
	show_hists frlockstat "$R.fs.retries" frlock-retries.bt "$R.bt.retries"
	check "readers: retries-per-read histograms equal bucket by bucket ($fs_hist == $bt_hist reads, $(wc -l <"$R.fs.retries") buckets)" \
		sh -c "test $fs_hist -eq $fs_retried -a $fs_hist -gt 0 && diff '$R.fs.retries' '$R.bt.retries'"
	check "readers: frlockstat counts the suite's write sections ($fs_writes == $writes)" \
		test "$fs_writes" -eq "$writes" -a "$writes" -gt 0
fi

rm -rf "$tmp"
exit 0
