# Checks that boot the QEMU guest. Sourced by tests/run.

run_guest=$top/host/run-guest
[ -n "${kernel:-}" ] || kernel=$("$top/kernel/build" --variant frlock --quiet)

# The libbpf tools, against the frlock kernel's BTF; the guest sees them
# through the repository share.
check "libbpf tools build against the frlock kernel's BTF" \
	make -C "$top/bpf" KERNEL="$kernel"

# The frlock kernel: events, KUnit, timekeeping under load, hist recipes,
# frlockstat, and the kernel's time semantics.
# The guest collects, the host judges: agreement.sh leaves the tools' raw
# outputs in the results share, host/judge-agreement compares them.
guest_results=$logs/results-frlock-kernel
guest_job frlock-kernel "guest on the frlock kernel ran and exited cleanly" \
	--kernel "$kernel" --timeout 1200 --results "$guest_results" --exec \
	'cd /opt/frlock/tests/guest && ./frlock-kernel.sh; ./frlockstat.sh; ./badinput.sh; ./agreement.sh; ./bpf.sh; ./timekeeping.sh; ./seqcount.sh frlock 8'
relay < <("$top/host/judge-agreement" "$guest_results/agreement")
relay < <("$top/host/judge-events" "$guest_results/events" ftrace)
relay < <("$top/host/judge-frlockstat" "$guest_results/frlockstat")
relay < <("$top/host/judge-bpftrace" "$guest_results/bpftrace" tools renames watch)
relay < <("$top/host/judge-seqcount" "$guest_results/seqcount")

# The eight events as a kernel developer's own tools show them: both trace
# systems' format files, trace-cmd's text and Debian's perf (record,
# script, stat, trace, lock contention) on the frlock kernel. The guest
# records; the host reads the text and joins it.
tools_results=$logs/results-kernel-tools
guest_job kernel-tools "guest for the events' ABI, trace-cmd and perf ran and exited cleanly" \
	--kernel "$kernel" --timeout 900 --results "$tools_results" --exec \
	'cd /opt/frlock/tests/guest && ./abi.sh 3; ./perf.sh 3'
relay < <("$top/host/judge-events" "$tools_results/events" trace-cmd perf)

# 6.1's own timekeeping with every sequence lock traced: the seqcount series
# alone, without frlock. tk_core.seq is a seqcount there, and the tools show
# it under the same gettimeofday load; the series' own KUnit suite runs, and
# its verifier patch refuses bpf_timer inside timekeeping's write section.
if stock_tk=$("$top/kernel/build" --series seqcount 2>"$logs/build-stock-tk.err"); then
	guest_job stock-timekeeping "guest on stock timekeeping with seqcount events ran and exited cleanly" \
		--kernel "$stock_tk" --timeout 900 --results "$logs/results-stock-timekeeping" --exec \
		'cd /opt/frlock/tests/guest && ./seqcount-kunit.sh; ./seqcount.sh stock-timekeeping 8; ./nested-reader.sh'
	relay < <("$top/host/judge-seqcount" "$logs/results-stock-timekeeping/seqcount")
else
	not_ok "the seqcount series alone (stock timekeeping, seqcount events) builds (log: $logs/build-stock-tk.err)"
fi

# gettimeofday through the vDSO never reaches the kernel's frlock. Under
# TCG the vDSO needs tsc=reliable to read the clock itself.
guest_job vdso "guest for the vDSO checks exited cleanly" \
	--kernel "$kernel" --append tsc=reliable --results "$logs/results-vdso" \
	--exec '/opt/frlock/tests/guest/bpf.sh vdso'
relay < <("$top/host/judge-bpftrace" "$logs/results-vdso/bpftrace" vdso)

# Suspend and resume through pm_test, last and in a guest of its own: the
# 9p share (virtio-9p has no suspend support) is dead after the resume, so
# the script runs from a copy in /tmp and nothing touches the share again.
guest_job suspend "guest survived a pm_test suspend and powered off" \
	--kernel "$kernel" --timeout 180 --exec \
	'cp /opt/frlock/tests/guest/timekeeping.sh /tmp/ && sh /tmp/timekeeping.sh suspend' 

# frlockstat refuses a kernel without the frlock tracepoints. The stock
# kernel is not built by make test (make kernel-stock builds it).
if stock=$("$top/kernel/build" --variant stock --cached-only --quiet 2>/dev/null); then
	check "frlockstat on the stock kernel says so and exits 2" \
		bash -c "'$run_guest' --kernel '$stock' --exec '/opt/frlock/bpf/.output/frlockstat 1 1' 2>&1 |
			grep -q 'this kernel has no frlock tracepoints'; test \${PIPESTATUS[0]} -eq 2"
else
	skip "frlockstat on the stock kernel (not built; make kernel-stock builds it)"
fi

# The runner itself (its status, --add, --results, --port, a panic, a hang,
# no KVM) and Ctrl-C in make run: host/frlock/tests/guest_runner.py, run
# by tests/run after this; its livelock path, with a fake QEMU and monitor:
# host/frlock/tests/test_runner.py.
