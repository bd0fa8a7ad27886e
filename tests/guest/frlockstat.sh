#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat under a
# gettimeofday syscall load with adjtimex writers, a rename storm and the
# benchmark module's writer. One ok/not ok line each.
F=/opt/frlock/bpf/.output/frlockstat
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh

# field NAME FILE: the first numeric value of "NAME": in an NDJSON file.
field() { sed -n "s/.*\"$1\":\\([0-9]*\\).*/\\1/p" "$2" | head -1; }

if [ ! -x "$F" ]; then
	not_ok "frlockstat is built (no $F: run make -C bpf)"
	exit 0
fi
# The events carry (lock, seq, caller): timekeeping's frlock is named by
# its symbol, tk_core (the count is the struct's first member).
tk=tk_core

for mode in tp_btf raw_tp; do
	opt=
	[ $mode = raw_tp ] && opt=-r
	# frlockstat's start (BTF, verifier) takes seconds under TCG: start the
	# load only once it is attached, and let the load fill its interval.
	# shellcheck disable=SC2086
	"$F" $opt -j -c 6 1 >"$tmp/$mode.json" 2>"$tmp/$mode.err" &
	stat=$!
	wait_attached $stat "$tmp/$mode.err" '^Tracing' 600
	gtod-load -t 2 -d 5 -w 1000 -i 0 >/dev/null 2>&1
	wait $stat
	rc=$?
	grep "\"lock\":\"$tk\"" "$tmp/$mode.json" | grep '"type":"frlockstat"' >"$tmp/$mode.tk"
	head -c 600 "$tmp/$mode.tk" | sed "s/^/  $mode: /"
	echo
	check "frlockstat ($mode) ran" test $rc -eq 0
	check "frlockstat ($mode): every record is schema version 2" \
		sh -c "test -s '$tmp/$mode.json' && ! grep -v '^{\"type\":\"frlockstat[a-z_]*\",\"v\":2,' '$tmp/$mode.json'"
	writes=$(field writes "$tmp/$mode.tk")
	check "frlockstat ($mode) saw ${writes:-no} $tk writes, with hold times" \
		grep -q '"writes":[1-9][0-9]*,.*"hold_ns":\[{' "$tmp/$mode.tk"
	retries=$(field retries "$tmp/$mode.tk")
	waits=$(field waits "$tmp/$mode.tk")
	check "frlockstat ($mode) saw ${retries:-no} $tk retries, joined to their writes, and ${waits:-no} waits, each timed" \
		sh -c "grep -q '\"retries\":[1-9][0-9]*,.*\"retries_joined\":[1-9]' '$tmp/$mode.tk' &&
		       test '$(field waits_joined "$tmp/$mode.tk")' = '${waits:-x}'"
	check "frlockstat ($mode) names writer and reader call sites" \
		sh -c "grep -q '\"kind\":\"write\",\"caller\":\"timekeeping_advance+' $tmp/$mode.json &&
		       grep -q '\"kind\":\"retry\",\"caller\":\"ktime_get_real_ts64+' $tmp/$mode.json"
	grep '"type":"frlockstat".*"lock":"jiffies_seq"' "$tmp/$mode.json" >"$tmp/$mode.jq"
	# 1000 adjtimex calls a second, each opening a section in do_adjtimex
	# and one in timekeeping_advance, against the tick's 250 in the latter.
	check "frlockstat ($mode) -j: $tk is kind frlock, top writer timekeeping_advance; the tick's jiffies_seq a static seqcount named by its symbol, top writer tick_do_update_jiffies64" \
		sh -c "grep -q '\"kind\":\"frlock\",.*\"top_writer\":\"timekeeping_advance\",\"top_reader\":\"ktime_get_real_ts64\"' '$tmp/$mode.tk' &&
		       grep -q '\"kind\":\"seqcount\",\"naming\":\"symbol\",\"class\":false,.*\"top_writer\":\"tick_do_update_jiffies64\"' '$tmp/$mode.jq'"
	check "frlockstat ($mode) -j -c: site records carry their lock's kind" \
		sh -c "grep -q '\"type\":\"frlockstat_caller\",\"v\":2,\"lock\":\"jiffies_seq\",\"lock_kind\":\"seqcount\",\"kind\":\"write\",\"caller\":\"tick_do_update_jiffies64+' '$tmp/$mode.json'"
	check "frlockstat ($mode) reports the hold time's p50 <= p99 <= max" \
		sh -c "sed -n 's/.*\"hold_ns_pct\":{\"p50\":\([0-9]*\),\"p99\":\([0-9]*\),\"max\":\([0-9]*\)}.*/\1 \2 \3/p' \
			'$tmp/$mode.tk' | awk '{ n++ } \$1 > \$2 || \$2 > \$3 { bad++ } END { exit !(n > 0 && !bad) }'"
