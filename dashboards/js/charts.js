// SPDX-License-Identifier: GPL-2.0
// The dashboard's charts, shared by the live page and the report:
// Chart.js (Debian's libjs-chart.js) for the histograms and the rate
// lines, and a heatmap drawn on a canvas here.
(function (root) {
	'use strict';
	const M = root.FrlockModel;

	const COLORS = { run: '#3b6ea8', last: '#e08a1e', reads: '#3b6ea8',
		writes: '#c0392b', adjtimex: '#8e44ad', retried: '#e08a1e' };

	const HIST_INFO = {
		hold_ns: { title: 'writer hold time', unit: 'ns',
			axis: 'hold_ns: write section begin to end, log2 buckets (K = 1024 ns)' },
		retries_per_read: { title: 'retries per retried read', unit: '',
			axis: 'retries_per_read: retries before the read succeeded, log2 buckets' },
		lost_ns: { title: 'time readers lost to retries', unit: 'ns',
			axis: 'lost_ns: first retry to successful read, log2 buckets (K = 1024 ns)' },
	};

	function el(id) { return document.getElementById(id); }
	function fmt(n) {
		if (!isFinite(n))
			return '–';
		return Math.round(n).toLocaleString('en-US');
	}
	// The range of slot s in words, for tooltips.
	function slotRange(s, unit) {
		const lo = M.slotMin(s), hi = M.slotMax(s);
		if (unit !== 'ns')
			return lo === hi ? String(lo) : lo + ' to ' + hi;
		return M.slotLabel(s) + ' ns = ' + (lo === hi ? M.ns(lo) :
			M.ns(lo) + ' to ' + M.ns(hi + 1));
	}

	// YlOrRd: pale yellow for one event, dark red for the most.
	const RAMP = [[255, 237, 160], [254, 217, 118], [254, 178, 76], [253, 141, 60],
		[252, 78, 42], [227, 26, 28], [189, 0, 38], [128, 0, 38]];
	function ramp(f) {
		f = Math.max(0, Math.min(1, f)) * (RAMP.length - 1);
		const i = Math.min(Math.floor(f), RAMP.length - 2), w = f - i;
		const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * w));
		return 'rgb(' + c.join(',') + ')';
	}
	// Count to colour position: log scale, 1 -> 0, max -> 1.
	function shade(c, max) {
		return max > 1 ? Math.log(c) / Math.log(max) : 1;
	}
	function niceStep(span, maxTicks) {
		const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
		for (const s of steps) {
			if (span / s <= maxTicks)
				return s;
		}
		return Math.ceil(span / maxTicks / 3600) * 3600;
	}

	// Time on x, log2 bucket on y (larger values up), count as colour.
	class Heatmap {
		constructor(canvas, tip) {
			this.canvas = canvas;
			this.tip = tip;
			this.heat = null;
			this.geo = null;
			this.drawn = 0;
			canvas.addEventListener('mousemove', e => this.hover(e));
			canvas.addEventListener('mouseleave', () => { this.tip.hidden = true; });
		}

		draw(heat, xmax, info) {
			this.heat = heat;
			this.info = info;
			const cv = this.canvas, dpr = root.devicePixelRatio || 1;
			const W = Math.max(cv.parentElement.clientWidth, 300), H = 320;
			if (cv.width !== Math.round(W * dpr) || cv.height !== Math.round(H * dpr)) {
				cv.width = Math.round(W * dpr);
				cv.height = Math.round(H * dpr);
				cv.style.width = W + 'px';
				cv.style.height = H + 'px';
			}
			const g = cv.getContext('2d');
			g.setTransform(dpr, 0, 0, dpr, 0, 0);
			g.clearRect(0, 0, W, H);
			const L = 92, R = 96, T = 10, B = 44;
			const pw = W - L - R, ph = H - T - B;
			g.font = '12px system-ui, sans-serif';
			g.fillStyle = '#f1f3f6';
			g.fillRect(L, T, pw, ph);
			this.drawn = 0;
			if (!heat || !heat.cols.length || heat.cells === 0) {
				g.fillStyle = '#666';
				g.textAlign = 'center';
				g.fillText('no ' + (heat ? heat.key : 'frlockstat') + ' data', L + pw / 2, T + ph / 2);
				this.geo = null;
				return;
			}
			const rows = heat.hi - heat.lo + 1, rh = ph / rows;
			const span = Math.max(xmax, 1);
			const xp = x => L + (x / span) * pw;
			this.geo = { L: L, T: T, pw: pw, ph: ph, rh: rh, span: span, xp: xp };
			for (const col of heat.cols) {
				const x0 = xp(col.x0), x1 = xp(col.x1);
				for (const [s, c] of col.cells) {
					const y = T + (heat.hi - s) * rh;
					g.fillStyle = ramp(shade(c, heat.max));
					// Overlap by half a pixel so that cells do not show seams.
					g.fillRect(x0, y, Math.max(x1 - x0, 1) + 0.5, rh + 0.5);
					this.drawn++;
				}
			}
			// y axis: lower bound of each bucket.
			g.fillStyle = '#333';
			g.textAlign = 'right';
			g.textBaseline = 'middle';
			const every = Math.max(1, Math.ceil(13 / rh));
			for (let s = heat.lo; s <= heat.hi; s++) {
				if ((s - heat.lo) % every)
					continue;
				g.fillText(M.size(M.slotMin(s)), L - 6, T + (heat.hi - s + 0.5) * rh);
			}
			g.save();
			g.translate(14, T + ph / 2);
			g.rotate(-Math.PI / 2);
			g.textAlign = 'center';
			g.fillText(heat.key + ' (log2 bucket, lower bound)', 0, 0);
			g.restore();
			// x axis: seconds since start.
			g.textAlign = 'center';
			g.textBaseline = 'top';
			const step = niceStep(span, Math.max(2, Math.floor(pw / 70)));
			g.strokeStyle = '#999';
			for (let x = 0; x <= span + 1e-9; x += step) {
				g.beginPath();
				g.moveTo(xp(x), T + ph);
				g.lineTo(xp(x), T + ph + 4);
				g.stroke();
				g.fillText(x + ' s', xp(x), T + ph + 6);
			}
			g.fillText('time since start (s); one column per frlockstat interval',
				L + pw / 2, T + ph + 24);
			// Legend: the colour ramp, counts on a log scale.
			const lx = L + pw + 22, lw = 14;
			for (let i = 0; i < ph; i++) {
				g.fillStyle = ramp(1 - i / ph);
				g.fillRect(lx, T + i, lw, 1.5);
			}
			g.fillStyle = '#333';
			g.textAlign = 'left';
			g.textBaseline = 'middle';
			const mid = Math.round(Math.sqrt(heat.max));
			g.fillText(fmt(heat.max), lx + lw + 5, T + 4);
			if (mid > 1 && mid < heat.max)
				g.fillText(fmt(mid), lx + lw + 5, T + ph / 2);
			g.fillText('1', lx + lw + 5, T + ph - 4);
			g.save();
			g.translate(lx - 6, T + ph / 2);
			g.rotate(-Math.PI / 2);
			g.textAlign = 'center';
			g.fillText('count per interval (log)', 0, 0);
			g.restore();
		}

		hover(e) {
			const h = this.heat, geo = this.geo;
			if (!h || !geo) {
				this.tip.hidden = true;
				return;
			}
			const r = this.canvas.getBoundingClientRect();
			const x = e.clientX - r.left, y = e.clientY - r.top;
			const t = (x - geo.L) / geo.pw * geo.span;
			const s = h.hi - Math.floor((y - geo.T) / geo.rh);
			const col = h.cols.find(c => t >= c.x0 && t < c.x1);
			if (!col || s < h.lo || s > h.hi) {
				this.tip.hidden = true;
				return;
			}
			const c = col.cells.get(s) || 0;
			this.tip.textContent = col.x0.toFixed(0) + '–' + col.x1.toFixed(0) + ' s' +
				(col.time ? ' (' + col.time + ')' : '') + ': ' +
				slotRange(s, this.info.unit) + ': ' + fmt(c) +
				(h.key === 'hold_ns' ? ' write sections' : ' reads');
			this.tip.style.left = Math.min(x + 12, r.width - 260) + 'px';
			this.tip.style.top = (y + 12) + 'px';
			this.tip.hidden = false;
		}
	}

	function histChart(canvas, key) {
		const info = HIST_INFO[key];
		return new Chart(canvas, {
			type: 'bar',
			data: { labels: [], datasets: [
				{ label: 'whole run', data: [], backgroundColor: COLORS.run },
				{ label: 'last interval', data: [], backgroundColor: COLORS.last },
			] },
			options: {
				responsive: true, maintainAspectRatio: false, animation: false,
				scales: {
					x: { title: { display: true, text: info.axis } },
					y: { type: 'logarithmic', min: 0.5,
						title: { display: true, text: 'count (log scale)' },
						ticks: { callback: v => (Number.isInteger(v) &&
							/^[125]/.test(String(v)) ? fmt(v) : null) } },
				},
				plugins: { tooltip: { callbacks: {
					title: items => items.length ?
						slotRange(items[0].chart.$slots[items[0].dataIndex], info.unit) : '',
				} } },
			},
		});
	}

	function ratesChart(canvas) {
		const line = (label, color, axis, dash) => ({ label: label, data: [],
			borderColor: color, backgroundColor: color, yAxisID: axis,
			borderDash: dash || [], pointRadius: 2, borderWidth: 2, tension: 0 });
		return new Chart(canvas, {
			type: 'line',
			data: { datasets: [
				line('reads/s (gtod-load syscalls, left axis)', COLORS.reads, 'y'),
				line('writes/s (lock write sections, right axis)', COLORS.writes, 'y1'),
				line('adjtimex writes/s (gtod-load writer, right axis)', COLORS.adjtimex, 'y1', [6, 4]),
				line('retried reads/s (right axis)', COLORS.retried, 'y1'),
			] },
			options: {
				responsive: true, maintainAspectRatio: false, animation: false,
				parsing: false, normalized: true,
				interaction: { mode: 'nearest', intersect: false },
				scales: {
					x: { type: 'linear', min: 0,
						title: { display: true, text: 'time since start (s)' } },
					y: { position: 'left', beginAtZero: true,
						title: { display: true, text: 'reads/s' } },
					y1: { position: 'right', beginAtZero: true,
						grid: { drawOnChartArea: false },
						title: { display: true, text: 'writes/s, retried reads/s' } },
				},
			},
		});
	}

	// Fill a histogram chart with the slots lo..hi of the whole run.
	function fillHist(chart, run, last) {
		let lo = Infinity, hi = -Infinity;
		for (const s of run.keys()) {
			lo = Math.min(lo, s);
			hi = Math.max(hi, s);
		}
		const slots = [];
		for (let s = lo; s <= hi; s++)
			slots.push(s);
		chart.$slots = slots;
		chart.data.labels = slots.map(M.slotLabel);
		chart.data.datasets[0].data = slots.map(s => run.get(s) || 0);
		chart.data.datasets[1].data = slots.map(s => last.get(s) || 0);
		chart.update('none');
	}

	function create(opts) {
		Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", sans-serif';
		Chart.defaults.animation = false;
		const model = new M.Model();
		const charts = {
			rates: ratesChart(el('rates')),
			hold_ns: histChart(el('hold'), 'hold_ns'),
			retries_per_read: histChart(el('rpr'), 'retries_per_read'),
			lost_ns: histChart(el('lost'), 'lost_ns'),
		};
		const heatmap = new Heatmap(el('heatmap'), el('heat-tip'));
		const state = { lock: null, heatKey: el('heat-key').value, renders: 0,
			ended: false, view: null };
		const dash = { model: model, charts: charts, heatmap: heatmap, state: state };

		el('lock').addEventListener('change', e => { state.lock = e.target.value; dash.render(); });
		el('heat-key').addEventListener('change', e => { state.heatKey = e.target.value; dash.render(); });
		root.addEventListener('resize', () => { if (state.view) dash.render(); });

		dash.status = function (text, cls) {
			const s = el('status');
			s.textContent = text;
			s.className = cls || '';
		};

		dash.render = function () {
			if (!state.lock || !model.locks.has(state.lock))
				state.lock = model.defaultLock();
			const v = model.view(state.lock, state.heatKey);
			state.view = v;
			state.renders++;

			const pick = el('lock');
			if (pick.options.length !== v.locks.length) {
				pick.textContent = '';
				// Every instance seen, frlock and seqcount alike, with its kind.
				v.locks.forEach((name, i) => pick.add(new Option(
					v.kinds[i] ? name + ' (' + v.kinds[i] + ')' : name, name)));
			}
			pick.value = state.lock || '';
			el('lock-pick').hidden = v.locks.length < 2;

			let xmax = 1;
			for (const a of [v.reads, v.writes])
				for (const p of a)
					xmax = Math.max(xmax, p.x);
			xmax = Math.ceil(xmax);

			const r = charts.rates;
			r.data.datasets[0].data = v.reads;
			r.data.datasets[1].data = v.writes;
			r.data.datasets[2].data = v.adjtimex;
			r.data.datasets[3].data = v.retried;
			r.options.scales.x.max = xmax;
			r.update('none');
			el('rates-note').hidden = v.reads.length > 0;

			for (const k of M.HISTS)
				fillHist(charts[k], v.hist[k] || new Map(), v.last[k] || new Map());
			el('last-time').textContent = v.lastTime ? 'last interval ended ' + v.lastTime + ' · ' : '';

			heatmap.draw(v.heat, xmax, HIST_INFO[state.heatKey]);
			renderNumbers(v);
			renderCallers(v);
			renderRows();
			el('frlock-summary').textContent = JSON.stringify(dash.summary());
		};

		function renderNumbers(v) {
			const reads = v.reads.map(p => p.y);
			const mean = a => a.length ? a.reduce((x, y) => x + y, 0) / a.length : NaN;
			const items = [
				['lock', (v.lock || '–') + (v.addr ? ' @ ' + v.addr : '')],
				['intervals', fmt(v.intervals)],
				['write sections', fmt(v.totals.writes)],
				['kind', v.kind || '–'],
				['retried reads', v.kind === 'seqcount' ? 'not known (seqcount)' :
					fmt(v.totals.retried_reads)],
				['retries', fmt(v.totals.retries)],
				['mean reads/s', fmt(mean(reads))],
				['mean writes/s', fmt(mean(v.writes.map(p => p.y)))],
				['malformed lines skipped', fmt(model.malformed)],
				['records (ignored)', fmt(model.counts.records) + ' (' + fmt(model.counts.ignored) + ')'],
			];
			const dl = el('numbers');
			dl.textContent = '';
			for (const [k, val] of items) {
				const d = document.createElement('div');
				const dt = document.createElement('dt');
				const dd = document.createElement('dd');
				dt.textContent = k;
				dd.textContent = val;
				if (k.startsWith('malformed'))
					d.className = model.malformed ? 'warn' : '';
				d.id = 'n-' + k.split(' ')[0].replace(/[^a-z]/g, '');
				d.append(dt, dd);
				dl.append(d);
			}
		}

		// The server's rows, cell by cell as it formatted them.
		function renderRows() {
			const tb = el('rows').tBodies[0];
			const rows = model.rows;
			while (tb.rows.length > rows.length)
				tb.deleteRow(-1);
			for (let i = tb.rows.length; i < rows.length; i++) {
				const tr = tb.insertRow();
				for (const c of rows[i].cells)
					tr.insertCell().textContent = c;
			}
			el('rows-lock').textContent = rows.length ? rows[rows.length - 1].lock : '';
			el('skipped').textContent = model.skipped;
			el('skipped').className = /: 0 malformed lines, 0 records/.test(model.skipped) ?
				'guide' : 'guide warn';
			const alert = el('feed-alert');
			alert.hidden = !model.stall;
			alert.textContent = model.stall || '';
		}

		function renderCallers(v) {
			const tb = el('callers').tBodies[0];
			tb.textContent = '';
			const top = v.callers.slice(0, 10);
			for (const c of top) {
				const tr = tb.insertRow();
				tr.insertCell().textContent = c.kind;
				tr.insertCell().textContent = c.caller;
				tr.insertCell().textContent = fmt(c.count);
				tr.insertCell().textContent = c.kind === 'write' && c.count ?
					M.ns(c.total_ns / c.count) : '–';
			}
			el('callers-note').hidden = top.length > 0;
		}

		// What the charts hold, read back from them: the tests compare it
		// with the feed.
		dash.summary = function () {
			const v = state.view;
			const hist = k => ({
				mins: (charts[k].$slots || []).map(M.slotMin),
				labels: charts[k].data.labels.slice(),
				run: charts[k].data.datasets[0].data.slice(),
				last: charts[k].data.datasets[1].data.slice(),
			});
			const pts = i => charts.rates.data.datasets[i].data.map(p => [p.x, p.y]);
			const h = v && v.heat;
			return {
				mode: opts.mode, renders: state.renders, ended: state.ended,
				counts: Object.assign({}, model.counts), malformed: model.malformed,
				lock: v ? v.lock : null, locks: v ? v.locks : [],
				intervals: v ? v.intervals : 0, totals: v ? v.totals : {},
				hist: { hold_ns: hist('hold_ns'), retries_per_read: hist('retries_per_read'),
					lost_ns: hist('lost_ns') },
				rates: { reads: pts(0), writes: pts(1), adjtimex: pts(2), retried: pts(3) },
				heat: h ? { key: h.key, cols: h.cols.length,
					rows: h.cells ? h.hi - h.lo + 1 : 0, lo: h.cells ? M.slotMin(h.lo) : null,
					cells: h.cells, sum: h.sum, max: h.max, drawn: heatmap.drawn } : null,
				callers: v ? v.callers.length : 0,
				rows: Array.from(el('rows').tBodies[0].rows,
					tr => Array.from(tr.cells, td => td.textContent)),
				rows_header: Array.from(el('rows').tHead.rows[0].cells, th => th.textContent),
				skipped: el('skipped').textContent,
				stall: el('feed-alert').hidden ? null : el('feed-alert').textContent,
			};
		};
		return dash;
	}

	root.FrlockDashboard = { create: create, Heatmap: Heatmap };
})(window);
