# Helpers for the guest test scripts (busybox sh): one "ok - ...",
# "not ok - ..." or "skip - ..." line per check, which tests/run relays.
# Sourcing it sets $tmp, a scratch directory.
tmp=$(mktemp -d)

ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; }
skip() { echo "skip - $*"; }
# check DESC CMD...: run CMD quietly, print its output only on failure.
check() {
	desc=$1
	shift
	if "$@" >"$tmp/out" 2>&1; then
		ok "$desc"
	else
		not_ok "$desc"
		sed 's/^/  /' "$tmp/out" | tail -20
	fi
}
