#!/bin/sh
# Runs inside the guest: the kernel's time behaviour must be intact (the
# same checks pass on the stock kernel). Relays timecheck's TAP lines as
# "ok - ..." / "not ok - ..." / "skip - ...".
# usage: timekeeping.sh [SUBCOMMAND...]  (default: monotonic, settime,
# adjtimex; each argument is one timecheck command line). Run suspend from a
# copy outside /opt/frlock: the 9p share does not survive a suspend.
tap() {
	sed -n -e 's/^ok [0-9]* - \(.*\) # SKIP\(.*\)$/skip - timecheck \1:\2/p' \
	       -e 's/^ok [0-9]* - \(.*\)$/ok - timecheck \1/p' \
	       -e 's/^not ok [0-9]* - \(.*\)$/not ok - timecheck \1/p' \
	       -e 's/^#/  #/p'
}
[ $# -gt 0 ] || set -- "monotonic -d 5 -w 200" settime adjtimex
for sub in "$@"; do
	# shellcheck disable=SC2086
	timecheck $sub >/tmp/timecheck.out 2>&1
	rc=$?
	tap </tmp/timecheck.out
	# A crash or a bad exit with no "not ok" line must still fail.
	if [ $rc -ne 0 ] && ! grep -q '^not ok' /tmp/timecheck.out; then
		echo "not ok - timecheck $sub exited $rc"
		tail -5 /tmp/timecheck.out
	fi
done
