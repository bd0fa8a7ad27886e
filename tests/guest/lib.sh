# Sourced by the guest test scripts (busybox sh): the project's one test
# library (tests/lib.sh, through the repository share) and $tmp, a scratch
# directory.
tmp=$(mktemp -d)
# shellcheck source=tests/lib.sh
. /opt/frlock/tests/lib.sh

# traced_load SECONDS WRITES BPFTRACE_ARGS...: bpftrace BPFTRACE_ARGS in the
# background (its output in $tmp/bt.out), and once it has attached, gtod-load
# on 2 threads for SECONDS with WRITES adjtimex writes a second (its output
# in $tmp/load.out); then bpftrace is stopped. Sets load_rc and bt_rc. Needs
# guest-rootfs/lib.sh (wait_attached, wait_sigint).
traced_load() {
	_tl_secs=$1 _tl_writes=$2
	shift 2
	bpftrace "$@" >"$tmp/bt.out" 2>&1 &
	_tl_bt=$!
	wait_attached $_tl_bt "$tmp/bt.out" '^Attaching' 1200
	sleep 1
	gtod-load -t 2 -d "$_tl_secs" -w "$_tl_writes" -i 0 >"$tmp/load.out" 2>&1
	load_rc=$?
	kill -INT $_tl_bt 2>/dev/null
	wait_sigint $_tl_bt
	bt_rc=$?
}
