#!/bin/sh
# Runs inside the guest booted on the frlock kernel: checks of the bpftrace
# tools in bpf/ and of frlock-watch (the guest side of `make run`). Prints one
# "ok - ...", "not ok - ..." or "skip - ..." line per check.
#
# usage: bpf.sh [all|vdso]
# "vdso" runs only the --via vdso checks. They need a clocksource the vDSO
# can read (tsc, kvm-clock): under TCG the kernel marks the TSC unstable and
# picks hpet, and then the vDSO falls back to the syscall. Boot that run
# with --append tsc=reliable; "all" skips them on such a clocksource.
REPO=/opt/frlock
B=$REPO/bpf
# ok, not_ok, skip, check and $tmp
# shellcheck source=tests/guest/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh

mode=${1:-all}
case $mode in all | vdso) ;; *) echo "usage: bpf.sh [all|vdso]" >&2; exit 2 ;; esac
if [ ! -d /sys/kernel/tracing/events/frlock ]; then
	skip "bpftrace tools: no frlock events (not the frlock kernel)"
	exit 0
fi
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)

# --- JSON helpers ----------------------------------------------------------

# hist_total FILE MAP: the sum of every bucket of hist MAP, all keys.
hist_total() {
	grep "\"type\": \"hist\", \"data\": {\"$2\"" "$1" | grep -o '"count": [0-9]*' |
		awk '{ s += $2 } END { print s + 0 }'
}
# map_total FILE MAP [KEY_ERE]: the sum of the values of MAP whose key
# matches KEY_ERE (every key if none; a scalar map has the key "").
map_total() {
	grep "\"type\": \"map\", \"data\": {\"$2\"" "$1" |
		awk -v m="$2" -v k="${3:-.*}" '{
			d = $0; sub(/^.*"data": \{"@[^"]*": /, "", d)
			if (d !~ /^\{/) { if ("" ~ "^(" k ")$") s += d + 0; next }
			while (match(d, /"[^"]*": -?[0-9]+/)) {
				p = substr(d, RSTART, RLENGTH); d = substr(d, RSTART + RLENGTH)
				key = p; sub(/^"/, "", key); sub(/": .*$/, "", key)
				v = p; sub(/^.*": /, "", v)
				if (key ~ "^(" k ")$") s += v
			}
		} END { print s + 0 }'
}
# map_keys FILE MAP: the keys of MAP, one a line.
map_keys() {
	grep "\"data\": {\"$2\"" "$1" | grep -o '"[^"]*": [[0-9]' | sed 's/": .*//; s/^"//' |
		grep -v '^@\|^count$\|^min$\|^max$' | sort -u
}

# run_tools SECONDS WRITES VIA TOOL...: start each bpf/frlock-TOOL.bt with
# -f json and an interval longer than the run (so that only the print at
# exit, after the probes are detached, counts), wait until all attached,
# run gtod-load, stop them. Output in $tmp/TOOL.json.
run_tools() {
	secs=$1 writes=$2 via=$3
	shift 3
	pids=
	for t in "$@"; do
		: >"$tmp/$t.json"
		bpftrace -f json "$B/frlock-$t.bt" 3600 >"$tmp/$t.json" 2>"$tmp/$t.err" &
		pids="$pids $!"
	done
	i=0
	for p in $pids; do
		i=$((i + 1))
		t=$(echo "$@" | cut -d' ' -f$i)
		wait_attached "$p" "$tmp/$t.json" '"type": "printf"' 1800 ||
			{ echo "frlock-$t.bt did not start:"; cat "$tmp/$t.err"; }
	done
	gtod-load -t 2 -d "$secs" -w "$writes" --via "$via" -i 0 -j >"$tmp/load.json" 2>"$tmp/load.err"
	load_rc=$?
	for p in $pids; do kill -INT "$p"; done
	for p in $pids; do wait_sigint "$p"; done
}

if [ "$mode" = all ]; then

# --- Every script parses on this kernel ------------------------------------

for f in "$B"/*.bt; do
	# -d: parse, resolve the probes and types, generate code; attach nothing
	check "bpftrace -d $(basename "$f") parses on the guest kernel, no warnings" \
		sh -c "bpftrace -d '$f' >/dev/null 2>'$tmp/d.err'; rc=\$?; cat '$tmp/d.err';
			[ \$rc -eq 0 ] && ! grep -q 'WARNING\|ERROR' '$tmp/d.err'"
done

# --- A fixed load with writer pressure --------------------------------------

run_tools 5 500 syscall retries hold
[ $load_rc -eq 0 ] && ok "gtod-load ran 5 s, syscall, 500 adjtimex writes/s" ||
	{ not_ok "gtod-load ran (exit $load_rc)"; cat "$tmp/load.err"; }
calls=$(grep -o '"total_count":[0-9]*' "$tmp/load.json" | cut -d: -f2)
echo "  load: ${calls:-?} gettimeofday calls; $(grep -o '"write_count":[0-9]*' "$tmp/load.json")"

R=$tmp/retries.json H=$tmp/hold.json
reads=$(map_total "$R" @reads)
retried_rt=$(map_total "$R" @retries 'tk_core,ktime_get_real_ts64')
retried_all=$(map_total "$R" @retries 'tk_core,.*')
waits=$(map_total "$R" @waits 'tk_core,.*')
echo "  retries: reads=$reads retries(ktime_get_real_ts64)=$retried_rt retries(all readers)=$retried_all waits=$waits"
check "retries: gettimeofday reads of tk_core were counted ($reads)" test "$reads" -gt 0
check "retries: gettimeofday reads retried ($retried_rt in ktime_get_real_ts64)" \
	test "$retried_rt" -gt 0
check "retries: retries <= reads ($retried_rt <= $reads)" test "$retried_rt" -le "$reads"
check "retries: tk_core's readers waited for open write sections ($waits)" test "$waits" -gt 0
# the tool counts what gtod-load did, give or take the kernel's own reads
# (do_adjtimex reads the time too) and the edges of the run
check "retries: reads >= gtod-load's calls ($reads >= ${calls:-?})" \
	test "$reads" -ge "${calls:-1}"
# The reader's caller, from the stack taken at the event (-f json writes
# a stack's frames joined by "\n").
check "retries: @retry_paths names the reader's caller (ktime_get_real_ts64 from the gettimeofday syscall)" \
	grep -q '"@retry_paths": {.*ktime_get_real_ts64+[0-9]*\\n *__x64_sys_gettimeofday+' "$R"

samples=$(hist_total "$H" @hold_ns)
writes=$(map_total "$H" @writes)
first=$(map_total "$H" @seq_first 'tk_core')
last=$(map_total "$H" @seq_last 'tk_core')
tk_samples=$(grep '"type": "hist", "data": {"@hold_ns"' "$H" |
	grep -o '"tk_core,[^"]*": \[[^]]*\]' | grep -o '"count": [0-9]*' |
	awk '{ s += $2 } END { print s + 0 }')
echo "  hold: samples=$samples (tk_core $tk_samples), write_end events=$writes," \
	"tk_core sections opened at counts $first..$last"
map_keys "$H" @hold_ns | sed 's/^/  hold key: /'
check "hold: the hold-time histogram is not empty ($samples)" test "$samples" -gt 0
check "hold: the tick writes (timekeeping_advance)" \
	grep -q '"tk_core,timekeeping_advance"' "$H"
check "hold: adjtimex writes (do_adjtimex)" grep -q '"tk_core,do_adjtimex"' "$H"
check "hold: @write_paths names the writer's caller (timekeeping_advance from the tick's update_wall_time)" \
	grep -q '"@write_paths": {.*timekeeping_advance+[0-9]*\\n *update_wall_time+' "$H"
check "hold: @write_paths names the writer's caller (do_adjtimex from the adjtime syscall)" \
	grep -q '"@write_paths": {.*do_adjtimex+[0-9]*\\n *__[a-z0-9_]*adjtime[a-z0-9_]*+' "$H"
map_keys "$H" @seqcount_hold_ns | sed 's/^/  seqcount hold key: /'
check "hold: seqcount write sections too: jiffies_seq, written by the tick's tick_do_update_jiffies64" \
	grep -q '"jiffies_seq,tick_do_update_jiffies64"' "$H"
# The kernel numbers write sections (seq, the even count each opened at:
# two apart). Beside the syscall-counting
# tools, the kernel skips a tracepoint's BPF programs when they interrupt
# another BPF program on that CPU: the tick's sections that land in one are
# not seen (begin and end both, so no wrong sample). Alone, frlock-hold.bt
# must see every section (below).
sections=$(((last - first) / 2 + 1))
echo "  hold: beside the syscall-counting tools, $((sections - tk_samples)) of $sections write sections unseen"
check "hold: >= 95% of the kernel's write sections seen beside the other tools ($tk_samples of $sections)" \
	test $((tk_samples * 100)) -ge $((sections * 95)) -a "$tk_samples" -le "$sections"
# write_end counted on its own: more only by the sections that ended while
# bpftrace attached or detached its probes one by one (a few ticks).
check "hold: write_end events counted apart, within 5% of the samples ($writes vs $samples)" \
	test $((writes * 100)) -ge $((samples * 95)) -a $((writes * 100)) -le $((samples * 105))

# frlock-hold.bt alone: the write sections from the first sampled to the
# last give one sample each, but for the rare tick that lands while an
# adjtimex section's probe runs on that CPU: the kernel then skips the
# nested BPF program, and that section is unseen (one in 6198, seen once).
run_tools 4 500 syscall hold
samples=$(grep '"type": "hist", "data": {"@hold_ns"' "$H" |
	grep -o '"tk_core,[^"]*": \[[^]]*\]' | grep -o '"count": [0-9]*' |
	awk '{ s += $2 } END { print s + 0 }')
first=$(map_total "$H" @seq_first 'tk_core')
last=$(map_total "$H" @seq_last 'tk_core')
check "hold alone: samples are >= 99% of write sections by the kernel's seq ($samples of ($last - $first) / 2 + 1)" \
	test "$samples" -gt 0 -a "$samples" -le $(((last - first) / 2 + 1)) -a \
	     $((samples * 100)) -ge $((((last - first) / 2 + 1) * 99))

for t in retries hold; do
	check "frlock-$t.bt: nothing on stderr" test ! -s "$tmp/$t.err"
	[ ! -s "$tmp/$t.err" ] || sed 's/^/  /' "$tmp/$t.err"
done

# Ctrl-C while the load runs: detaching must not disturb the readers. (A
# kfunc on ktime_get_real_ts64, detached under this load, hung the TCG
# guest; if this check never prints, that is what happened.)
stop_under_load() {
	pids=
	for t in retries hold; do
		: >"$tmp/$t.json"
		bpftrace -f json "$B/frlock-$t.bt" >"$tmp/$t.json" 2>"$tmp/$t.err" &
		pids="$pids $!"
		wait_attached $! "$tmp/$t.json" '"type": "printf"' 1800 || return 1
	done
	gtod-load -t 2 -d 6 -w 500 -i 0 -q >/dev/null 2>&1 &
	load=$!
	sleep 3
	for p in $pids; do kill -INT "$p"; done
	for p in $pids; do wait_sigint "$p" || return 1; done
	wait $load
}
check "the tools stop on Ctrl-C while the load runs, and the load completes" stop_under_load

# Standalone, in text mode as a user runs them: each interval prints the
# histograms (bpftrace's own drawing), and Ctrl-C ends with the totals.
standalone() {
	# Emptied here, not by the redirection of a background job, which
	# may come after the wait has read the previous run's banner.
	out=$tmp/text-$1.out
	: >"$out"
	bpftrace "$B/frlock-$1.bt" 1 >"$out" 2>&1 &
	p=$!
	wait_attached $p "$out" '^Tracing' 1800 || return 1
	gtod-load -t 2 -d 3 -w 200 -i 0 -q >/dev/null 2>&1
	# Under the load bpftrace prints late (one print in 3 s, seen in
	# make test): give it up to 10 s more for a second interval.
	i=0
	while [ "$(grep -c '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] ' "$out")" -lt 2 ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -INT $p
	wait_sigint $p || return 1
	cat "$out"
	n=$(grep -c '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] ' "$out")
	[ "$n" -ge 2 ] || { echo "$n interval headers, wanted 2 or more"; return 1; }
	grep -q "^$2" "$out" || { echo "no line starts with '$2'"; return 1; }
	[ "${3:-hist}" = counts ] ||
		grep -q '^\[[0-9KM, ]*[])] *[0-9]* |@' "$out" || { echo "no histogram bar"; return 1; }
}
check "frlock-hold.bt 1, as text: a histogram per writer every second, Ctrl-C ends it" \
	standalone hold '@hold_ns\[tk_core, timekeeping_advance\]: '
check "frlock-retries.bt 1, as text: retries per lock and reader every second, Ctrl-C ends it" \
	standalone retries '@retries\[tk_core, ktime_get_real_ts64\]: ' counts

# --- seqcount: renames against lookups ---------------------------------------

# path-load renames entries of a tree while threads look them up: the
# rename_lock and d_seq readers retry, which frlock-retries.bt must show by
# lock name (every dentry's d_seq is "": no symbol) and reader;
# frlock-hold.bt times d_move's sections.
seqcount_run() {
	pids=
	for t in retries hold; do
		: >"$tmp/sc-$t.json"
		bpftrace -f json "$B/frlock-$t.bt" 3600 >"$tmp/sc-$t.json" 2>"$tmp/sc-$t.err" &
		pids="$pids $!"
		wait_attached $! "$tmp/sc-$t.json" '"type": "printf"' 1800 || return 1
	done
	path-load -d 4 -j --writer rename "$tmp/pl" >"$tmp/sc.load" 2>&1
	for p in $pids; do kill -INT "$p"; done
	for p in $pids; do wait_sigint "$p" || return 1; done
}
check "frlock-retries.bt and frlock-hold.bt ran beside path-load --writer rename" seqcount_run
echo "  path-load: $(tail -1 "$tmp/sc.load")"
map_keys "$tmp/sc-retries.json" @seqcount_retries | sed 's/^/  seqcount retry key: /'
map_keys "$tmp/sc-retries.json" @seqcount_waits | sed 's/^/  seqcount wait key: /'
sc_retries=$(map_total "$tmp/sc-retries.json" @seqcount_retries '(rename_lock|),[a-z_0-9.]+')
check "retries: rename_lock and d_seq readers retried under renames, counted by lock and reader function ($sc_retries)" \
	test "$sc_retries" -gt 0
check "hold: rename_lock's write sections timed, written by d_move" \
	grep -q '"@seqcount_hold_ns": {.*"rename_lock,d_move": \[{' "$tmp/sc-hold.json"
for t in retries hold; do
	check "frlock-$t.bt beside path-load: nothing on stderr" test ! -s "$tmp/sc-$t.err"
	[ ! -s "$tmp/sc-$t.err" ] || sed 's/^/  /' "$tmp/sc-$t.err"
done

fi # all

# --- --via vdso: the kernel sees no gettimeofday reads ---------------------

# Counted by comm, so that nothing else in the guest interferes; the same
# probes must see the syscall load, or they prove nothing. Reads are counted
# at the gettimeofday syscall (gtod-load times itself with clock_gettime,
# which is not the load): a kfunc on ktime_get_real_ts64 hung the TCG guest
# when detached.
vdso_probe() {
	: >"$tmp/vdso.json"
	bpftrace -f json -e '
		BEGIN { printf("go\n"); }
		tracepoint:syscalls:sys_enter_gettimeofday /comm == "gtod-load"/ {
			@syscalls = count(); @reads = count(); }
		tracepoint:frlock:frlock_read_retry,
		tracepoint:frlock:frlock_read_wait /comm == "gtod-load"/ {
			@read_events[ksym(args->caller)] = count(); }' \
		>"$tmp/vdso.json" 2>"$tmp/vdso.err" &
	p=$!
	wait_attached $p "$tmp/vdso.json" '"go' 1800
	gtod-load -t 2 -d 3 -w 0 --via "$1" -i 0 -q >"$tmp/vdso.load" 2>&1
	kill -INT $p
	wait_sigint $p
}
vdso_checks() {
vdso_probe syscall
sys_syscalls=$(map_total "$tmp/vdso.json" @syscalls)
sys_reads=$(map_total "$tmp/vdso.json" @reads)
echo "  --via syscall: $sys_syscalls gettimeofday syscalls, $sys_reads reads"
check "--via syscall: the probes see gettimeofday syscalls and reads" \
	test "$sys_syscalls" -gt 0 -a "$sys_reads" -gt 0
vdso_probe vdso
v_syscalls=$(map_total "$tmp/vdso.json" @syscalls)
v_events=$(map_total "$tmp/vdso.json" @read_events ktime_get_real_ts64)
# timer interrupts read the time while gtod-load runs (ktime_get, ...)
echo "  frlock read events in gtod-load's context, by reader:" \
	"$(grep -o '"@read_events": {[^}]*}' "$tmp/vdso.json")"
sed 's/^/  vdso load: /' "$tmp/vdso.load"
check "--via vdso: no gettimeofday syscall ($v_syscalls)" test "$v_syscalls" -eq 0
check "--via vdso: no frlock read event from ktime_get_real_ts64 ($v_events)" test "$v_events" -eq 0
check "--via vdso: gtod-load says the kernel sees no reads" grep -qi 'vdso' "$tmp/vdso.load"
}
case $clocksource in
tsc | kvm-clock) vdso_checks ;;
*)
	if [ "$mode" = vdso ]; then
		not_ok "--via vdso: clocksource $clocksource, which the vDSO cannot read (boot with tsc=reliable)"
	else
		skip "--via vdso: clocksource $clocksource, which the vDSO cannot read: it falls back to the syscall (run bpf.sh vdso on a guest booted with tsc=reliable)"
	fi
	check "frlock-watch --via vdso warns that clocksource $clocksource sends vDSO reads to the kernel" \
		sh -c "'$REPO/guest-rootfs/frlock-watch' -d 1 -t 1 -w 0 --via vdso -o '$tmp/w2.ndjson' 2>&1 |
			grep -q 'clocksource $clocksource'"
	;;
esac

[ "$mode" = all ] || { rm -rf "$tmp"; exit 0; }

# --- frlock-watch, the guest side of make run ----------------------------------

watch_run() {
	"$REPO/guest-rootfs/frlock-watch" -d 4 -t 2 -w 200 -i 1 -o "$tmp/feed.ndjson" >"$tmp/watch.out" 2>&1
}
if watch_run; then ok "frlock-watch ran"; else not_ok "frlock-watch ran"; fi
sed 's/^/  watch: /' "$tmp/watch.out"
W=$tmp/feed.ndjson
# frlockstat's own stderr reports of events it lost (a failed map update)
# or the kernel did not run it for (recursion) are allowed: never silent.
check "frlock-watch: nothing but its own notes, and frlockstat's counts of lost events, on stdout and stderr" \
	sh -c "! grep -v '^frlock-watch: \|^frlockstat: [0-9]* events \(lost\|missed\) so far' '$tmp/watch.out'"
check "frlock-watch: frlockstat's intervals in the feed, with running totals and percentiles" \
	sh -c "[ \$(grep -c '^{\"type\":\"frlockstat\",.*\"lock\":\"tk_core\".*\"total\":{.*\"hold_ns_pct\":{' '$W') -ge 3 ]"
check "frlock-watch: the retries of gettimeofday's reader site in the feed" \
	grep -q '"kind":"retry","caller":"ktime_get_real_ts64+' "$W"
check "frlock-watch: gtod-load's lines, with the realtime clock and the path of the reads" \
	sh -c "grep -q '^{\"type\":\"load\",.*\"ts\":[0-9.]*,\"via\":\"syscall\"' '$W' &&
		grep -q '^{\"type\":\"load_summary\"' '$W'"
check "frlock-watch: the feed ends with feed_end" \
	sh -c "tail -1 '$W' | grep -qx '{\"type\":\"feed_end\",\"status\":0}'"

# --- Wrong knobs -------------------------------------------------------------

check "gtod-load -t 0 is refused (exit 2)" expect_fail 2 "gtod-load: invalid" gtod-load -t 0
check "gtod-load -d 0 is refused (exit 2)" expect_fail 2 "gtod-load: invalid" gtod-load -d 0
check "gtod-load --via foo is refused (exit 2)" expect_fail 2 "gtod-load: unknown" gtod-load --via foo
check "gtod-load -w -5 is refused (exit 2)" expect_fail 2 "gtod-load: invalid" gtod-load -w -5
check "gtod-load --bogus is refused (exit 2)" expect_fail 2 "gtod-load: unknown option" gtod-load --bogus
check "frlock-watch -i 0 is refused (exit 2)" expect_fail 2 "frlock-watch: -i wants" \
	"$REPO/guest-rootfs/frlock-watch" -i 0
check "frlock-watch --via foo is refused (exit 2)" expect_fail 2 "frlock-watch: --via wants" \
	"$REPO/guest-rootfs/frlock-watch" --via foo

rm -rf "$tmp"
exit 0
