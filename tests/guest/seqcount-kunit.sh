#!/bin/sh
# The seqcount events' own KUnit suite, seqcount_trace (patches/seqcount/,
# patch 2, built as the module seqcount_kunit): the joins on (lock, seq),
# raw_write_seqcount_barrier() and write_seqcount_invalidate() as empty
# sections, seqlock_t, and a write_begin probe that reads its own seqcount
# (the review's D8: no lockdep report on a lockdep kernel). Relays each
# case as a check, then the suite's verdict. On the seqcount series alone
# and on the frlock kernel.
#
# usage: seqcount-kunit.sh
. "$(dirname "$0")/lib.sh"
results=/sys/kernel/debug/kunit/seqcount_trace/results
modprobe seqcount_kunit 2>"$tmp/modprobe.err"
if [ ! -r "$results" ]; then
	not_ok "KUnit seqcount_trace suite ran (no $results: $(cat "$tmp/modprobe.err"))"
	exit 0
fi
cat "$results" >"$tmp/sckunit"
sed 's/^/  kunit: /' "$tmp/sckunit"
sed -n 's/^ *\(not ok\|ok\) [0-9]* \(seqcount_test_[a-z_]*\)\(.*\)$/\1 - kunit \2\3/p' "$tmp/sckunit" |
	sed 's/^ok - \(.*\) # SKIP\(.*\)$/skip - \1 (skipped by KUnit:\2)/'
grep -q '^ *ok [0-9]* seqcount_trace$' "$tmp/sckunit" && ok "kunit suite seqcount_trace" ||
	not_ok "kunit suite seqcount_trace"
rmmod seqcount_kunit 2>/dev/null
rm -rf "$tmp"
