#!/bin/sh
# Tracing programs that use bpf_timer where bpf_timer_start() would wait
# forever. In 6.1 and 6.12 an fentry program on a function that runs
# inside tk_core's write section may call bpf_timer_start(), and
# hrtimer_start() reads the time there: the CPU waits for its own section
# forever. The seqcount series' verifier patch refuses such programs at
# load, by the attach point's name, with a message that says why.
#
#  1. The series' own selftest, tools/testing/selftests/bpf's
#     timer_tk_section (built by kernel/bpf-selftest, given to the guest
#     as /opt/add/test_progs): refused on update_vsyscall() and on the
#     seqcount_write_begin event, allowed (and its timer fires) on
#     bpf_fentry_test1().
#  2. The list against what the section really calls: the function
#     tracer, with tk_core's write events in the same buffer, records the
#     functions each CPU ran between write_begin and write_end while the
#     tick, settimeofday, adjtimex (ADJ_SETOFFSET among its modes) and a
#     clocksource change write tk_core; tests/bpf/nested_reader then loads
#     a bpf_timer program at each one. Every function must be refused with
#     the message, or be one no program can attach to (not in BTF, or no
#     address under its name); one that loads fails the check.
#  3. The guest goes on: no clock went backwards afterwards.
#
# On the frlock kernel a reader nested in tk_core's section falls back
# (frlock/0005) rather than wait, and the section calls frlock's own
# helpers: step 2 runs where tk_core.seq is a seqcount.
#
# usage: nested-reader.sh
. "$(dirname "$0")/lib.sh"
prog=/opt/frlock/bpf/.output/nested_reader
T=/sys/kernel/tracing
tk_why="it can run inside timekeeping's write section, where bpf_timer_start() would wait for the time forever"

# 1. The selftest: one line per subtest, as test_progs reports it.
if [ -x /opt/add/test_progs ]; then
	(cd /tmp && /opt/add/test_progs -v -t timer_tk_section) >"$tmp/selftest.out" 2>&1
	rc=$?
	grep -E '^#[0-9]+/[0-9]+ +timer_tk_section/' "$tmp/selftest.out" | while read -r n name verdict; do
		echo "  test_progs: $n $name $verdict"
	done
	# patch 5's subtests: 6.12's also refuse bpf_wq.
	subs="update_vsyscall inner_map seqcount_write_begin seqcount_read_retry freplace elsewhere"
	case $(uname -r) in 6.12.*) subs="$subs wq_update_vsyscall" ;; esac
	nsubs=$(echo $subs | wc -w)
	for sub in $subs; do
		if grep -qE "^#[0-9]+/[0-9]+ +timer_tk_section/$sub:OK" "$tmp/selftest.out"; then
			ok "nested reader: selftests/bpf timer_tk_section/$sub passed"
		else
			not_ok "nested reader: selftests/bpf timer_tk_section/$sub passed (test_progs exit $rc)"
			grep -E "FAIL|fail|error|$sub" "$tmp/selftest.out" | grep -v '^libbpf: *[0-9]*:' | head -12 | sed 's/^/  /'
		fi
	done
	check "nested reader: test_progs -t timer_tk_section exited 0 and ran $nsubs subtests, none failed or skipped" \
		grep -qE "^Summary: 1/$nsubs PASSED, 0 SKIPPED, 0 FAILED" "$tmp/selftest.out"
else
	not_ok "nested reader: the series' selftest is given to the guest (no /opt/add/test_progs: kernel/bpf-selftest)"
fi

# 2. The list against the section's callees.
if [ ! -x "$prog" ]; then
	not_ok "nested reader: tests/bpf/nested_reader is built (no $prog: make -C bpf)"
elif [ -d $T/events/frlock ]; then
	skip "nested reader: the deny list against tk_core's callees (the frlock kernel: a nested reader falls back, nothing waits)"
