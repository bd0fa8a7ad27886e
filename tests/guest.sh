# Checks that boot the QEMU guest. Sourced by tests/run.

run_guest=$top/host/run-guest
[ -n "${kernel:-}" ] || kernel=$("$top/kernel/build" --variant frlock --quiet)

# The libbpf tools, against the frlock kernel's BTF; the guest sees them
# through the repository share.
check "libbpf tools build against the frlock kernel's BTF" \
	make -C "$top/bpf" KERNEL="$kernel"

# The frlock kernel: events, KUnit, timekeeping under load, hist recipes,
# frlockstat, and the kernel's time semantics.
guest_job frlock-kernel "guest on the frlock kernel ran and exited cleanly" \
	--kernel "$kernel" --timeout 1200 --exec \
	'cd /opt/frlock/tests/guest && ./frlock-kernel.sh; ./frlockstat.sh; ./badinput.sh; ./agreement.sh; ./bpf.sh; ./timekeeping.sh; ./seqcount.sh frlock 8' 

# The eight events as a kernel developer's own tools show them: both trace
# systems' format files, trace-cmd's text and Debian's perf (record,
# script, stat, trace, lock contention) on the frlock kernel.
guest_job kernel-tools "guest for the events' ABI, trace-cmd and perf ran and exited cleanly" \
	--kernel "$kernel" --timeout 900 --exec \
	'cd /opt/frlock/tests/guest && ./abi.sh 3; ./perf.sh 3'

# 6.1's own timekeeping with every sequence lock traced: the seqcount series
# alone, without frlock. tk_core.seq is a seqcount there, and the tools show
# it under the same gettimeofday load; the series' own KUnit suite runs, and
# its verifier patch refuses bpf_timer inside timekeeping's write section.
if stock_tk=$("$top/kernel/build" --series seqcount 2>"$logs/build-stock-tk.err"); then
	guest_job stock-timekeeping "guest on stock timekeeping with seqcount events ran and exited cleanly" \
		--kernel "$stock_tk" --timeout 900 --exec \
		'cd /opt/frlock/tests/guest && ./seqcount-kunit.sh; ./seqcount.sh stock-timekeeping 8; ./nested-reader.sh'
else
	not_ok "the seqcount series alone (stock timekeeping, seqcount events) builds (log: $logs/build-stock-tk.err)"
fi

# gettimeofday through the vDSO never reaches the kernel's frlock. Under
# TCG the vDSO needs tsc=reliable to read the clock itself.
guest_job vdso "guest for the vDSO checks exited cleanly" \
	--kernel "$kernel" --append tsc=reliable --exec '/opt/frlock/tests/guest/bpf.sh vdso' 

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

# --- The runner itself ----------------------------------------------------

check "run-guest returns the job's exit status" \
	bash -c "'$run_guest' --kernel '$kernel' --exec 'exit 3'; test \$? -eq 3"

added() {
	local f=$logs/added.txt
	echo "frlock-added-$$" >"$f"
	"$run_guest" --kernel "$kernel" --add "$f" --exec 'cat /opt/add/added.txt' |
		grep -qx "frlock-added-$$"
}
check "run-guest --add puts a host file under /opt/add" added

results() {
	local d=$logs/results
	"$run_guest" --kernel "$kernel" --results "$d" --exec 'echo kept >/results/out.txt' &&
		grep -qx kept "$d/out.txt"
}
check "run-guest --results keeps guest files after power-off" results

port_feed() {
	local f=$logs/port.out
	"$run_guest" --kernel "$kernel" --port feed="$f" \
		--exec 'echo "{\"n\":1}" >/dev/virtio-ports/frlock.feed' &&
		grep -qx '{"n":1}' "$f"
}
check "run-guest --port streams a guest virtio-serial port into a host file" port_feed

check "run-guest: unknown option is a usage error" \
	expect_fail 2 "unknown option" "$run_guest" --bogus
check "run-guest: bad --smp is a usage error" \
	expect_fail 2 "smp" "$run_guest" --smp two
check "run-guest: bad --port is a usage error" \
	expect_fail 2 "port wants NAME=HOSTFILE" "$run_guest" --port Feed=x
check "run-guest: bad --hostfwd is a usage error" \
	expect_fail 2 "hostfwd wants HOSTPORT:GUESTPORT" "$run_guest" --hostfwd 0.0.0.0:9100:9100
# A real panic: init exits, and the kernel cannot go on without it.
panics() {
	one_line_fault 123 "guest kernel panicked (Kernel panic - not syncing: .*); console log: " \
		"$run_guest" --kernel "$kernel" --timeout 120 --append rdinit=/bin/false --exec true &&
		log_kept 'Kernel panic - not syncing'
}
check "run-guest: a guest kernel panic ends the run in one line (exit 123), log kept" panics
hangs() {
	local start=$SECONDS f
	one_line_fault 124 "guest timed out after 20 s; console log: " \
		"$run_guest" --kernel "$kernel" --timeout 20 --exec 'sleep 600' &&
		log_kept 'Linux version' && [ $((SECONDS - start)) -lt 60 ] || return 1
	f=$(grep -o 'console log: [^ ]*$' "$logs/expect.line" | cut -d' ' -f3)
	# Where each vCPU was, named from System.map (the idle loop, as the job
	# sleeps: amd_e400_idle under TCG's -cpu max).
	grep -E '^  CPU[01] RIP=[0-9a-f]+ [a-z_0-9.]+\+0x' "$f" | head -2
	[ "$(grep -c -E '^  CPU[01] RIP=[0-9a-f]+ [a-z_0-9.]+\+0x' "$f")" -ge 6 ] || return 1
	# The killed QEMU is gone: none writes that console log any more.
	! pgrep -f "qemu-system.*$f" >/dev/null
}
check "run-guest: a hung guest is killed after --timeout in one line (exit 124), log kept with its vCPUs' instruction pointers" hangs
# QEMU's TCG livelock cannot be summoned at will: host/vcpu-watch's verdict
# is checked against a fake monitor replaying the vCPU pointers seen in it.
for scenario in livelock idle legit transient; do
	check "host/vcpu-watch: $scenario vCPUs $([ $scenario = livelock ] && echo "are named a livelock (run-guest then stops the guest: exit 124)" || echo "are not called a livelock")" \
		/usr/bin/python3 "$top/tests/vcpu_watch.py" "$scenario"
done
