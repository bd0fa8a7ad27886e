#!/bin/sh
# Runs inside the guest, booted by tests/scrape.sh with run-guest --hostfwd:
# the exporter side of the Prometheus scrape test. node_exporter serves
# frlockstat's textfile on port 9100 while gtod-load reads the time with
# adjtimex writers; frlockstat's own NDJSON goes to /results, where the host
# compares it with what its Prometheus scraped. frlockstat keeps at most
# SITES call sites (--max-sites), fewer than the load has, so that its page
# must show the events it lost (frlock_events_lost_total{map="callers"}).
#
# usage: exporter.sh SECONDS
F=/opt/frlock/bpf/.output/frlockstat
. "$(dirname "$0")/lib.sh"
# shellcheck source=guest-rootfs/lib.sh
. /opt/frlock/guest-rootfs/lib.sh
secs=${1:-30}
SITES=8
dir=/run/frlock-textfile
page=$dir/frlock.prom
mkdir -p "$dir"

prometheus-node-exporter --collector.disable-defaults --collector.textfile \
	--collector.textfile.directory="$dir" --web.listen-address=:9100 \
	>"$tmp/node_exporter.log" 2>&1 &
ne=$!
"$F" -c -j --max-sites $SITES -P "$page" 1 >/results/frlockstat.ndjson 2>"$tmp/frlockstat.err" &
fs=$!
wait_attached $fs "$tmp/frlockstat.err" '^Tracing' 600
check "frlockstat -P attached" kill -0 $fs

gtod-load -t 2 -d "$secs" -w 200 -i 0 -q
# busybox wget: what the host's Prometheus gets through the forward.
check "node_exporter serves frlockstat's page on :9100" \
	sh -c "wget -q -O - http://127.0.0.1:9100/metrics >'$tmp/metrics' &&
	       grep -q '^frlock_write_hold_seconds_bucket{' '$tmp/metrics'"
check "the page names call sites as symbol+offset, and no kernel address" \
	sh -c "grep -q '^frlock_site_writes_total{.*site=\"[a-z_][a-z0-9_.]*+0x' '$tmp/metrics' &&
	       ! grep -q 'ffff[0-9a-f]\{12\}' '$tmp/metrics'"
check "node_exporter read the page without errors" \
	sh -c "grep -q '^node_textfile_scrape_error 0' '$tmp/metrics'"
check "the page counts the events lost to the full call-site map (--max-sites $SITES)" \
	sh -c "grep -q '^frlock_events_lost_total{map=\"callers\",reason=\"full\"} [1-9]' '$tmp/metrics'"

kill -INT $fs
wait_sigint $fs
check "frlockstat -P ended cleanly" test $? -eq 0
check "frlockstat removed its page at exit (no frozen counts left)" test ! -e "$page"
kill $ne
wait $ne 2>/dev/null
cp "$tmp/frlockstat.err" "$tmp/node_exporter.log" "$tmp/metrics" /results/ 2>/dev/null
exit 0
