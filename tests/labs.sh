# shellcheck shell=bash
# The teaching labs (labs/README.md): each runs in its quick mode in the
# guest, its result must say what the lab teaches (judged here from the
# figures in its result.json, not from the lab's own verdict), and its
# report must draw every chart in headless Chromium with no console error.
# Bad lab names are refused. Sourced by tests/run ($top, $logs, check, ok,
# not_ok, skip); run alone: `bash tests/labs.sh [LOGDIR]`.

if [ -z "${top:-}" ]; then     # alone, not sourced by tests/run
	top=$(cd "$(dirname "$0")/.." && pwd)
	logs=${1:-$(mktemp -d /tmp/frlock-labs.XXXXXX)}
	mkdir -p "$logs"
	# shellcheck source=tests/lib.sh
	. "$top/tests/lib.sh"
	labs_alone=1
fi
labs_logs=$logs/labs
mkdir -p "$labs_logs"
labs_py=/usr/bin/python3

# run_lab NAME: labs/lab --quick into $labs_logs/NAME (labs/lab boots with
# run-guest --retry-livelock: QEMU's TCG livelock is not the lab's fault).
run_lab() {
	local d=$labs_logs/$1
	"$top/labs/lab" --quick --out "$d" "$1" </dev/null >"$d.out" 2>&1 && return 0
	tail -n 5 "$d.out"
	return 1
}

# judge NAME PYTHON: PYTHON, given r (the lab's result.json), prints what
# it found and exits 1 unless the result says what the lab teaches.
judge() {
	"$labs_py" - "$labs_logs/$1/result.json" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[2])
PY
}

# The rules, one per lab, used through ${!labs_rule} below.
# shellcheck disable=SC2034
vdso_judge='
s, v = r["runs"]["syscall"], r["runs"]["vdso"]
print("syscall run: %d gettimeofday syscalls, %d retried at ktime_get_real_ts64; "
      "vDSO run: %d syscalls, %d retried there, %d write sections"
      % (s["syscalls"], s["gtod_retried"], v["syscalls"], v["gtod_retried"], v["writes"]))
ok = s["syscalls"] > 0 and s["gtod_retried"] > 0 and v["syscalls"] == 0 and \
    v["gtod_retried"] == 0 and v["writes"] > 0
# the explanation quotes this run, not a canned figure
ok = ok and "{:,}".format(s["syscalls"]) in " ".join(r["text"])
sys.exit(0 if ok else 1)'
# shellcheck disable=SC2034
rate_judge='
runs = sorted(r["runs"], key=lambda x: x["writes_s"])
sh = [x["retry_share"] for x in runs]
print("writes/s", [round(x["writes_s"]) for x in runs], "retry share", sh)
sys.exit(0 if runs[-1]["writes_s"] > 10 * runs[0]["writes_s"] and sh[-1] > 2 * sh[0] and
         sh[-1] >= max(sh) / 2 else 1)'
# shellcheck disable=SC2034
lockout_judge='
p = {lk: {n: v["wait_p99"] for n, v in r["lockout"][lk].items()} for lk in r["lockout"]}
print("writer wait p99 (ns) by readers:", p)
rw, fr = p["rwlock"], p["frlock"]
sys.exit(0 if rw["2"] >= 3 * max(rw["0"], 1) and rw["2"] >= 3 * max(fr["2"], 1) else 1)'
# shellcheck disable=SC2034
window_judge='
w = r["window"]
holds = [str(h) for h in r["holds_us"]]
grow = {lk: w[lk][holds[1]]["lost_p50_ns"] / max(w[lk][holds[0]]["lost_p50_ns"], 1) for lk in w}
print("median loss of a read that met a write (ns), by hold:",
      {lk: {h: w[lk][h]["lost_p50_ns"] for h in holds} for lk in w},
      "growth:", {lk: round(g, 1) for lk, g in grow.items()})
sys.exit(0 if set(w) == {"frlock", "seqcount"} and all(g >= 3 for g in grow.values()) else 1)'
# shellcheck disable=SC2034
starve_judge='
runs = sorted(r["runs"], key=lambda x: x["writes_s"])
t = [x["tail_pm"] for x in runs]
print("writes/s", [round(x["writes_s"]) for x in runs],
      "reads needing >= 2 retries per million", [round(x, 2) for x in t])
sys.exit(0 if runs[-1]["writes_s"] > 10 * runs[0]["writes_s"] and t[-1] > 2 * t[0] and
         t[-1] >= max(t) / 2 else 1)'
# shellcheck disable=SC2034
paths_judge='
p = r["paths"]
for w in ("none", "rename-elsewhere", "rename"):
    print(w, "rename_lock retries", p[w]["retry"].get("rename_lock", 0),
          "d_seq retries", p[w]["retry"].get("d_seq", 0), "renames/s", p[w]["writes_per_s"])
rl = {w: p[w]["retry"].get("rename_lock", 0) for w in p}
ds = {w: p[w]["retry"].get("d_seq", 0) for w in p}
sys.exit(0 if rl["rename-elsewhere"] > 0 and rl["rename"] > 0 and ds["rename"] > 0 and
         10 * ds["rename-elsewhere"] <= ds["rename"] and 10 * rl["none"] <= rl["rename-elsewhere"]
         else 1)'