else
	tk=$(awk '$3 == "tk_core" { print $1 }' /proc/kallsyms)
	cs=/sys/devices/system/clocksource/clocksource0
	was=$(cat $cs/current_clocksource)
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 16384 >$T/buffer_size_kb
	for e in seqcount_write_begin seqcount_write_end; do
		echo "lock == 0x$tk" >$T/events/seqcount/$e/filter
		echo 1 >$T/events/seqcount/$e/enable
	done
	echo function >$T/current_tracer
	echo 1 >$T/tracing_on
	sleep 0.2
	timecheck settime >"$tmp/settime.out" 2>&1
	timecheck adjtimex >"$tmp/adjtimex.out" 2>&1
	for c in $(cat $cs/available_clocksource) "$was"; do
		echo "$c" >$cs/current_clocksource
		sleep 0.1
	done
	echo 0 >$T/tracing_on
	lost=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' $T/per_cpu/cpu*/stats)
	cp $T/trace "$tmp/trace"
	# (A change of tracer empties the buffer: read it first.)
	echo nop >$T/current_tracer
	for e in seqcount_write_begin seqcount_write_end; do
		echo 0 >$T/events/seqcount/$e/enable
		echo 0 >$T/events/seqcount/$e/filter
	done
	# One line per record inside a section: the function's name, or
	# "opened-by CALLER" at a write_begin.
	awk '
		/^#/ { next }
		{
			for (i = 1; i <= NF && $i !~ /^\[[0-9]+\]$/; i++);
			for (j = i + 1; j <= NF && $j !~ /^[0-9]+\.[0-9]+:$/; j++);
			if (j >= NF) next
			cpu = $i; what = $(j + 1)
			if (what == "seqcount_write_begin:") {
				inside[cpu] = 1
				for (k = j + 2; k <= NF; k++)
					if ($k ~ /^caller=/) { c = substr($k, 8); sub(/\+.*/, "", c); print "opened-by " c }
			} else if (what == "seqcount_write_end:") {
				inside[cpu] = 0
			} else if (inside[cpu]) {
				print what
			}
		}' "$tmp/trace" >"$tmp/inside"
	rm -f "$tmp/trace"
	sed -n 's/^opened-by //p' "$tmp/inside" | sort | uniq -c | sed 's/^/  opened by: /'
	grep -v '^opened-by ' "$tmp/inside" | sed 's/\.\(constprop\|isra\|part\|cold\)\.[0-9]*$//' |
		sort -u >"$tmp/callees"
	check "nested reader: the function tracer saw tk_core's section opened by the tick, settimeofday, adjtimex, ADJ_SETOFFSET and a clocksource change, nothing lost (overruns: $lost)" \
		sh -c "test '$lost' -eq 0 && for f in timekeeping_advance do_settimeofday64 do_adjtimex timekeeping_inject_offset change_clocksource; do grep -qx \"opened-by \$f\" '$tmp/inside' || { echo \"no section opened by \$f\"; exit 1; }; done"
	n=0 listed=0 none=0 bad=
	for f in $(cat "$tmp/callees"); do
		n=$((n + 1))
		"$prog" "$f" >"$tmp/f.out" 2>"$tmp/f.err"
		rc=$?
		if [ $rc -eq 1 ] && grep -qF "progs attached to $f cannot use bpf_timer: $tk_why" "$tmp/f.err"; then
			listed=$((listed + 1))
			echo "  $f: refused (listed)"
		elif [ $rc -eq 1 ]; then
			none=$((none + 1))
			# -ESRCH: libbpf found no BTF for it (pahole leaves out
			# a function whose arguments the compiler changed).
			why=$(grep -m1 'address of function' "$tmp/f.err" | cut -c1-100)
			grep -q '(-3)$' "$tmp/f.out" && why="not in the kernel's BTF"
			echo "  $f: cannot be attached to (${why:-$(head -1 "$tmp/f.out")})"
		else
			bad="$bad $f"
			echo "  $f: LOADED (exit $rc): runs inside tk_core's section and accepts bpf_timer"
		fi
	done
	check "nested reader: every one of the $n functions tk_core's section called is refused bpf_timer ($listed, by name) or cannot be attached to ($none); loaded:${bad:- none}" \
		test -n "$n" -a "$n" -gt 0 -a -z "$bad"
fi

# 3. The guest goes on: the clocks advance and never go backwards, with the
# tick and adjtimex writing tk_core.
timecheck monotonic -d 3 -w 200 >"$tmp/mono.out" 2>&1
mono=$?
if [ $mono -eq 0 ] && grep -q '^ok' "$tmp/mono.out" && ! grep -q '^not ok' "$tmp/mono.out"; then
	ok "nested reader: the guest went on, no clock went backwards afterwards ($(grep -c '^ok' "$tmp/mono.out") timecheck checks)"
else
	not_ok "nested reader: the guest went on, no clock went backwards afterwards (timecheck exit $mono)"
	tail -5 "$tmp/mono.out" | sed 's/^/  /'
fi
rm -rf "$tmp"
