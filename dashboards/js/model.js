// SPDX-License-Identifier: GPL-2.0
// The dashboard's data model, shared by the live page and the report.
// It keeps every record of the feed and derives what the charts show.
// No DOM here: charts.js draws, live.js / report.js feed it.
(function (root) {
	'use strict';

	// log2 slot of a histogram bucket from its lower bound, as in
	// bcc/bpftrace: slot 0 is [0], slot 1 is [1], slot i is [2^(i-1), 2^i).
	function slotOf(min) {
		let s = 0;
		for (let v = min; v >= 1; v = Math.floor(v / 2))
			s++;
		return s;
	}
	function slotMin(s) { return s === 0 ? 0 : Math.pow(2, s - 1); }
	function slotMax(s) { return s === 0 ? 0 : Math.pow(2, s) - 1; }

	// bpftrace's labels: powers of 1024 as K, M, G, T.
	function size(v) {
		const units = ['', 'K', 'M', 'G', 'T', 'P'];
		let u = 0;
		while (v >= 1024 && v % 1024 === 0 && u < units.length - 1) {
			v /= 1024;
			u++;
		}
		return v + units[u];
	}
	function slotLabel(s) {
		if (s < 2)
			return String(slotMin(s));
		return '[' + size(slotMin(s)) + ', ' + size(slotMax(s) + 1) + ')';
	}
	// A value in ns as people read it: 8192 -> "8.19 µs".
	function ns(v) {
		const steps = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs']];
		for (const [d, u] of steps) {
			if (v >= d)
				return (v / d).toPrecision(3).replace(/\.?0+$/, '') + ' ' + u;
		}
		return v + ' ns';
	}

	function num(v) { return typeof v === 'number' && isFinite(v); }

	// A histogram as a Map slot -> count, from [{min, max, count}].
	function histMap(h) {
		const m = new Map();
		if (!Array.isArray(h))
			return m;
		for (const b of h) {
			if (!b || !num(b.min) || !num(b.count) || b.count <= 0)
				continue;
			const s = slotOf(b.min);
			m.set(s, (m.get(s) || 0) + b.count);
		}
		return m;
	}
	function addInto(total, m) {
		for (const [s, c] of m)
			total.set(s, (total.get(s) || 0) + c);
	}

	const HISTS = ['hold_ns', 'retries_per_read', 'lost_ns'];

	class Model {
		constructor() {
			this.reset();
		}

		reset() {
			this.locks = new Map();     // name -> lock state, in arrival order
			this.load = [];             // gtod-load intervals
			this.loadSummary = null;
			this.counts = { records: 0, frlockstat: 0, frlockstat_caller: 0,
				load: 0, load_summary: 0, feed_end: 0, ignored: 0 };
			// The per-interval rows, computed and formatted by the server
			// (dashboards/view.py) for the terminal and this page alike.
			this.rows = [];
			this.skipped = '';          // the server's "skipped: ..." line
			this.stall = null;          // the server's stall message
			this.malformed = 0;         // told by the server or the report
			this.lastFrlockTs = null;
			this.loadOffset = null;     // abs time = load t + loadOffset
			this.version = 0;
		}

		// A row of dashboards/view.py, sent apart from the records.
		addRow(r) {
			this.version++;
			this.rows.push(r);
		}

		lock(name) {
			let l = this.locks.get(name);
			if (!l) {
				l = { name: name, addr: null, kind: null, intervals: [],
					totals: { writes: 0, retried_reads: 0, retries: 0 },
					hist: {}, callers: new Map() };
				for (const k of HISTS)
					l.hist[k] = new Map();
				this.locks.set(name, l);
			}
			return l;
		}

		add(r) {
			this.version++;
			this.counts.records++;
			if (!r || typeof r !== 'object') {
				this.counts.ignored++;
				return;
			}
			switch (r.type) {
			case 'frlockstat': return this.addStat(r);
			case 'frlockstat_caller': return this.addCaller(r);
			case 'load': return this.addLoad(r);
			case 'feed_end':
				this.counts.feed_end++;
				return;
			case 'load_summary':
				this.counts.load_summary++;
				this.loadSummary = r;
				return;
			default:
				this.counts.ignored++;  // bpftrace output and the like
			}
		}

		addStat(r) {
			if (!num(r.ts) || !num(r.interval_s) || typeof r.lock !== 'string') {
				this.counts.ignored++;
				return;
			}
			this.counts.frlockstat++;
			const l = this.lock(r.lock);
			l.addr = r.addr || l.addr;
			l.kind = typeof r.kind === 'string' ? r.kind : (l.kind || 'frlock');
			const iv = { ts: r.ts, interval: num(r.dt) && r.dt > 0 ? r.dt : r.interval_s, time: r.time || '',
				writes: r.writes || 0, retried_reads: r.retried_reads || 0,
				retries: r.retries || 0, hist: {} };
			for (const k of HISTS) {
				iv.hist[k] = histMap(r[k]);
				addInto(l.hist[k], iv.hist[k]);
			}
			for (const k of ['writes', 'retried_reads', 'retries'])
				l.totals[k] += iv[k];
			l.intervals.push(iv);
			if (this.lastFrlockTs === null && this.loadOffset === null &&
			    this.load.length)
				this.loadOffset = r.ts - this.load[this.load.length - 1].t;
			this.lastFrlockTs = r.ts;
		}

		addCaller(r) {
			this.counts.frlockstat_caller++;
			const l = this.lock(String(r.lock));
			const key = r.kind + '\u0000' + r.caller;
			const c = l.callers.get(key) || { kind: String(r.kind),
				caller: String(r.caller), count: 0, total_ns: 0 };
			c.count += num(r.count) ? r.count : 0;
			c.total_ns += num(r.total_ns) ? r.total_ns : 0;
			l.callers.set(key, c);
		}

		addLoad(r) {
			if (!num(r.t) || !num(r.total)) {
				this.counts.ignored++;
				return;
			}
			this.counts.load++;
			// gtod-load's t counts from its own start. Without an absolute
			// ts, it is placed by the stream's order: the line that meets
			// the first frlockstat line was written about when it was.
			if (!num(r.ts) && this.loadOffset === null && this.lastFrlockTs !== null)
				this.loadOffset = this.lastFrlockTs - r.t;
			this.load.push({ t: r.t, dt: num(r.dt) ? r.dt : 1,
				ts: num(r.ts) ? r.ts : null, total: r.total,
				writes: num(r.writes) ? r.writes : 0,
				calls: Array.isArray(r.calls) ? r.calls : [] });
		}

		loadTime(p) {
			if (p.ts !== null)
				return p.ts;
			return p.t + (this.loadOffset === null ? 0 : this.loadOffset);
		}

		// The lock shown by default: the one whose readers retried most,
		// then the one with the most write sections (frlockstat lists every
		// sequence lock: the busiest writer, such as the hrtimer bases'
		// seqcount, need not be the one the load reads).
		defaultLock() {
			let best = null;
			for (const l of this.locks.values()) {
				if (!best || l.totals.retries > best.totals.retries ||
				    (l.totals.retries === best.totals.retries &&
				     l.totals.writes > best.totals.writes))
					best = l;
			}
			return best ? best.name : null;
		}

		// Everything the charts draw, for one lock and one heatmap metric.
		view(lockName, heatKey) {
			const l = this.locks.get(lockName) || null;
			// Time zero: the start of the earliest interval of any source.
			let t0 = Infinity;
			for (const lk of this.locks.values()) {
				if (lk.intervals.length)
					t0 = Math.min(t0, lk.intervals[0].ts - lk.intervals[0].interval);
			}
			for (const p of this.load)
				t0 = Math.min(t0, this.loadTime(p) - p.dt);
			if (t0 === Infinity)
				t0 = 0;

			const v = { lock: lockName, locks: Array.from(this.locks.keys()),
				kinds: Array.from(this.locks.values(), (lk) => lk.kind),
				t0: t0, reads: [], adjtimex: [], writes: [], retried: [],
				hist: {}, last: {}, heat: null, callers: [], intervals: 0,
				totals: l ? Object.assign({}, l.totals) : { writes: 0, retried_reads: 0, retries: 0 },
				addr: l ? l.addr : null, lastTime: '' };
			for (const p of this.load) {
				const x = +(this.loadTime(p) - t0).toFixed(3);
				v.reads.push({ x: x, y: p.total });
				v.adjtimex.push({ x: x, y: p.writes });
			}
			if (!l)
				return v;
			v.intervals = l.intervals.length;
			for (const iv of l.intervals) {
				const x = iv.ts - t0;
				v.writes.push({ x: x, y: iv.writes / iv.interval });
				// A seqcount's retried reads are not known: a gap, not 0.
				v.retried.push({ x: x, y: l.kind === 'seqcount' ? null :
					iv.retried_reads / iv.interval });
			}
			v.kind = l.kind || 'frlock';
			const last = l.intervals[l.intervals.length - 1];
			if (last)
				v.lastTime = last.time;
			for (const k of HISTS) {
				v.hist[k] = l.hist[k];
				v.last[k] = last ? last.hist[k] : new Map();
			}
			v.heat = this.heat(l, heatKey, t0);
			v.callers = Array.from(l.callers.values())
				.sort((a, b) => b.count - a.count || (a.caller < b.caller ? -1 : 1));
			return v;
		}

		// Heatmap: one column per interval, one row per log2 slot.
		heat(l, key, t0) {
			let lo = Infinity, hi = -Infinity, max = 0, sum = 0, cells = 0;
			const cols = [];
			for (const iv of l.intervals) {
				const m = iv.hist[key];
				for (const [s, c] of m) {
					lo = Math.min(lo, s);
					hi = Math.max(hi, s);
					max = Math.max(max, c);
					sum += c;
					cells++;
				}
				cols.push({ x0: iv.ts - iv.interval - t0, x1: iv.ts - t0,
					time: iv.time, cells: m });
			}
			return { key: key, cols: cols, lo: lo, hi: hi, max: max, sum: sum,
				cells: cells };
		}
	}

	root.FrlockModel = { Model: Model, slotOf: slotOf, slotMin: slotMin,
		slotMax: slotMax, slotLabel: slotLabel, size: size, ns: ns,
		HISTS: HISTS };
})(typeof window !== 'undefined' ? window : this);
