# Prometheus on the host: the recording rules and alerts (promtool), the
# fleet config, and dashboards/prometheus/local-prometheus scraping a
# recorded exporter page into the console template; its faults; and
# frlockstat's recorded NDJSON against its documented schema. Nothing here
# boots a guest. Sourced by tests/run (check, expect_fail,
# one_line_fault, log_kept, wait_for, $logs, $top).

prom=$top/dashboards/prometheus
lp=$prom/local-prometheus
plogs=$logs/prometheus
mkdir -p "$plogs"

check "prometheus: promtool check rules frlock.rules.yml" promtool check rules "$prom/frlock.rules.yml"
check "prometheus: promtool test rules (every rule from input series; reader time lost, hold p99 and lost events: each alert fires on the busy machine only)" \
	bash -c "cd '$prom' && promtool test rules frlock.rules.test.yml"
check "prometheus: promtool check config fleet.yml" promtool check config "$prom/fleet.yml"
check "prometheus: the exporter fixture is valid exposition format" \
	bash -c "promtool check metrics <'$prom/fixtures/frlock.prom'"
# frlockstat's records, recorded from a real run, against bpf/README.md's
# table of them (the feed the host's views read).
/usr/bin/python3 "$top/tests/feed_schema.py" "$top/bpf/README.md" \
	"$top/tests/fixtures/frlockstat-v2.ndjson" >"$plogs/feed_schema.out" 2>&1
schema_rc=$?
relay <"$plogs/feed_schema.out"
[ "$schema_rc" -eq 0 ] || grep -q '^not ok' "$plogs/feed_schema.out" ||
	not_ok "feed_schema.py failed (exit $schema_rc): $(tail -1 "$plogs/feed_schema.out")"

# A recorded exporter page served on loopback, as a guest's would be.
fixture_server() {
	mkdir -p "$plogs/exporter"
	cp "$prom/fixtures/frlock.prom" "$plogs/exporter/metrics"
	/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$plogs/exporter" \
		>"$plogs/exporter.log" 2>&1 &
	exporter_pid=$!
	wait_for 10 grep -q 'Serving HTTP on' "$plogs/exporter.log" || return 1
	exporter_port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$plogs/exporter.log" | head -1)
	[ -n "$exporter_port" ]
}
# http_get URL: the body, or exit 1 (no curl on a minimal Debian).
http_get() {
	/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' "$1"
}
# query URL EXPR: the number of samples EXPR returns.
query() {
	/usr/bin/python3 -c 'import json, sys, urllib.parse, urllib.request
q = urllib.parse.urlencode({"query": sys.argv[2]})
r = json.load(urllib.request.urlopen(sys.argv[1] + "api/v1/query?" + q, timeout=5))
print(len(r["data"]["result"]))' "$1" "$2"
}
has_samples() { [ "$(query "$1" "$2" 2>/dev/null)" -gt 0 ] 2>/dev/null; }
# scrape_fixture: start, scrape, evaluate the rules, render the console,
# stop; then neither the process nor its folder is left.
scrape_fixture() {
	local d=$plogs/run url pid rc=0
	fixture_server || { echo "the fixture server did not start"; return 1; }
	url=$("$lp" start --dir "$d" --target "127.0.0.1:$exporter_port") || { kill "$exporter_pid"; return 1; }
	pid=$(cat "$d/prometheus.pid")
	echo "prometheus at $url (pid $pid), exporter on port $exporter_port"
	case $url in http://127.0.0.1:*/) ;; *) echo "not a loopback address: $url"; rc=1 ;; esac
	if ! wait_for 20 has_samples "$url" 'lock:frlock_writes:rate1m{lock="tk_core"}'; then
		echo "the recording rule never had a sample"; rc=1
	fi
	# One hold histogram per lock of the fixture.
	local holds
	holds=$(grep -c '^frlock_write_hold_seconds_count{' "$prom/fixtures/frlock.prom")
	[ "$(query "$url" 'frlock_write_hold_seconds_count')" = "$holds" ] ||
		{ echo "not the $holds hold histograms of the fixture scraped"; rc=1; }
	http_get "${url}consoles/frlock.html" >"$plogs/console.html" || { echo "console not served"; rc=1; }
	grep -q '<td>tk_core</td>' "$plogs/console.html" || { echo "console has no tk_core row"; rc=1; }
	ss -ltnp | grep "pid=$pid," | grep -v '127.0.0.1:' && { echo "prometheus listens beyond loopback"; rc=1; }
	"$lp" stop --dir "$d" || rc=1
	kill "$exporter_pid"
	kill -0 "$pid" 2>/dev/null && { echo "prometheus still runs after stop"; rc=1; }
	[ ! -e "$d" ] || { echo "$d was not removed"; rc=1; }
	return $rc
}
check "prometheus: local-prometheus scrapes an exporter on loopback, evaluates the rules, renders the console, stops clean" \
	scrape_fixture

# --- Faults: one line naming the cause, exit 1, no process left -------------
busy_port() {
	/usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 >"$plogs/busy.log" 2>&1 &
	local holder=$! port rc
	wait_for 10 grep -q 'Serving HTTP on' "$plogs/busy.log"
	port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$plogs/busy.log" | head -1)
	[ -n "$port" ] || { echo "the port holder did not start"; kill "$holder"; return 1; }
	one_line_fault 1 "port $port on 127.0.0.1 is busy" \
		"$lp" start --dir "$plogs/busy" --target 127.0.0.1:9 --port "$port"
	rc=$?
	kill "$holder"
	return $rc
}
check "local-prometheus: a busy port is one line, exit 1" busy_port
no_binary() {
	local bin=$plogs/noprom f
	mkdir -p "$bin"
	# What local-prometheus and one_line_fault run, and no prometheus.
	for f in /usr/bin/python3 /usr/bin/grep /usr/bin/cat; do ln -sf "$f" "$bin/"; done
	PATH=$bin one_line_fault 1 "'prometheus' not found: run 'make deps'" \
		"$lp" start --dir "$plogs/nobin" --target 127.0.0.1:9
}
check "local-prometheus: no prometheus binary is one line naming the package" no_binary
# A prometheus that fails at start: its error and its log named, nothing left.
failed_start() {
	local bin=$plogs/badprom
	mkdir -p "$bin"
	printf '#!/bin/sh\necho "ts=0 level=error err=\\"opening storage failed: fake\\""\nexit 1\n' >"$bin/prometheus"
	chmod +x "$bin/prometheus"
	PATH=$bin:$PATH one_line_fault 1 'exited at start (exit 1): .*opening storage failed: fake.*; log: ' \
		"$lp" start --dir "$plogs/failed" --target 127.0.0.1:9 || return 1
	log_kept "opening storage failed" || return 1
	[ ! -e "$plogs/failed/prometheus.pid" ]
}
check "local-prometheus: a prometheus that fails at start is one line with its error and log" failed_start
check "local-prometheus: a bad --target is one line, exit 1" \
	one_line_fault 1 "--target wants HOST:PORT, not 'nowhere'" "$lp" start --dir "$plogs/bad" --target nowhere