# renders NAME: the report in headless Chromium, from the file: every
# chart drawn (#lab-drawn holds their count), no console error.
renders() {
	local d=$labs_logs/$1
	"$labs_py" "$top/dashboards/tests/browser.py" "file://$d/report.html" --ready '#lab-drawn' \
		--png "$d/report.png" --timeout 60 >"$d/browser.json" || return 1
	"$labs_py" - "$d/browser.json" <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))
print("errors:", b["errors"], "canvases:", b["canvases"])
drawn = [c for c in b["canvases"] if c[1] > 0 and c[2] > 0]
sys.exit(0 if not b["errors"] and b["canvases"] and len(drawn) == len(b["canvases"]) else 1)
PY
}

have_browser=1
command -v chromium >/dev/null && [ -f /usr/share/javascript/chart.js/chart.min.js ] &&
	"$labs_py" -c 'import websocket' 2>/dev/null || have_browser=0

# lab_quick NAME: the lab in its quick mode, its report written, in under
# the 2 minutes a full lab may take.
lab_quick() {
	local t0
	t0=$(date +%s)
	run_lab "$1" && test -s "$labs_logs/$1/report.html" || return 1
	echo "took $(($(date +%s) - t0)) s"
	[ $(($(date +%s) - t0)) -lt 120 ]
}
# verdict NAME SHOWS: the lab's printed verdict is SHOWS (1: it says the
# run shows what it teaches, 0: it says plainly that it does not).
verdict() {
	local want='the run shows what the lab teaches'
	[ "$2" = 1 ] || want='the run does NOT show what the lab teaches'
	grep "^lab $1: " "$labs_logs/$1.out"
	grep -q "^lab $1: $want" "$labs_logs/$1.out"
}

for labs_lab in vdso-vs-syscall:vdso_judge writer-rate:rate_judge lockout:lockout_judge \
	write-window:window_judge reader-starvation:starve_judge path-walk:paths_judge; do
	labs_name=${labs_lab%%:*} labs_rule=${labs_lab#*:}
	if check "lab $labs_name: runs in its quick mode and writes its report (under 120 s)" lab_quick "$labs_name"; then
		case $labs_rule in
		vdso_judge) labs_what="the syscall run's reads retry at ktime_get_real_ts64; the vDSO run's reach no kernel reader and retry nowhere, though writes go on" ;;
		rate_judge) labs_what="the retry share grows with the writer rate (the most write sections: above 2x the fewest, at least half the largest)" ;;
		window_judge) labs_what="a write section as long as timekeeping_advance() makes a read that meets it lose 3x or more what the copy-only section does, at the median (the least disturbed of 5 runs), with frlock and with seqcount" ;;
		lockout_judge) labs_what="rwlock's writer wait p99 grows with readers (2 readers >= 3x none), frlock's stays 3x below rwlock's with the same readers (its microsecond p99 moves several-fold between runs)" ;;
		starve_judge) labs_what="the retries-per-read tail grows with the write rate (reads needing >= 2 retries per million: the most write sections' above 2x the fewest's, at least half the largest)" ;;
		paths_judge) labs_what="renames anywhere make rename_lock retry, renames of the looked-up files make d_seq retry (10x more than renames elsewhere), no writer almost none" ;;
		esac
		labs_shows=0
		check "lab $labs_name: $labs_what" judge "$labs_name" "${!labs_rule}" && labs_shows=1
		check "lab $labs_name: its printed verdict agrees ($([ $labs_shows = 1 ] && echo shows || echo 'says plainly it does not show') what it teaches)" \
			verdict "$labs_name" "$labs_shows"
		if [ "$have_browser" = 1 ]; then
			check "lab $labs_name: report.html draws every chart in headless Chromium, no console errors" renders "$labs_name"
		else
			skip "lab $labs_name: report in Chromium (chromium, libjs-chart.js or python3-websocket not installed: make deps)"
		fi
	else
		not_ok "lab $labs_name: no result to judge (see the check above)"
	fi
done

# Bad input: the list of labs and exit 2.
check "make lab without NAME lists the labs and exits 2" \
	bash -c "cd '$top' && make -s lab >'$labs_logs/noname.out' 2>&1; rc=\$?; cat '$labs_logs/noname.out';
		[ \$rc -eq 2 ] && grep -q 'which lab? NAME=<lab>' '$labs_logs/noname.out' &&
		grep -q 'reader-starvation' '$labs_logs/noname.out'"
check "labs/lab with an unknown name lists the labs and exits 2" \
	bash -c "'$top/labs/lab' no-such-lab >'$labs_logs/unknown.out' 2>&1; rc=\$?; cat '$labs_logs/unknown.out';
		[ \$rc -eq 2 ] && grep -q \"no lab 'no-such-lab'\" '$labs_logs/unknown.out' && grep -q 'vdso-vs-syscall' '$labs_logs/unknown.out'"

if [ -n "${labs_alone:-}" ]; then
	echo "# logs: $logs"
	echo "$passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
fi
