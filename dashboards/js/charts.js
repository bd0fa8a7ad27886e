// SPDX-License-Identifier: GPL-2.0
// The dashboard's drawing code, shared by the live page and the report.
// It draws the view's snapshot (host/frlock/view.py) as it comes: every
// cell, label, rate and heatmap shade is computed there; here are only
// Chart.js (Debian's libjs-chart.js), a heatmap canvas and the DOM.
(function (root) {
	'use strict';

	const COLORS = { run: '#3b6ea8', last: '#e08a1e', reads: '#3b6ea8',
		writes: '#c0392b', adjtimex: '#8e44ad', retried: '#e08a1e' };
	const HISTS = ['hold_ns', 'wait_ns', 'retry_lb_ns'];
	const AXIS = {
		hold_ns: 'hold_ns: write section begin to end, log2 buckets (K = 1024 ns)',
		wait_ns: 'wait_ns: a wait to the end of the write it waited for, log2 buckets (K = 1024 ns)',
		retry_lb_ns: 'retry_lb_ns: the colliding write\'s begin to the retry, log2 buckets (K = 1024 ns)',
	};

	function el(id) { return document.getElementById(id); }

	// YlOrRd: pale yellow for one event, dark red for the most.
	const RAMP = [[255, 237, 160], [254, 217, 118], [254, 178, 76], [253, 141, 60],
		[252, 78, 42], [227, 26, 28], [189, 0, 38], [128, 0, 38]];
	function ramp(f) {
		f = Math.max(0, Math.min(1, f)) * (RAMP.length - 1);
		const i = Math.min(Math.floor(f), RAMP.length - 2), w = f - i;
		const c = RAMP[i].map((v, k) => Math.round(v + (RAMP[i + 1][k] - v) * w));
		return 'rgb(' + c.join(',') + ')';
	}
	function tickStep(span, maxTicks) {
		const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200];
		for (const s of steps) {
			if (span / s <= maxTicks)
				return s;
		}
		return Math.ceil(span / maxTicks / 3600) * 3600;
	}

	// Time on x, log2 bucket on y (larger values up), the view's shade as colour.
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

		draw(heat, key, xmax) {
			this.heat = heat;
			this.key = key;
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
			if (!heat || !heat.cols.length) {
				g.fillStyle = '#666';
				g.textAlign = 'center';
				g.fillText('no ' + key + ' data', L + pw / 2, T + ph / 2);
				this.geo = null;
				return;
			}
			const rh = ph / (heat.hi - heat.lo + 1), span = Math.max(xmax, 1);
			const xp = x => L + (x / span) * pw;
			this.geo = { L: L, T: T, pw: pw, rh: rh, span: span };
			for (const col of heat.cols) {
				const x0 = xp(col.x0), x1 = xp(col.x1);
				for (const [s, shade] of col.cells) {
					g.fillStyle = ramp(shade);
					// Overlap by half a pixel so that cells do not show seams.
					g.fillRect(x0, T + (heat.hi - s) * rh, Math.max(x1 - x0, 1) + 0.5, rh + 0.5);
					this.drawn++;
				}
			}
			g.fillStyle = '#333';
			g.textAlign = 'right';
			g.textBaseline = 'middle';
			const every = Math.max(1, Math.ceil(13 / rh));
			for (let s = heat.lo; s <= heat.hi; s++) {
				if ((s - heat.lo) % every === 0)
					g.fillText(heat.labels[s], L - 6, T + (heat.hi - s + 0.5) * rh);
			}
			g.save();
			g.translate(14, T + ph / 2);
			g.rotate(-Math.PI / 2);
			g.textAlign = 'center';
			g.fillText(key + ' (log2 bucket, lower bound)', 0, 0);
			g.restore();
			g.textAlign = 'center';
			g.textBaseline = 'top';
			const step = tickStep(span, Math.max(2, Math.floor(pw / 70)));
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
			const lx = L + pw + 22, lw = 14;
			for (let i = 0; i < ph; i++) {
				g.fillStyle = ramp(1 - i / ph);
				g.fillRect(lx, T + i, lw, 1.5);
			}
			g.fillStyle = '#333';
			g.textAlign = 'left';
			g.textBaseline = 'middle';
			g.fillText(heat.max_label, lx + lw + 5, T + 4);
			if (heat.mid_label)
				g.fillText(heat.mid_label, lx + lw + 5, T + ph / 2);
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
			const cell = col && col.cells.find(c => c[0] === s);
			if (!col || s < h.lo || s > h.hi) {
				this.tip.hidden = true;
				return;
			}
			this.tip.textContent = col.x0 + '–' + col.x1 + ' s' +
				(col.time ? ' (' + col.time + ')' : '') + ': ' + h.ranges[s] + ': ' +
				(cell ? cell[2] : '0');
			this.tip.style.left = Math.min(x + 12, r.width - 260) + 'px';
			this.tip.style.top = (y + 12) + 'px';
			this.tip.hidden = false;
		}
	}

	function histChart(canvas, key) {
		return new Chart(canvas, {
			type: 'bar',
			data: { labels: [], datasets: [
				{ label: 'whole run', data: [], backgroundColor: COLORS.run },
				{ label: 'last interval', data: [], backgroundColor: COLORS.last },
			] },
			options: {
				responsive: true, maintainAspectRatio: false, animation: false,
				scales: {
					x: { title: { display: true, text: AXIS[key] } },
					y: { type: 'logarithmic', min: 0.5,
						title: { display: true, text: 'count (log scale)' } },
				},
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
				line('retries/s (right axis)', COLORS.retried, 'y1'),
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
						title: { display: true, text: 'writes/s, retries/s' } },
				},
			},
		});
	}

	// A table from the view's columns and rows of cells, as they are. The
	// live page appends to the rows' array in place (live.js): only the
	// rows it does not show yet are added; any other array is drawn anew.
	function fillTable(table, t) {
		const head = table.tHead.rows[0];
		if (head.cells.length !== t.columns.length) {
			head.textContent = '';
			for (const c of t.columns)
				head.appendChild(document.createElement('th')).textContent = c;
		}
		const tb = table.tBodies[0];
		let from = 0;
		if (table.drawnRows === t.rows && tb.rows.length <= t.rows.length)
			from = tb.rows.length;
		else
			tb.textContent = '';
		table.drawnRows = t.rows;
		for (const r of t.rows.slice(from)) {
			const tr = tb.insertRow();
			for (const c of r)
				tr.insertCell().textContent = c;
		}
	}
	function tableCells(table) {
		return Array.from(table.tBodies[0].rows, tr => Array.from(tr.cells, td => td.textContent));
	}

	function create(opts) {
		Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", sans-serif';
		Chart.defaults.animation = false;
		const charts = { rates: ratesChart(el('rates')) };
		for (const k of HISTS)
			charts[k] = histChart(el(k), k);
		const heatmap = new Heatmap(el('heatmap'), el('heat-tip'));
		const state = { heatKey: el('heat-key').value, renders: 0, snap: null };
		const dash = { charts: charts, heatmap: heatmap, state: state };

		el('heat-key').addEventListener('change', e => {
			state.heatKey = e.target.value;
			if (state.snap)
				dash.draw(state.snap);
		});
		root.addEventListener('resize', () => { if (state.snap) dash.draw(state.snap); });

		dash.status = function (text, cls) {
			const s = el('status');
			s.textContent = text;
			s.className = cls || '';
		};

		dash.draw = function (v) {
			state.snap = v;
			state.renders++;
			fillTable(el('locks'), v.locks);
			el('locks-secs').textContent = v.locks.seconds + ' s';
			el('lost').textContent = v.lost;
			el('walk').hidden = !v.walk;
			el('walk').textContent = v.walk || '';
			el('self-cost').hidden = !v.self_cost;
			el('self-cost').textContent = v.self_cost || '';
			el('skipped').textContent = v.skipped;
			el('skipped').className = Object.values(v.skipped_counts).some(n => n > 0)
				? 'guide warn' : 'guide';
			el('incomplete').hidden = !v.incomplete;
			el('incomplete').textContent = v.incomplete || '';
			const w = v.workload;
			el('workload').hidden = !w;
			if (w) {
				el('workload-command').textContent = w.command;
				el('workload-ended').textContent = w.ended;
				el('workload-ended').className = w.failed ? 'unit warn' : 'unit';
				el('workload-note').textContent = w.output_note || '';
				el('workload-output').textContent = w.output.join('\n');
			}
			el('detail-lock').textContent = v.detail.lock || '–';
			el('detail-why').textContent = v.detail.why || '';
			const dl = el('numbers');
			dl.textContent = '';
			for (const [k, val] of v.numbers) {
				const d = dl.appendChild(document.createElement('div'));
				d.appendChild(document.createElement('dt')).textContent = k;
				d.appendChild(document.createElement('dd')).textContent = val;
			}
			fillTable(el('rows'), v.rows);
			fillTable(el('pairs'), v.pairs);
			el('pairs-note').hidden = !v.pairs.note && !v.pairs.more;
			el('pairs-note').textContent = v.pairs.note ||
				(v.pairs.more ? v.pairs.more + ' more pairs' : '');
			fillTable(el('callers'), v.callers);
			el('callers-note').hidden = !v.callers.note && !v.callers.more;
			el('callers-note').textContent = v.callers.note ||
				(v.callers.more ? v.callers.more + ' more call sites' : '');

			const r = charts.rates, s = v.series;
			const pts = a => a.map(p => ({ x: p[0], y: p[1] }));
			r.data.datasets[0].data = pts(s.reads);
			r.data.datasets[1].data = pts(s.writes);
			r.data.datasets[2].data = pts(s.adjtimex);
			r.data.datasets[3].data = pts(s.retried);
			r.options.scales.x.max = s.xmax;
			r.update('none');
			el('rates-note').hidden = s.reads.length > 0;
			for (const k of HISTS) {
				const h = v.hists[k], c = charts[k];
				c.data.labels = h.labels;
				c.data.datasets[0].data = h.run;
				c.data.datasets[1].data = h.last;
				c.update('none');
			}
			heatmap.draw(v.heat[state.heatKey], state.heatKey, s.xmax);
			const st = v.status || {};
			el('feed-alert').hidden = !st.stall;
			el('feed-alert').textContent = st.stall || '';
			el('frlock-summary').textContent = JSON.stringify(dash.summary());
		};

		// What the page shows, read back from the DOM and the charts: the
		// tests compare it with the view.
		dash.summary = function () {
			const v = state.snap;
			const hist = k => ({
				labels: charts[k].data.labels.slice(),
				run: charts[k].data.datasets[0].data.slice(),
				last: charts[k].data.datasets[1].data.slice(),
			});
			const pts = i => charts.rates.data.datasets[i].data.map(p => [p.x, p.y]);
			const h = v && v.heat[state.heatKey];
			return {
				mode: opts.mode, renders: state.renders, ended: !!(v && v.ended),
				detail: el('detail-lock').textContent,
				locks: tableCells(el('locks')), rows: tableCells(el('rows')),
				callers: tableCells(el('callers')),
				pairs: tableCells(el('pairs')),
				headers: ['locks', 'rows', 'callers'].map(id =>
					Array.from(el(id).tHead.rows[0].cells, th => th.textContent)),
				lost: el('lost').textContent, skipped: el('skipped').textContent,
				walk: el('walk').hidden ? null : el('walk').textContent,
				skippedWarn: el('skipped').classList.contains('warn'),
				numbers: Array.from(el('numbers').children, d => [d.children[0].textContent,
					d.children[1].textContent]),
				hists: Object.fromEntries(HISTS.map(k => [k, hist(k)])),
				rates: { reads: pts(0), writes: pts(1), adjtimex: pts(2), retried: pts(3) },
				heat: h ? { key: state.heatKey, cols: h.cols.length, cells: h.cells,
					drawn: heatmap.drawn } : null,
				stall: el('feed-alert').hidden ? null : el('feed-alert').textContent,
				incomplete: el('incomplete').hidden ? null : el('incomplete').textContent,
				stream: opts.stream ? opts.stream() : null,
			};
		};
		return dash;
	}

	root.FrlockDashboard = { create: create, Heatmap: Heatmap };
})(window);