done

# Running totals, printed as differences: the intervals add up to the
# totals, and nothing is lost between two prints (nothing is cleared).
"$F" -j 1 >"$tmp/iv.json" 2>"$tmp/iv.err" &
stat=$!
wait_attached $stat "$tmp/iv.err" '^Tracing' 600
gtod-load -t 2 -d 4 -w 500 -i 0 >/dev/null 2>&1
kill -INT $stat
wait_sigint $stat
grep "\"type\":\"frlockstat\".*\"lock\":\"$tk\"" "$tmp/iv.json" >"$tmp/iv.tk"
sums=$(awk '{
	match($0, /"writes":[0-9]+/); w += substr($0, RSTART + 9, RLENGTH - 9)
	match($0, /"retries":[0-9]+/); r += substr($0, RSTART + 10, RLENGTH - 10)
	match($0, /"total":\{"writes":[0-9]+,"retries":[0-9]+/); t = substr($0, RSTART, RLENGTH)
	n++ } END { gsub(/[^0-9,]/, "", t); print n, w, r, t }' "$tmp/iv.tk")
set -- $sums
echo "  $1 intervals: writes $2, retries $3; running totals (writes,retries) $4"
check "frlockstat -j 1: $1 intervals whose writes and retries add up to the running totals ($2,$3 == $4)" \
	test "$1" -ge 3 -a "$2,$3" = "$4"

# -L with a name no lock has: empty intervals, one line naming what there
# is (timekeeping's frlock writes at every tick), and exit status 1 at the end.
"$F" -L no_such_lock 2 1 >"$tmp/filter" 2>&1
filter_rc=$?
sed 's/^/  /' "$tmp/filter"
check "frlockstat -L with a name no lock has exits 1 (exit $filter_rc)" test $filter_rc -eq 1
check "frlockstat -L filters out other locks" grep -qx '(no lock activity on no_such_lock)' "$tmp/filter"
check "frlockstat -L with a name no lock has says so once, listing the locks seen ($tk among them)" \
	sh -c "test \$(grep -c '^frlockstat: no lock matches -L no_such_lock; seen so far: .*$tk (frlock)' '$tmp/filter') -eq 1"

# Kinds: the table lists frlock and seqcount rows, and -k keeps one kind.
"$F" -w 2 1 >"$tmp/all" 2>&1
"$F" -k seqcount 2 1 >"$tmp/seqcount" 2>&1
"$F" -k frlock 2 1 >"$tmp/frlock" 2>&1
sed 's/^/  /' "$tmp/all"
check "frlockstat's table has a $tk frlock row and the tick's jiffies_seq seqcount row" \
	sh -c "grep -q '^$tk  *frlock ' '$tmp/all' && grep -q '^jiffies_seq  *seqcount ' '$tmp/all'"
check "frlockstat's table fits 100 columns (-w: wider, with WRITER and READER)" \
	sh -c "test \$(sed -n '/^LOCK /,/^\$/p' '$tmp/seqcount' | wc -L) -le 100 &&
	       test \$(sed -n '/^LOCK /,/^\$/p' '$tmp/all' | wc -L) -gt 100"
# The WRITER column: the busiest writer site's function (-w).
check "frlockstat -w names the busiest writers: timekeeping_advance for $tk, tick_do_update_jiffies64 for jiffies_seq" \
	sh -c "grep -q '^$tk  *frlock .* timekeeping_advance ' '$tmp/all' &&
	       grep -q '^jiffies_seq  *seqcount .* tick_do_update_jiffies64 ' '$tmp/all'"
# Sorted by retries/s, then writes/s (a sort that fails prints the rows).
sorted() {
	sed -n '/^LOCK /,/^$/p' "$1" | sed '1d;/^$/d;/^(/d' |
		awk '{ print $7, $3, $1 }' >"$tmp/order"
	sort -s -k1,1gr -k2,2gr "$tmp/order" | cmp -s - "$tmp/order" || { cat "$tmp/order"; return 1; }
}
check "frlockstat's table is sorted by retries/s, then writes/s" sorted "$tmp/all"
# nrows FILE: the rows of the (first) table in FILE.
nrows() { sed -n '/^LOCK /,/^$/p' "$1" | grep -c ' frlock \| seqcount '; }
rows=$(nrows "$tmp/all")
"$F" -n 1 2 1 >"$tmp/top1" 2>&1
sed 's/^/  /' "$tmp/top1"
check "frlockstat -n 1: one row, and a line saying how many more there are ($rows locks in the full table)" \
	sh -c "test $(nrows "$tmp/top1") -eq 1 &&
	       grep -q '^([1-9][0-9]* more locks*: -n [0-9]* shows them)\$' '$tmp/top1'"
check "frlockstat -k seqcount shows seqcount rows only" \
	sh -c "grep -q '^jiffies_seq  *seqcount ' '$tmp/seqcount' && ! grep -q ' frlock ' '$tmp/seqcount'"
check "frlockstat -k frlock shows frlock rows only" \
	sh -c "grep -q '^$tk  *frlock ' '$tmp/frlock' && ! grep -q ' seqcount ' '$tmp/frlock'"
# A static seqcount by its symbol: the tick's writer is the one site.
"$F" -L jiffies_seq -C 2 1 >"$tmp/jiffies" 2>&1
sed 's/^/  /' "$tmp/jiffies"
check "frlockstat -L jiffies_seq -C: one row, written by tick_do_update_jiffies64, the writer site's caller named" \
	sh -c "test \$(grep -c '^[a-z_.]*  *seqcount ' '$tmp/jiffies') -eq 1 && grep -q '^jiffies_seq  *seqcount ' '$tmp/jiffies' &&
		grep -q '^  write  *tick_do_update_jiffies64+0x[0-9a-f]*  *[a-z_][a-z0-9_.]*+0x[0-9a-f]* ' '$tmp/jiffies'"

# -L 0xADDR: one address, the static jiffies_seq's, labelled by its symbol.
addr=$(awk '$3 == "jiffies_seq" { print "0x" $1; exit }' /proc/kallsyms)
"$F" -L "$addr" 2 1 >"$tmp/byaddr" 2>&1
sed 's/^/  /' "$tmp/byaddr"
check "frlockstat -L $addr (jiffies_seq's address): that one row, labelled jiffies_seq" \
	sh -c "test $(nrows "$tmp/byaddr") -eq 1 && grep -q '^jiffies_seq  *seqcount ' '$tmp/byaddr'"

# --- Names: one row per lock, unrelated locks never merged --------------------
# Creating and removing files kills dentries, which writes their d_seq:
# every dentry's counter is one row, named by its slab cache's type.
churn() {
	i=0
	while [ $i -lt 400 ]; do
		: >"$tmp/churn.$i" && rm -f "$tmp/churn.$i"
		i=$((i + 1))
	done
}
"$F" -j -L dentry.d_seq 4 1 >"$tmp/dseq" 2>"$tmp/dseq.err" &
stat=$!
wait_attached $stat "$tmp/dseq.err" '^Tracing' 600
churn
wait $stat
head -c 400 "$tmp/dseq" | sed 's/^/  /'
echo
check "frlockstat -j -L dentry.d_seq: one row for every dentry's d_seq, a slab class, written" \
	sh -c "test \$(grep -c '^{\"type\":\"frlockstat\",' '$tmp/dseq') -eq 1 &&
	       grep -q '\"lock\":\"dentry.d_seq\",\"kind\":\"seqcount\",\"naming\":\"slab\",\"class\":true,.*\"writes\":[1-9]' '$tmp/dseq'"
# Two counters the kernel's call sites both spell "seq": each task's
# fs_struct's (written by chdir: set_fs_pwd) and the hrtimer bases' (per
# CPU, written when timers run). Series v3 named both "seq" in its events,
# and frlockstat v1 showed them as one row; they are two rows (an
# fs_struct is fs_struct.seq, or where SLUB merged its cache with another,
# the cache's name, the offset and the writer).
chdirs() {
	i=0
	while [ $i -lt 300 ]; do
		cd /tmp && cd /
		i=$((i + 1))
	done
}
"$F" -j -w -k seqcount 4 1 >"$tmp/seq" 2>"$tmp/seq.err" &
stat=$!
wait_attached $stat "$tmp/seq.err" '^Tracing' 600
chdirs
wait $stat
grep -o '"lock":"[^"]*","kind":"seqcount","naming":"[a-z]*"' "$tmp/seq" | sed 's/^/  /'
fs_row=$(grep '"naming":"slab"' "$tmp/seq" | grep '"top_writer":"set_fs_pwd"' |
	sed 's/.*"lock":"\([^"]*\)".*/\1/' | head -1)
hr_row=$(grep '"naming":"percpu"' "$tmp/seq" | grep '"top_writer":"__hrtimer_run_queues"' |
	sed 's/.*"lock":"\([^"]*\)".*/\1/' | head -1)
check "two unrelated counters spelled \"seq\" are two rows: the fs_struct's (${fs_row:-none}, a slab object) and an hrtimer base's (${hr_row:-none}, per CPU)" \
	sh -c "test -n '$fs_row' -a -n '$hr_row' && test '$fs_row' != '$hr_row' &&
	       case '$hr_row' in hrtimer_bases.clock_base*.seq) true ;; *) false ;; esac"

