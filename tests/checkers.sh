# Torture, recursion safety and the checker kernels. Sourced by tests/run
# after tests/guest.sh, with $kernel set. $long is the torture length in
# seconds for make test-long, empty for make test.

# Torture and recursion safety on the frlock kernel: 10 s of stress in
# make test. The fallback test (frlock_bench test=nested) comes last: it
# makes the kernel warn, on purpose.
torture_s=${long:-10}
guest_job torture "guest for torture and recursion exited cleanly" \
	--kernel "$kernel" --timeout $((torture_s + 300)) --exec \
	"cd /opt/frlock/tests/guest && ./torture.sh $((torture_s * 1000)); ./recursion.sh 10; ./nested-reader.sh; ./nested-fallback.sh 3000"

# scan_console VARIANT LOG: the checker's reports, judged.
scan_console() {
	local variant=$1 log=$2 races
	case $variant in
	lockdep)
		grep -q 'Lock dependency validator' "$log" ||
			{ echo "lockdep did not start: not a lockdep kernel?"; return 1; }
		;;
	kcsan)
		grep -q 'kcsan: enabled' "$log" ||
			{ echo "KCSAN did not start: not a KCSAN kernel?"; return 1; }
		# A KCSAN report is a block from "BUG: KCSAN:" to a line of '='.
		# The serial console ends lines with CR LF.
		races=$(awk '{sub(/\r$/, "")}
			/BUG: KCSAN:/ {blk = $0; on = 1; next}
			on && /^\[[ 0-9.]*\] =+$/ {print blk; on = 0; next}
			on {blk = blk " | " $0}
			END {if (on) print blk}' "$log")
		echo "$races" | grep -v '^$' | sed 's/^/other race: /' |
			grep -v -E 'frlock|timekeep|tk_core|ktime_|timekeeper' | cut -c1-200
		if echo "$races" | grep -E 'frlock|timekeep|tk_core|ktime_|timekeeper'; then
			echo "KCSAN reported a race involving frlock or timekeeping"
			return 1
		fi
		;;
	esac
	# Any WARN, BUG or lockdep report, KCSAN's own reports aside.
	local pat='WARNING:|BUG:|INFO: |turning off the locking correctness validator|Call Trace:'
	if grep -E "$pat" "$log" | grep -v -q 'BUG: KCSAN:'; then
		grep -n -E -A12 "$pat" "$log" | grep -v 'BUG: KCSAN:' | head -40
		return 1
	fi
}

for variant in lockdep kcsan; do
	if [ -n "$long" ]; then
		ck=$("$top/kernel/build" --variant "$variant" 2>"$logs/build-$variant.err") ||
			{ not_ok "$variant kernel builds (log: $logs/build-$variant.err)"; continue; }
	elif ! ck=$("$top/kernel/build" --variant "$variant" --cached-only --quiet 2>/dev/null); then
		skip "$variant kernel checks (not built: make kernel-$variant, or make test-long)"
		continue
	fi
	TEST_PREFIX="$variant kernel: " guest_job "$variant" "guest exited cleanly" \
		-v --kernel "$ck" --timeout 1200 --exec 'cd /opt/frlock/tests/guest && ./checker-load.sh 10'
	rc=$?
	console=$(sed -n 's/.*console log: //p' "$logs/guest-$variant.err" | tail -1)
	if [ $rc -ne 0 ]; then
		echo "# $variant kernel: console log ${console:-not named}"
	elif [ -z "$console" ] || [ ! -r "$console" ]; then
		not_ok "$variant kernel: console log kept (see $logs/guest-$variant.err)"
	else
		cp "$console" "$logs/console-$variant.log"
		check "$variant kernel: console has no $variant report about frlock or timekeeping, no WARN or BUG" \
			scan_console "$variant" "$logs/console-$variant.log"
	fi
done
