#!/usr/bin/env bash
# Host checks of `make run`'s knobs: each bad value must be refused with a
# one-line error naming the knob and exit status 2, before anything is
# installed, built or booted. Prints one "ok - ..." or "not ok - ..." line
# per check; exits 1 if any failed.
#
# usage: tests/run-knobs.sh
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
ok() { echo "ok - $*"; }
not_ok() { failed=1; echo "not ok - $*"; }

# refused KNOB=VALUE TEXT: make run KNOB=VALUE exits 2 at once, its first
# line on stderr is "make run: ..." and holds TEXT, and nothing booted.
refused() {
	local assign=$1 text=$2 rc start
	start=$SECONDS
	make -C "$top" --no-print-directory run "$assign" >"$tmp/out" 2>"$tmp/err" </dev/null
	rc=$?
	local first
	first=$(head -1 "$tmp/err")
	if [ "$rc" -eq 2 ] && [[ $first == "make run: "*"$text"* ]] &&
		! grep -q 'booting\|run-guest' "$tmp/out" "$tmp/err" && [ $((SECONDS - start)) -lt 30 ]; then
		ok "make run $assign is refused: $first"
	else
		not_ok "make run $assign is refused with '$text' and exit 2 (got exit $rc: $first)"
		sed 's/^/#   /' "$tmp/out" "$tmp/err" | tail -5
	fi
}

refused DURATION=abc "DURATION must be"
refused DURATION=0 "DURATION must be"
refused DURATION=90000 "DURATION must be"
refused DURATION=1.5 "DURATION must be"
refused "DURATION=1; echo injected" "DURATION must be"
refused THREADS=0 "THREADS must be"
refused THREADS=2000 "THREADS must be"
refused VIA=libc "VIA must be syscall or vdso"
refused WRITERS=-1 "WRITERS must be"
refused WRITERS=lots "WRITERS must be"
refused INTERVAL=0 "INTERVAL must be"
refused INTERVAL=30 "INTERVAL (30 s) must not be longer than DURATION (20 s)"
refused TOOL=hold "TOOL is gone: make run attaches frlockstat alone"
refused SMP=two "SMP must be"
refused MEM=100 "MEM must be"
refused ACCEL=xen "ACCEL must be auto, kvm or tcg"

if "$top/bpf/frlock-run" --check >"$tmp/out" 2>&1; then
	ok "bpf/frlock-run --check accepts the defaults"
else
	not_ok "bpf/frlock-run --check accepts the defaults"
	sed 's/^/#   /' "$tmp/out"
fi
if "$top/bpf/frlock-run" --check --duration 5 --threads 1 --via vdso --writers 0 \
	--interval 5 >"$tmp/out" 2>&1; then
	ok "bpf/frlock-run --check accepts good values of every knob"
else
	not_ok "bpf/frlock-run --check accepts good values of every knob"
	sed 's/^/#   /' "$tmp/out"
fi
"$top/bpf/frlock-run" --bogus x >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/out"; then
	ok "bpf/frlock-run: an unknown option is refused (exit 2)"
else
	not_ok "bpf/frlock-run: an unknown option is refused (exit $rc)"
fi
exit $failed