# --- The time readers lost, and the writers that cost it ----------------------
# A rename storm: rename_lock's readers wait and retry, and so do the
# dentries' d_seq readers; both rows fill LOST, and -c names the writer
# whose sections cost readers the most time: d_move (rename_lock) and
# __d_move (d_seq).
mkdir -p /tmp/fs-rename
path-load -d 40 --writer rename /tmp/fs-rename >"$tmp/rename.load" 2>&1 &
load=$!
sleep 2
"$F" -c -k seqcount 4 1 >"$tmp/storm.c" 2>&1
"$F" 2 1 >"$tmp/storm" 2>&1
kill $load 2>/dev/null
wait $load 2>/dev/null
grep -E '^(LOCK|rename_lock|dentry.d_seq) ' "$tmp/storm" | sed 's/^/  /'
# LOST/s is the 9th column: filled (not "-", not 0) for both.
lost_filled() {
	awk -v l="$1" '$1 == l && $9 != "-" && $9 !~ /^(≥)?0ns$/ { found = 1 } END { exit !found }' "$2"
}
check "rename storm: frlockstat 2 1 shows time lost for rename_lock" lost_filled rename_lock "$tmp/storm"
check "rename storm: frlockstat 2 1 shows time lost for dentry.d_seq" lost_filled dentry.d_seq "$tmp/storm"
# costliest LOCK FILE: the writer function whose sections cost LOCK's
# readers the most time (caused and causedwait, by TOTAL_NS).
costliest() {
	sed -n "/^$1:/,/^\$/p" "$2" | awk '$1 == "caused" || $1 == "causedwait" {
		f = $2; sub(/\+.*/, "", f); t[f] += $NF } END {
		for (f in t) if (t[f] > best) { best = t[f]; who = f } print who }'
}
sed -n '/^rename_lock:/,/^$/p;/^dentry.d_seq:/,/^$/p' "$tmp/storm.c" | sed 's/^/  /'
who=$(costliest rename_lock "$tmp/storm.c")
check "rename storm: -c names d_move as the writer that cost rename_lock's readers most (${who:-none})" \
	test "$who" = d_move
