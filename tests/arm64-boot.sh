# make test-long: boot the arm64 kernel (kernel/build --arch arm64) in
# qemu-system-aarch64 (TCG, 2 vCPUs) and run the frlock KUnit suite,
# built in, on a weakly ordered CPU. Sourced by tests/run with --long.

arm64_boot() {
	local k=$1 con=$logs/arm64-console.log
	command -v qemu-system-aarch64 >/dev/null ||
		{ echo "qemu-system-aarch64 is missing: run 'make deps'"; return 1; }
	# No init: after the built-in KUnit suites the kernel panics, and
	# panic=-1 with -no-reboot ends QEMU.
	timeout 900 qemu-system-aarch64 -M virt -cpu cortex-a57 -smp 2 -m 512 \
		-accel tcg,thread=multi -nographic -no-reboot \
		-kernel "$k/Image" -append "console=ttyAMA0 panic=-1" >"$con" 2>&1
	echo "qemu exited $?"
	tr -d '\r' <"$con" | grep -E 'frlock|# Totals|^\[.*\] *(not )?ok ' | tail -20
	tr -d '\r' <"$con" | grep -qE '(^|\] )    ok [0-9]+ frlock_test_stress' ||
		tr -d '\r' <"$con" | grep -qE 'ok [0-9]+ frlock_test_stress' ||
		{ echo "no result for the stress case"; return 1; }
	! tr -d '\r' <"$con" | grep -qE 'not ok [0-9]+ frlock' &&
		tr -d '\r' <"$con" | grep -qE '(^|\] )ok [0-9]+ frlock$'
}

if arm64=$("$top/kernel/build" --arch arm64 --cached-only --quiet 2>/dev/null) ||
	arm64=$("$top/kernel/build" --arch arm64 --quiet); then
	check "arm64: the frlock KUnit suite passes in qemu-system-aarch64" arm64_boot "$arm64"
else
	not_ok "arm64: kernel/build --arch arm64 built no kernel"
fi
