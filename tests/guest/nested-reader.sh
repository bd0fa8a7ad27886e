#!/bin/sh
# BPF programs that use bpf_timer where bpf_timer_start() would wait
# forever. In 6.1 and 6.12 an fentry program on update_vsyscall(), which
# runs inside tk_core's write section, may call bpf_timer_start(), and
# hrtimer_start() reads the time there: the CPU waits for its own section
# forever. The seqcount series' last patch refuses such a program at load
# time, with a message that says why, and refuses bpf_timer to tp_btf
# programs on the seqcount writer events too, which fire with an hrtimer
# base's lock held (__run_hrtimer() writes base->seq under it).
# tests/bpf/nested_reader loads each on its own:
#
#  - fentry/update_vsyscall: the load fails, the verifier's log (which
#    libbpf prints) holds the refusal's message, and the guest goes on;
#  - tp_btf/seqcount_write_begin: the same, with its own message;
#  - the same program on fentry/bpf_fentry_test1, outside any section:
#    it loads (and attaches), so the refusal is the attach point's.
#
# Then no clock went backwards and the tick still writes: timecheck
# monotonic with adjtimex writers. (The KUnit case
# frlock_test_read_nested_in_write covers readers that are not BPF; the
# fallback test, nested-fallback.sh, timekeeping's own readers.)
#
# usage: nested-reader.sh
. "$(dirname "$0")/lib.sh"
prog=/opt/frlock/bpf/.output/nested_reader
if [ ! -x "$prog" ]; then
	not_ok "nested reader: tests/bpf/nested_reader is built (no $prog: make -C bpf)"
	exit 0
fi
tk_why="it runs inside timekeeping's write section, where bpf_timer_start() would wait for the time forever"
hrtimer_why="it can run with an hrtimer base's lock held, where bpf_timer_start() would wait for that lock forever"

# refused NAME WHERE WHY: the program NAME, attached to WHERE, is refused at
# load, and the verifier's log says WHY.
refused() {
	"$prog" "$1" >"$tmp/$1.out" 2>"$tmp/$1.err"
	rc=$?
	sed 's/^/  nested_reader: /' "$tmp/$1.out"
	grep -E "progs attached to|BPF program load failed|BEGIN PROG LOAD LOG" "$tmp/$1.err" |
		sed 's/^/  nested_reader: /' | head -4
	check "nested reader: an fentry/tp_btf program on $2 using bpf_timer is refused at load time (exit $rc: $(head -1 "$tmp/$1.out"))" \
		test $rc -eq 1 -a "$(head -1 "$tmp/$1.out" | cut -c1-8)" = "refused:"
	check "nested reader: the verifier's log says why: 'progs attached to $2 cannot use bpf_timer: $3'" \
		grep -qF "progs attached to $2 cannot use bpf_timer: $3" "$tmp/$1.err"
}
refused update_vsyscall update_vsyscall "$tk_why"
refused seqcount_write seqcount_write_begin "$hrtimer_why"

"$prog" elsewhere >"$tmp/else.out" 2>"$tmp/else.err"
rc=$?
sed 's/^/  nested_reader: /' "$tmp/else.out"
check "nested reader: the same program on fentry/bpf_fentry_test1, outside any section, loads and attaches (exit $rc)" \
	sh -c "test $rc -eq 0 && grep -qx loaded '$tmp/else.out' && grep -qx 'attached: yes' '$tmp/else.out'"
if [ $rc -ne 0 ]; then tail -5 "$tmp/else.err" | sed 's/^/  /'; fi

# The guest goes on: the clocks advance and never go backwards, with the
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