who=$(costliest dentry.d_seq "$tmp/storm.c")
check "rename storm: -c names __d_move or d_move as the writer that cost d_seq's readers most (${who:-none})" \
	sh -c "test '$who' = __d_move -o '$who' = d_move"

# The join against a writer whose site and hold time are known: the
# benchmark module's hard-irq writer holds bench_sc (a seqcount) HOLD us
# longer than its copy, every 4 ms, against a reader on the other CPU.
# Every wait ends with the write it waited for, so no wait is longer than
# its write's hold and the sum of waits is at most the sum of holds; each
# is joined to the module's writer site; each retry's bound (the
# colliding write's begin to the retry) lies within the reader's loss, so
# waits and bounds add up to no more than what the module's readers
# measured they lost (their read's start to its last pass; under TCG a
# reader whose vCPU stalls loses more than the hold, and says so).
HOLD=200
"$F" -j -c -k seqcount 60 >"$tmp/join" 2>"$tmp/join.err" &
stat=$!
wait_attached $stat "$tmp/join.err" '^Tracing' 600
modprobe frlock_bench test=window hold_us=$HOLD period_us=4000 readers=1 clock=cycles \
	duration_ms=2000 rounds=1 2>"$tmp/join.modprobe"
bench_rc=$?
kill -INT $stat
wait_sigint $stat
dmesg | grep 'frlock_bench: window lock=seqcount' | sed 's/^/  /'
# The module's functions, before it goes.
grep '\[frlock_bench\]' /proc/kallsyms | awk '{ print $3 }' | sort -u >"$tmp/join.syms"
rmmod frlock_bench 2>/dev/null
grep '^{"type":"frlockstat",' "$tmp/join" | grep '"lock":"bench_sc' | tail -1 >"$tmp/join.sc"
head -c 700 "$tmp/join.sc" | sed 's/^/  /'
echo
check "join: the benchmark module ran its writer (exit $bench_rc)" test $bench_rc -eq 0
check "join: bench_sc is a row named by the module's symbol" \
	grep -q '"lock":"bench_sc+0x[0-9a-f]*","kind":"seqcount","naming":"symbol"' "$tmp/join.sc"
