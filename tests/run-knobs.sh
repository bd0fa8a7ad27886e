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
# shellcheck source=tests/lib.sh
. "$top/tests/lib.sh"

# make_run_refuses KNOB=VALUE TEXT: make run KNOB=VALUE exits 2 at once, its first
# line on stderr is "make run: ..." and holds TEXT, and nothing booted.
make_run_refuses() {
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

make_run_refuses DURATION=abc "DURATION wants"
make_run_refuses DURATION=0 "DURATION wants"
make_run_refuses DURATION=90000 "DURATION wants"
make_run_refuses DURATION=1.5 "DURATION wants"
make_run_refuses "DURATION=1; echo injected" "DURATION wants"
make_run_refuses THREADS=0 "THREADS wants"
make_run_refuses THREADS=2000 "THREADS wants"
make_run_refuses VIA=libc "VIA wants syscall or vdso"
make_run_refuses WRITERS=-1 "WRITERS wants"
make_run_refuses WRITERS=lots "WRITERS wants"
make_run_refuses INTERVAL=0 "INTERVAL wants"
make_run_refuses INTERVAL=30 "INTERVAL wants whole seconds from 1 to 20, not '30' (at most DURATION)"
make_run_refuses SMP=two "SMP wants"
make_run_refuses SMP=256 "SMP wants a number of guest vCPUs from 1 to 255"
make_run_refuses MEM=100 "MEM wants"
make_run_refuses ACCEL=xen "ACCEL wants auto, kvm or tcg"
make_run_refuses PROMETHEUS=yes "PROMETHEUS wants 0 or 1"

if "$top/host/frlock-run" --check >"$tmp/out" 2>&1; then
	ok "host/frlock-run --check accepts the defaults"
else
	not_ok "host/frlock-run --check accepts the defaults"
	sed 's/^/#   /' "$tmp/out"
fi
if "$top/host/frlock-run" --check --duration 5 --threads 1 --via vdso --writers 0 \
	--interval 5 --prometheus 1 >"$tmp/out" 2>&1; then
	ok "host/frlock-run --check accepts good values of every knob"
else
	not_ok "host/frlock-run --check accepts good values of every knob"
	sed 's/^/#   /' "$tmp/out"
fi
"$top/host/frlock-run" --bogus x >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -eq 2 ] && grep -q "unknown option '--bogus'" "$tmp/out"; then
	ok "host/frlock-run: an unknown option is refused (exit 2)"
else
	not_ok "host/frlock-run: an unknown option is refused (exit $rc)"
fi
[ "$failed" -eq 0 ]
