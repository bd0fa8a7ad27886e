#!/bin/sh
# Runs inside the guest booted on the frlock kernel: the bpftrace tools in
# bpf/ and frlock-watch (the guest side of `make run`) under load. What the
# tools print as JSON goes to /results/bpftrace (run-guest --results), where
# the host judges it (host/judge-bpftrace: frlock/judges/bpftrace.py); the checks
# of their text, their stops and bad knobs print one "ok - ...",
# "not ok - ..." or "skip - ..." line each here.
#
# usage: bpf.sh [all|vdso|watch SECONDS]
# "watch" runs only frlock-watch, with SECONDS of load: the host runs it in
# a guest of its own, again and twice as long until frlockstat printed
# enough intervals (host/frlock/tests/guest_jobs.py).
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
watch_s=${2:-4}
case $mode in all | vdso | watch) ;; *) echo "usage: bpf.sh [all|vdso|watch SECONDS]" >&2; exit 2 ;; esac
if [ ! -d /sys/kernel/tracing/events/frlock ]; then
	skip "bpftrace tools: no frlock events (not the frlock kernel)"
	exit 0
fi
clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)

OUT=/results/bpftrace
if ! mkdir -p "$OUT" || ! [ -w "$OUT" ]; then
	not_ok "bpftrace tools: $OUT is writable (run-guest --results)"
	exit 0
fi
# part NAME: tell the judge this part ran (its files are in $OUT).
part() { echo "$1" >>"$OUT/parts"; }

# run_tools RUN SECONDS WRITES TOOL...: start each bpf/frlock-TOOL.bt with
# -f json and an interval longer than the run (so that only the print at
# exit, after the probes are detached, counts), wait until all attached,
# run gtod-load, stop them. Output in $OUT/RUN-TOOL.json and .err, the
# load's in $OUT/RUN-load.json.
run_tools() {
	run=$1 secs=$2 writes=$3
	shift 3
	pids=
	for t in "$@"; do
		: >"$OUT/$run-$t.json"
		bpftrace -f json "$B/frlock-$t.bt" 3600 >"$OUT/$run-$t.json" 2>"$OUT/$run-$t.err" &
		pids="$pids $!"
	done
	i=0
	for p in $pids; do
		i=$((i + 1))
		t=$(echo "$@" | cut -d' ' -f$i)
		wait_attached "$p" "$OUT/$run-$t.json" '"type": "printf"' 1800 ||
			{ echo "frlock-$t.bt did not start:"; cat "$OUT/$run-$t.err"; }
	done
	gtod-load -t 2 -d "$secs" -w "$writes" -i 0 -j >"$OUT/$run-load.json" 2>"$tmp/load.err"
	load_rc=$?
	for p in $pids; do kill -INT "$p"; done
	for p in $pids; do wait_sigint "$p"; done
}

if [ "$mode" = watch ]; then
	"$REPO/guest-rootfs/frlock-watch" -d "$watch_s" -t 2 -w 200 -i 1 -o "$OUT/watch.ndjson" \
		>"$OUT/watch.out" 2>&1
	echo "watch $?" >"$OUT/watch.rc"
	part watch
	rm -rf "$tmp"
	exit 0
fi

if [ "$mode" = all ]; then

# --- Every script parses on this kernel ------------------------------------

for f in "$B"/*.bt; do
	# -d: parse, resolve the probes and types, generate code; attach nothing
	check "bpftrace -d $(basename "$f") parses on the guest kernel, no warnings" \
		sh -c "bpftrace -d '$f' >/dev/null 2>'$tmp/d.err'; rc=\$?; cat '$tmp/d.err';
			[ \$rc -eq 0 ] && ! grep -q 'WARNING\|ERROR' '$tmp/d.err'"
done

# --- A fixed load with writer pressure --------------------------------------

# Both tools beside each other, then frlock-hold.bt alone (the host judges
# their counts: frlock/judges/bpftrace.py).
run_tools both 5 500 retries hold
[ $load_rc -eq 0 ] && ok "gtod-load ran 5 s, syscall, 500 adjtimex writes/s" ||
	{ not_ok "gtod-load ran (exit $load_rc)"; cat "$tmp/load.err"; }
run_tools alone 4 500 hold
part tools

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
		: >"$OUT/renames-$t.json"
		bpftrace -f json "$B/frlock-$t.bt" 3600 >"$OUT/renames-$t.json" 2>"$OUT/renames-$t.err" &
		pids="$pids $!"
		wait_attached $! "$OUT/renames-$t.json" '"type": "printf"' 1800 || return 1
	done
	path-load -d 4 -j --writer rename "$tmp/pl" >"$OUT/renames-load.json" 2>&1
	for p in $pids; do kill -INT "$p"; done
	for p in $pids; do wait_sigint "$p" || return 1; done
}
check "frlock-retries.bt and frlock-hold.bt ran beside path-load --writer rename" seqcount_run
part renames

fi # all

# --- --via vdso: the kernel sees no gettimeofday reads ---------------------

# Counted by comm, so that nothing else in the guest interferes; the same
# probes must see the syscall load, or they prove nothing. Reads are counted
# at the gettimeofday syscall (gtod-load times itself with clock_gettime,
# which is not the load): a kfunc on ktime_get_real_ts64 hung the TCG guest
# when detached.
vdso_probe() {
	: >"$OUT/vdso-$1.json"
	bpftrace -f json -e '
		BEGIN { printf("go\n"); }
		tracepoint:syscalls:sys_enter_gettimeofday /comm == "gtod-load"/ {
			@syscalls = count(); @reads = count(); }
		tracepoint:frlock:frlock_read_retry,
		tracepoint:frlock:frlock_read_wait /comm == "gtod-load"/ {
			@read_events[ksym(args->caller)] = count(); }' \
		>"$OUT/vdso-$1.json" 2>"$tmp/vdso.err" &
	p=$!
	wait_attached $p "$OUT/vdso-$1.json" '"go' 1800
	gtod-load -t 2 -d 3 -w 0 --via "$1" -i 0 -q >"$OUT/vdso-$1.load" 2>&1
	kill -INT $p
	wait_sigint $p
}
vdso_checks() {
	vdso_probe syscall
	vdso_probe vdso
	part vdso
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