joined() {
	# writes hold_sum waits waits_joined wait_sum retries retries_joined lb_sum
	set -- $(for k in writes hold_ns_sum waits waits_joined wait_ns_sum retries retries_joined \
		retry_lost_lb_ns; do field $k "$tmp/join.sc"; done)
	# What the module's readers measured they lost with the writer on.
	mod=$(dmesg | grep 'frlock_bench: window lock=seqcount.* writer=on ' | tail -1 |
		sed -n 's/.* lost_ns=\([0-9]*\) .*/\1/p')
	echo "  writes $1 (hold sum $2 ns), waits $3 ($4 timed, sum $5 ns), retries $6 ($7 joined, bound sum $8 ns); the readers' own measure of their loss: ${mod:-?} ns"
	# udelay() under TCG: at least half what was asked, the check allows.
	[ "$1" -ge 200 ] && [ "$2" -ge $(( $1 * HOLD * 500 )) ] || { echo "  writes or holds too few"; return 1; }
	[ "$3" -gt 0 ] && [ "$4" -eq "$3" ] || { echo "  not every wait timed"; return 1; }
	[ "$5" -le "$2" ] || { echo "  waits longer than the holds"; return 1; }
	[ "$6" -gt 0 ] && [ "$7" -eq "$6" ] || { echo "  not every retry joined"; return 1; }
	[ -n "$mod" ] && [ $(( $5 + $8 )) -le "$mod" ] ||
		{ echo "  the lower bound is above what the readers measured"; return 1; }
	wmax=$(sed -n 's/.*"wait_ns_pct":{[^}]*"max":\([0-9]*\)}.*/\1/p' "$tmp/join.sc")
	hmax=$(sed -n 's/.*"hold_ns_pct":{[^}]*"max":\([0-9]*\)}.*/\1/p' "$tmp/join.sc")
	echo "  longest wait below $wmax ns, longest hold below $hmax ns"
	[ -n "$wmax" ] && [ "$wmax" -le "$hmax" ]
}
check "join: every wait timed to its write's end, none longer than the holds (${HOLD} us injected); every retry joined; waits and retry bounds below what the readers measured they lost" \
	joined
# modsites: the functions of the writer sites bench_sc's waits and
# retries were joined to, each checked against the module's symbols.
modsites() {
	grep '"type":"frlockstat_caller"' "$tmp/join" | grep '"lock":"bench_sc' |
		grep '"kind":"caused\(wait\)*"' | sed 's/.*"caller":"\([^"+]*\).*/\1/' | sort -u >"$tmp/join.sites"
	echo "  joined to: $(tr '\n' ' ' <"$tmp/join.sites")"
	[ -s "$tmp/join.sites" ] && [ -z "$(comm -23 "$tmp/join.sites" "$tmp/join.syms")" ]
}
check "join: every wait and retry is joined to a writer site in the benchmark module" modsites

check "frlockstat -h shows examples" sh -c "'$F' -h 2>&1 | grep -q EXAMPLES"
rm -rf "$tmp"
