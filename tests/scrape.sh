# The exporter end to end: a guest under gettimeofday load serves
# frlockstat's textfile through node_exporter on a loopback-only forward,
# Debian's prometheus on the host scrapes it every second, and what it
# scraped must agree with frlockstat's own figures. Sourced by tests/run
# after guest.sh ($kernel, check, guest_job, wait_for, $logs, $top).

lp=$top/dashboards/prometheus/local-prometheus
scrape_logs=$logs/scrape
mkdir -p "$scrape_logs"
fwd_port=$("$lp" free-port)
if prom_url=$("$lp" start --dir "$scrape_logs/prometheus" --target "127.0.0.1:$fwd_port" \
	--interval 1 2>"$scrape_logs/start.err"); then
	ok "prometheus started on the host: $prom_url, scraping 127.0.0.1:$fwd_port"
	# The forward listens on the host's loopback only.
	listens_on_loopback_only() {
		local listen
		listen=$(ss -Hltn "sport = :$fwd_port")
		echo "$listen"
		[ -n "$listen" ] && ! echo "$listen" | awk '{ print $4 }' | grep -qv '^127\.0\.0\.1:'
	}
	# Watched from a subshell while the guest runs; judged after it.
	(wait_for 120 listens_on_loopback_only >"$scrape_logs/listen.txt" 2>&1
	 echo $? >"$scrape_logs/listen.rc") &
	watcher=$!
	guest_job scrape "guest with the exporter ran under load and exited cleanly" \
		--kernel "$kernel" --timeout 600 --hostfwd "$fwd_port:9100" \
		--results "$scrape_logs/guest" --exec '/opt/frlock/tests/guest/exporter.sh 45'
	wait "$watcher"
	check "the guest's exporter port was forwarded on 127.0.0.1 only ($(tail -1 "$scrape_logs/listen.txt"))" \
		test "$(cat "$scrape_logs/listen.rc")" = 0
	"$top/host/judge-scrape" "$prom_url" \
		"$scrape_logs/guest/frlockstat.ndjson" 30 >"$scrape_logs/agree.out" 2>&1
	agree_rc=$?
	relay <"$scrape_logs/agree.out"
	[ "$agree_rc" -eq 0 ] || grep -q '^not ok' "$scrape_logs/agree.out" ||
		not_ok "host/judge-scrape failed (exit $agree_rc): $(tail -1 "$scrape_logs/agree.out")"
	# The console template, with this run's data, in headless Chromium.
	console_renders() {
		local page=${prom_url}consoles/frlock.html?instance=127.0.0.1:$fwd_port
		/usr/bin/python3 "$top/dashboards/tests/browser.py" "$page" --ready '#frlock-locks' \
			--png "$scrape_logs/console.png" --timeout 60 >"$scrape_logs/console.json" || return 1
		/usr/bin/python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["errors"]; print(e); sys.exit(1 if e else 0)' \
			"$scrape_logs/console.json" || return 1
		/usr/bin/python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' \
			"$page" >"$scrape_logs/console.html" || return 1
		# A row for the lock, with a write rate above zero.
		grep -A1 'class="frlock-writes"' "$scrape_logs/console.html" | head -3
		grep -q 'class="frlock-writes">[1-9][0-9]*\.[0-9]' "$scrape_logs/console.html"
	}
	check "the console template shows the run in Chromium, with no console errors (screenshot: $scrape_logs/console.png)" \
		console_renders
	check "prometheus stopped and its folder removed" \
		bash -c "'$lp' stop --dir '$scrape_logs/prometheus' && test ! -e '$scrape_logs/prometheus'"
else
	not_ok "prometheus started on the host: $(cat "$scrape_logs/start.err")"
fi
