#!/bin/sh
# A BPF reader nested in tk_core.lock's write section on the writer's CPU
# would spin there forever with interrupts off. The only BPF time helper
# that reads tk_core through its read loop is bpf_ktime_get_coarse_ns();
# the kernel refuses it to tracing programs. tests/bpf/nested_reader.bpf.c
# calls it from a kprobe on update_vsyscall(), inside the section: it must
# be refused, with the verifier's reason. (The KUnit case
# frlock_test_read_nested_in_write covers readers that are not BPF: they
# give up with a one-time warning instead of spinning.)
#
# usage: nested-reader.sh
. "$(dirname "$0")/lib.sh"
prog=/opt/frlock/bpf/.output/nested_reader

"$prog" 5 >"$tmp/nr.out" 2>&1
rc=$?
sed 's/^/  nested_reader: /' "$tmp/nr.out" | grep -v '^  nested_reader: *$' | tail -4
[ $rc -eq 1 ] && ! grep -q '^attached' "$tmp/nr.out" &&
	ok "nested reader: a kprobe inside tk_core.lock's write section calling bpf_ktime_get_coarse_ns() is refused" ||
	not_ok "nested reader: the program is refused (exit $rc)"
grep -q 'unknown func bpf_ktime_get_coarse_ns' "$tmp/nr.out" &&
	ok "nested reader: the verifier names the helper it refuses" ||
	not_ok "nested reader: the verifier names the helper it refuses"
