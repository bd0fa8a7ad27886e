# SPDX-License-Identifier: GPL-2.0
"""Does what Prometheus scraped agree with frlockstat's own figures?

usage: host/judge-scrape PROMETHEUS_URL FRLOCKSTAT_NDJSON [WINDOW_S]

For the lock with the most retries (then writes) in frlockstat's NDJSON (its -j output of
the same run that wrote the textfile page Prometheus scraped), over the
last WINDOW_S seconds of the scraped samples:
- the write rate and the retry rate from PromQL rate() are positive and
  within 5% of frlockstat's, over the same two totals (every scraped value
  must be one frlockstat printed: both come from the same map read);
- histogram_quantile(0.99, ...) of the hold time lies in the log2 bucket
  that holds frlockstat's p99 over the same intervals;
- the page hid no loss: frlockstat ran with fewer call sites than the
  load has (exporter.sh), and Prometheus scraped a non-zero
  frlock_events_lost_total{map="callers",reason="full"}, no larger than
  what frlockstat's own last drops record said;
- no series for what a kind cannot know: seqcount locks have no
  frlock_reads_retried_total (no event ends a seqcount read), and they
  have their waits.
Prints every figure it compares, a line per check ("ok - ..." or
"not ok - ..."), and exits 1 if any check failed.
"""
import json
import time
import urllib.parse
import urllib.request

from frlock import feed, view
from frlock.judges import Checks, parser

TOLERANCE = 0.05


def query(url, expr, at):
    q = urllib.parse.urlencode({"query": expr, "time": f"{at:.3f}"})
    with urllib.request.urlopen(f"{url}api/v1/query?{q}", timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"query {expr!r} failed: {body}")
    return body["data"]["result"]


def samples(url, metric, lock, at, window):
    res = query(url, f'{metric}{{lock="{lock}"}}[{window}s]', at)
    if len(res) != 1:
        raise RuntimeError(f"{metric}{{lock={lock!r}}}: {len(res)} series scraped, wanted 1")
    return [(float(t), int(float(v))) for t, v in res[0]["values"]]


def main(argv):
    p = parser(__doc__, "host/judge-scrape")
    p.add_argument("url", metavar="PROMETHEUS_URL")
    p.add_argument("path", metavar="FRLOCKSTAT_NDJSON")
    p.add_argument("window", metavar="WINDOW_S", type=int, nargs="?", default=20)
    a = p.parse_args(argv)
    url, path, window = a.url, a.path, a.window
    if not url.endswith("/"):
        url += "/"
    checks = Checks()
    report = checks.check
    recs, drops, skipped = [], [], 0
    with open(path, "rb") as f:
        for line in f:
            rec, why = feed.parse_line(line.rstrip(b"\r\n"))
            if rec is None:
                skipped += why is not None
                continue
            if rec["type"] == "frlockstat" and "total" in rec:
                recs.append(rec)
            elif rec["type"] == "frlockstat_drops":
                drops.append(rec)
    if skipped:
        checks.note("%d lines of %s are no record of this schema, left out" % (skipped, path))
    if not recs:
        report(False, f"{path} has frlockstat records")
        return 1
    writes, retries = {}, {}
    for r in recs:
        writes[r["lock"]] = writes.get(r["lock"], 0) + r["writes"]
        retries[r["lock"]] = retries.get(r["lock"], 0) + r["retries"]
    # The lock the load's readers retried most, then the busiest writer, as
    # the dashboards choose: every seqcount is a row now, and the hrtimer
    # bases' "seq" writes more than tk_core.lock but is never retried.
    lock = max(writes, key=lambda k: (retries.get(k, 0), writes[k]))
    recs = [r for r in recs if r["lock"] == lock]
    by_total = {}
    for i, r in enumerate(recs):
        by_total.setdefault(("writes", r["total"]["writes"]), i)
        by_total.setdefault(("retries", r["total"]["retries"]), i)

    # The last scraped sample ends the window.
    everything = query(url, f'frlock_writes_total{{lock="{lock}"}}[1h]', time.time())
    if not everything:
        report(False, f"Prometheus scraped frlock_writes_total{{lock={lock!r}}}")
        return 1
    end = max(float(v[0]) for s in everything for v in s["values"])
    print(f"# lock {lock}, window {window} s ending at the last scrape ({end:.3f})")
    first_i = last_i = None
    for key, metric, field in (("writes", "frlock_writes_total", "writes"),
                               ("retries", "frlock_read_retries_total", "retries")):
        got = samples(url, metric, lock, end, window)
        v0, v1 = got[0][1], got[-1][1]
        unknown = [v for _, v in got if (key, v) not in by_total]
        report(not unknown, f"every scraped {metric} value is a total frlockstat printed"
               + (f" (not: {unknown[:3]})" if unknown else f" ({len(got)} samples)"))
        if unknown or v1 <= v0:
            report(False, f"{metric} grew in the window ({v0} -> {v1})")
            continue
        i0, i1 = by_total[(key, v0)], by_total[(key, v1)]
        # The first record with each total: the total was printed then.
        dt = recs[i1]["ts"] - recs[i0]["ts"]
        ours = (v1 - v0) / dt if dt > 0 else 0.0
        prom = float(query(url, f'rate({metric}{{lock="{lock}"}}[{window}s])', end)[0]["value"][1])
        diff = abs(prom - ours) / ours if ours else 1.0
        report(prom > 0 and diff <= TOLERANCE,
               f"rate({metric}[{window}s]) {prom:.1f}/s, frlockstat {ours:.1f}/s over the same "
               f"totals ({v0} -> {v1} in {dt:.2f} s): {diff * 100:.1f}% apart (at most {TOLERANCE * 100:.0f}%)")
        if key == "writes":
            first_i, last_i = i0, i1

    if first_i is None:
        report(False, "no hold-time window to compare")
        return 1
    slots = {}
    for r in recs[first_i + 1:last_i + 1]:
        view.merge(slots, r["hold_ns"])
    p99 = view.percentile_slots(slots)[1]
    lo = view.slot_min(p99)
    hi = p99 if p99 < 2 else (1 << p99) - 1
    q = float(query(url, f'histogram_quantile(0.99, rate(frlock_write_hold_seconds_bucket'
                         f'{{lock="{lock}"}}[{window}s]))', end)[0]["value"][1]) * 1e9
    # Prometheus interpolates inside the bucket (le-1, le]: [lo-1, hi] here.
    report(lo - 1 <= q <= hi,
           f"histogram_quantile(0.99) of the hold time {q:.0f} ns, frlockstat's p99 in "
           f"[{lo}, {hi}] ns over the same {sum(slots.values())} writes")

    # The events lost to the full call-site map, on the page as in the feed.
    lost = query(url, 'max_over_time(frlock_events_lost_total{map="callers",reason="full"}[1h])', end)
    scraped = float(lost[0]["value"][1]) if lost else 0.0
    said = drops[-1]["by_map"]["callers"]["full"] if drops else 0
    report(0 < scraped <= said,
           f"frlock_events_lost_total{{map=\"callers\",reason=\"full\"}} scraped {scraped:.0f}, "
           f"frlockstat's last drops record {said} (non-zero, and no more than it said)")
    # Nothing stands for what a kind cannot know.
    bogus = query(url, 'frlock_reads_retried_total{kind="seqcount"}', end)
    waits = query(url, 'frlock_read_waits_total{kind="seqcount"}', end)
    report(not bogus and waits,
           f"seqcount locks: {len(waits)} with waits, {len(bogus)} with a retried-reads series "
           "(no event ends a seqcount read: it must have none)")
    return 1 if checks.failed else 0
