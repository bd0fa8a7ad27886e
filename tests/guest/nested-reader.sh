#!/bin/sh
# A BPF program nested in tk_core.lock's write section on the writer's CPU.
# In 6.1 an fentry program on update_vsyscall(), which runs inside the
# section, may call bpf_timer_start(), and hrtimer_start() reads the time
# there; the verifier accepts it. tests/bpf/nested_reader.bpf.c does that
# for 8 s while timecheck's readers on every CPU and adjtimex writers check
# that no clock goes backwards. The series makes bpf_timer_start() return
# -EDEADLK inside the section: every call must be refused, the guest must
# not hang (the job's timeout) and time must stay monotonic. (The KUnit
# case frlock_test_read_nested_in_write covers readers that are not BPF.)
#
# usage: nested-reader.sh
. "$(dirname "$0")/lib.sh"
prog=/opt/frlock/bpf/.output/nested_reader

"$prog" 8 >"$tmp/nr.out" 2>&1 &
nr=$!
timecheck monotonic -d 6 -w 200 >"$tmp/mono.out" 2>&1
mono=$?
wait $nr
rc=$?
sed 's/^/  nested_reader: /' "$tmp/nr.out" | grep -v '^  nested_reader: *$' | tail -4
stats=$(grep '^calls=' "$tmp/nr.out")
val() { echo "$stats" | sed -n "s/.*$1=\([-0-9]*\).*/\1/p"; }
calls=$(val calls) refused=$(val refused) started=$(val started) failed=$(val failed)

[ $rc -eq 0 ] && grep -q '^attached' "$tmp/nr.out" &&
	ok "nested reader: the verifier accepts an fentry program on update_vsyscall() calling bpf_timer_start()" ||
	not_ok "nested reader: the fentry program loaded and attached (exit $rc)"
[ -n "$calls" ] && [ "$calls" -gt 0 ] &&
	ok "nested reader: the program ran inside the write section ($calls times)" ||
	not_ok "nested reader: the program ran inside the write section (calls=${calls:-none})"
[ -n "$refused" ] && [ "$refused" = "$calls" ] && [ "$started" = 0 ] && [ "$failed" = 0 ] &&
	ok "nested reader: bpf_timer_start() refused with -EDEADLK every time ($refused refusals)" ||
	not_ok "nested reader: bpf_timer_start() refused every time ($stats)"
if [ $mono -eq 0 ] && grep -q '^ok' "$tmp/mono.out" && ! grep -q '^not ok' "$tmp/mono.out"; then
	ok "nested reader: no clock went backwards meanwhile"
else
	not_ok "nested reader: no clock went backwards meanwhile (timecheck exit $mono)"
	tail -5 "$tmp/mono.out" | sed 's/^/  /'
fi
