#!/bin/sh
# Runs inside the guest on the frlock kernel: frlockstat under a
# gettimeofday syscall load with adjtimex writers. One ok/not ok line each.
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
	grep '"lock":"tk_core.lock"' "$tmp/$mode.json" | grep '"type":"frlockstat"' >"$tmp/$mode.tk"
	head -c 600 "$tmp/$mode.tk" | sed "s/^/  $mode: /"
	echo
	check "frlockstat ($mode) ran" test $rc -eq 0
	writes=$(field writes "$tmp/$mode.tk")
	retried=$(field retried_reads "$tmp/$mode.tk")
	check "frlockstat ($mode) saw ${writes:-no} tk_core.lock writes, with hold times" \
		grep -q '"writes":[1-9][0-9]*,.*"hold_ns":\[{' "$tmp/$mode.tk"
	check "frlockstat ($mode) saw ${retried:-no} tk_core.lock reads retry" \
		grep -q '"retried_reads":[1-9][0-9]*,.*"retries_per_read":\[{"min":1' "$tmp/$mode.tk"
	check "frlockstat ($mode) names writer and reader call sites" \
		sh -c "grep -q '\"kind\":\"write\",\"caller\":\"timekeeping_advance+' $tmp/$mode.json &&
		       grep -q '\"kind\":\"retry\",\"caller\":\"ktime_get_real_ts64+' $tmp/$mode.json &&
		       grep -q '\"kind\":\"read\",\"caller\":\"ktime_get_real_ts64+' $tmp/$mode.json"
	grep '"type":"frlockstat".*"lock":"jiffies_seq"' "$tmp/$mode.json" >"$tmp/$mode.jq"
	# 1000 adjtimex writes a second against the tick's 250: do_adjtimex.
	check "frlockstat ($mode) -j: tk_core.lock is kind frlock, top writer do_adjtimex; the tick's jiffies_seq a static seqcount, top writer tick_do_update_jiffies64" \
		sh -c "grep -q '\"kind\":\"frlock\",.*\"top_writer\":\"do_adjtimex\",\"top_reader\":\"ktime_get_real_ts64\"' '$tmp/$mode.tk' &&
		       grep -q '\"kind\":\"seqcount\",\"name\":\"jiffies_seq\",\"class\":false,.*\"top_writer\":\"tick_do_update_jiffies64\"' '$tmp/$mode.jq'"
	check "frlockstat ($mode) -j -c: site records carry their lock's kind" \
		sh -c "grep -q '\"type\":\"frlockstat_caller\",\"lock\":\"jiffies_seq\",\"lock_kind\":\"seqcount\",\"kind\":\"write\",\"caller\":\"tick_do_update_jiffies64+' '$tmp/$mode.json'"
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
grep '"type":"frlockstat".*"lock":"tk_core.lock"' "$tmp/iv.json" >"$tmp/iv.tk"
sums=$(awk '{
	match($0, /"writes":[0-9]+/); w += substr($0, RSTART + 9, RLENGTH - 9)
	match($0, /"retried_reads":[0-9]+/); r += substr($0, RSTART + 16, RLENGTH - 16)
	match($0, /"total":\{"writes":[0-9]+,"retried_reads":[0-9]+/); t = substr($0, RSTART, RLENGTH)
	n++ } END { gsub(/[^0-9,]/, "", t); print n, w, r, t }' "$tmp/iv.tk")
set -- $sums
echo "  $1 intervals: writes $2, retried reads $3; running totals (writes,retried) $4"
check "frlockstat -j 1: $1 intervals whose writes and retried reads add up to the running totals ($2,$3 == $4)" \
	test "$1" -ge 3 -a "$2,$3" = "$4"

# -L with a name no lock has: empty intervals, one line naming what there
# is (tk_core.lock writes at every tick), and exit status 1 at the end.
"$F" -L no_such_lock 2 1 >"$tmp/filter" 2>&1
filter_rc=$?
sed 's/^/  /' "$tmp/filter"
check "frlockstat -L with a name no lock has exits 1 (exit $filter_rc)" test $filter_rc -eq 1
check "frlockstat -L filters out other locks" grep -qx '(no lock activity on no_such_lock)' "$tmp/filter"
check "frlockstat -L with a name no lock has says so once, listing the locks seen (tk_core.lock among them)" \
	sh -c "test \$(grep -c '^frlockstat: no lock matches -L no_such_lock; seen so far: .*tk_core.lock (frlock)' '$tmp/filter') -eq 1"

# Kinds: the table lists frlock and seqcount rows, and -k keeps one kind.
"$F" 2 1 >"$tmp/all" 2>&1
"$F" -k seqcount 2 1 >"$tmp/seqcount" 2>&1
"$F" -k frlock 2 1 >"$tmp/frlock" 2>&1
sed 's/^/  /' "$tmp/all"
check "frlockstat's table has a tk_core.lock frlock row and the tick's jiffies_seq seqcount row" \
	sh -c "grep -q '^tk_core.lock  *frlock ' '$tmp/all' && grep -q '^jiffies_seq  *seqcount ' '$tmp/all'"
# The WRITER column: the busiest writer site's function, without -c.
check "frlockstat's table names the busiest writers: timekeeping_advance for tk_core.lock, tick_do_update_jiffies64 for jiffies_seq" \
	sh -c "grep -q '^tk_core.lock  *frlock .* timekeeping_advance ' '$tmp/all' &&
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
	sh -c "grep -q '^tk_core.lock  *frlock ' '$tmp/frlock' && ! grep -q ' seqcount ' '$tmp/frlock'"
# A static seqcount by its symbol: the tick's writer is the one site.
"$F" -L jiffies_seq -c 2 1 >"$tmp/jiffies" 2>&1
sed 's/^/  /' "$tmp/jiffies"
check "frlockstat -L jiffies_seq -c: one row, written by tick_do_update_jiffies64" \
	sh -c "test \$(grep -c '^[a-z_.]*  *seqcount ' '$tmp/jiffies') -eq 1 && grep -q '^jiffies_seq  *seqcount ' '$tmp/jiffies' &&
		grep -q '^  write  *tick_do_update_jiffies64+' '$tmp/jiffies'"

# -L 0xADDR: one address, the static jiffies_seq's, labelled by its symbol.
addr=$(awk '$3 == "jiffies_seq" { print "0x" $1; exit }' /proc/kallsyms)
"$F" -L "$addr" 2 1 >"$tmp/byaddr" 2>&1
sed 's/^/  /' "$tmp/byaddr"
check "frlockstat -L $addr (jiffies_seq's address): that one row, labelled jiffies_seq" \
	sh -c "test $(nrows "$tmp/byaddr") -eq 1 && grep -q '^jiffies_seq  *seqcount ' '$tmp/byaddr'"
# -L d_seq: every dentry's counter is one row, a class; creating and
# removing files kills dentries, which writes their d_seq.
churn() {
	i=0
	while [ $i -lt 400 ]; do
		: >"$tmp/churn.$i" && rm -f "$tmp/churn.$i"
		i=$((i + 1))
	done
}
"$F" -j -L d_seq 4 1 >"$tmp/dseq" 2>"$tmp/dseq.err" &
stat=$!
wait_attached $stat "$tmp/dseq.err" '^Tracing' 600
churn
wait $stat
head -c 400 "$tmp/dseq" | sed 's/^/  /'
echo
check "frlockstat -j -L d_seq: one row for every dentry's d_seq, a class, written" \
	sh -c "test \$(grep -c '^{\"type\":\"frlockstat\",' '$tmp/dseq') -eq 1 &&
	       grep -q '\"lock\":\"d_seq\",\"kind\":\"seqcount\",\"name\":\"d_seq\",\"class\":true,.*\"writes\":[1-9]' '$tmp/dseq'"

# bad_arg EXPECTED_TEXT ARGS...: exit 2 with a message.
bad_arg() {
	want=$1
	shift
	"$F" "$@" >"$tmp/bad" 2>&1
	rc=$?
	if [ $rc -eq 2 ] && grep -qF "$want" "$tmp/bad"; then
		ok "frlockstat $* is refused (exit 2)"
	else
		not_ok "frlockstat $* is refused (exit $rc, wanted 2 and '$want')"
		sed 's/^/  /' "$tmp/bad"
	fi
}
bad_arg "unknown option '--bogus'" --bogus
bad_arg "invalid interval '0'" 0
bad_arg "invalid count 'x'" 1 x
bad_arg "unexpected argument" 1 1 1
bad_arg "invalid lock name" -L ''
bad_arg "unknown kind 'spin' (want frlock or seqcount)" -k spin
bad_arg "invalid row count '0'" -n 0
"$F" -h >"$tmp/help" 2>&1
check "frlockstat -h shows examples" grep -q 'EXAMPLES' "$tmp/help"
rm -rf "$tmp"
