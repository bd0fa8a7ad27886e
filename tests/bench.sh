# make bench at tiny sizes: it runs end to end and its report has every
# part. Figures at these sizes mean nothing; make bench measures. Sourced
# by tests/run.
#
# make test-long runs bench/run --smoke (about 2 min of guests once its
# five kernels are built; the stock one alone is a full build from cold).
# make test renders the raw lines of one such run, recorded in
# tests/fixtures/bench-smoke, and judges the report the same way.

if [ -n "${long:-}" ]; then
	bench_out=$logs/bench-smoke
	bench_args=(--smoke --out "$bench_out")
	if ! "$top/kernel/build" --variant stock --cached-only --quiet >/dev/null 2>&1; then
		bench_args+=(--no-stock)
		skip "bench smoke: gettimeofday frlock/stock (stock kernel not built: make kernel-stock)"
	fi
	check "bench smoke: bench/run --smoke completes" \
		"$top/bench/run" "${bench_args[@]}"
else
	bench_out=$logs/bench-fixture
	bench_args=()
	rm -rf "$bench_out" && cp -r "$top/tests/fixtures/bench-smoke" "$bench_out"
	check "bench smoke: bench/report renders a recorded bench/run --smoke (tests/fixtures/bench-smoke; make test-long runs one)" \
		sh -c "'$top/bench/report' --json '$bench_out/bench.json' '$bench_out/raw.txt' >'$bench_out/bench.txt'"
fi

bench_complete() {
	python3 - "$bench_out/bench.json" "${bench_args[*]}" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
want_stock = "--no-stock" not in sys.argv[2]
problems = []
locks = ("rwlock", "seqlock", "seqcount", "frlock")
for readers in ("1", "2"):
    v = r["read"].get(readers)
    if not v or not all(v["ns_per_read"].get(k, 0) > 0 for k in locks):
        problems.append(f"read cost for {readers} readers")
    v = r["refscale"].get(readers)
    if not v or not all(v["ns_per_read"].get(k, 0) > 0 for k in ("rwlock", "seqcount", "frlock")):
        problems.append(f"refscale for {readers} readers")
for lock in locks:
    got = sorted(r["lockout"].get(lock, {}))
    if got != ["0", "1", "2"]:
        problems.append(f"lockout {lock}: readers {got}")
for clock in ("cycles", "clocksource"):
    for hold in ("1", "10", "100"):
        got = sorted(r.get("window", {}).get(clock, {}).get(hold, {}))
        if got != ["frlock", "seqcount"]:
            problems.append(f"mid-write readers, {clock}, {hold} us: {got}")
for mode in ("ftrace", "frlockstat", "makerun", "stacks", "bpftrace"):
    if mode not in r["write"]:
        problems.append(f"tracepoint cost with {mode}")
# make run's frlockstat's records of each pair, kept for its events/s.
import os
tracing = os.path.join(os.path.dirname(sys.argv[1]), "tracing")
if not os.path.exists(os.path.join(tracing, "makerun-1.frlockstat.ndjson")) or \
        not os.path.exists(os.path.join(tracing, "makerun-1.load.ndjson")):
    problems.append("make run's frlockstat records and the load's, of pair 1")
if "makerun" not in r:
    problems.append("make run's cost as events/s x ns per event")
for tool in ("bpftrace/none", "frlockstat/none", "makerun/none"):
    if tool not in r["tracing"]:
        problems.append(f"gettimeofday with {tool}")
for kind in ("gtod", "paths"):
    t = r[kind] or {}
    if "events/before" not in t:
        problems.append(f"{kind}: events/before")
    if want_stock and "frlock/stock" not in t:
        problems.append(f"{kind}: frlock/stock")
if not r["text"] or not r["text"]["before"] > 0:
    problems.append("text size with and without the seqcount events")
if not r["layout"]:
    problems.append("tk_core layout, stock timekeeping and frlock")
if len(r["goals"]) < (20 if want_stock else 18):
    problems.append(f"only {len(r['goals'])} goals judged")
print("\n".join(problems) or "every part present")
sys.exit(1 if problems else 0)
PY
}
check "bench smoke: report has read cost (4 locks, frlock_bench and refscale), lockout, mid-write readers, tracepoint cost (make run's set too), tracer overhead and make run's events, disabled-event cost, tk_core layout and goals" \
	bench_complete
[ -z "${long:-}" ] || check "bench smoke: results folder complete, no .partial left" \
	bash -c "test -s '$bench_out/bench.txt' && test ! -e '$bench_out.partial'"

# Bad input: one line naming the problem, the usage, exit 2, no folder.
# (Its output goes to a file: `| head -1` could end the pipe before the
# usage line is written, and bench/run would die of SIGPIPE, not exit 2.)
runs_zero() {
	"$top/bench/run" --runs 0 --out "$logs/bench-bad" >"$logs/bench-bad.out" 2>&1
	local rc=$?
	cat "$logs/bench-bad.out"
	[ "$rc" -eq 2 ] && head -n 1 "$logs/bench-bad.out" | grep -q "^bench/run: --runs wants" &&
		[ ! -e "$logs/bench-bad" ] && [ ! -e "$logs/bench-bad.partial" ]
}
check "bench/run: --runs 0 is a usage error, nothing created" runs_zero
check "bench/run: an unknown option is a usage error" expect_fail 2 "unknown option '--fast'" \
	"$top/bench/run" --fast
check "bench/run: a hold not below the writer's period is a usage error" \
	expect_fail 2 "5000 us is not below the writer's 4000 us period" \
	"$top/bench/run" --holds 1,5000 --out "$logs/bench-bad"
check "bench/run: a hold given twice is a usage error" expect_fail 2 "lists 10 us twice" \
	"$top/bench/run" --holds 10,010 --out "$logs/bench-bad"
check "bench/run: an unknown workload is a usage error" \
	expect_fail 2 "wants gtod, paths or both, comma-separated, not 'mmap'" \
	"$top/bench/run" --workloads mmap --out "$logs/bench-bad"
# Its own existing folder, so that it never depends on the smoke run above
# (were it missing, the check would run a whole bench).
existing_out() {
	local d=$logs/bench-existing
	mkdir -p "$d" && echo keep >"$d/mine" || return 1
	expect_fail 1 "exists" timeout 30 "$top/bench/run" --smoke --out "$d" || return 1
	[ "$(cat "$d/mine")" = keep ] && [ "$(ls -A "$d")" = mine ] && [ ! -e "$d.partial" ]
}
check "bench/run: an existing --out is refused at once, its files untouched" existing_out
check "bench/report: a missing file is one line, exit 2" expect_fail 2 "No such file" \
	"$top/bench/report" "$logs/no-such-raw.txt"
check "bench/report: a file with no bench lines is refused" expect_fail 1 "no bench lines" \
	"$top/bench/report" /etc/hostname
