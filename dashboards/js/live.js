// SPDX-License-Identifier: GPL-2.0
// The live page: records arrive from the server by Server-Sent Events;
// the charts are redrawn once a second when something changed.
(function () {
	'use strict';
	const dash = FrlockDashboard.create({ mode: 'live' });
	window.frlockDashboard = dash;
	let instance = null, source = '', drawn = -1, malformed = 0;
	let lastEvent = Date.now();

	function describe() {
		const n = dash.model.counts.records;
		return n + ' records from ' + source;
	}
	let stats = {};
	function draw() {
		if (drawn === dash.model.version && dash.model.malformed === malformed &&
		    dash.model.skipped === (stats.skipped || '') &&
		    dash.model.stall === (stats.stall || null))
			return;
		dash.model.skipped = stats.skipped || '';
		dash.model.stall = stats.stall || null;
		dash.model.malformed = malformed;
		drawn = dash.model.version;
		dash.render();
	}

	dash.render();              // empty charts until the first records
	drawn = dash.model.version;

	const es = new EventSource('events');
	es.addEventListener('hello', e => {
		const h = JSON.parse(e.data);
		if (instance !== null && h.instance !== instance) {
			dash.model.reset();      // a new server: start over
			drawn = -1;
		}
		instance = h.instance;
		dash.model.rows = [];       // the server sends every row again
		drawn = -1;
		source = h.source;
		dash.status('live: following ' + source, 'ok');
	});
	es.addEventListener('records', e => {
		lastEvent = Date.now();
		for (const r of JSON.parse(e.data))
			dash.model.add(r);
		if (dash.state.renders === 1)
			draw();             // the first data at once, then every second
	});
	es.addEventListener('rows', e => {
		lastEvent = Date.now();
		for (const r of JSON.parse(e.data))
			dash.model.addRow(r);
		draw();
	});
	es.addEventListener('stats', e => {
		const s = JSON.parse(e.data);
		malformed = s.malformed;
		stats = s;
		if (s.error)
			dash.status('input error: ' + s.error, 'bad');
		draw();
	});
	es.addEventListener('end', e => {
		const s = JSON.parse(e.data);
		es.close();
		malformed = s.malformed;
		stats = s;
		dash.state.ended = true;
		draw();
		dash.status((s.stopped ? 'server stopped: ' : 'input ended: ') +
			describe(), 'ended');
		el_summary();
	});
	es.onerror = () => {
		if (!dash.state.ended)
			dash.status('connection lost, retrying…', 'bad');
	};
	function el_summary() {
		document.getElementById('frlock-summary').textContent =
			JSON.stringify(dash.summary());
	}
	setInterval(() => {
		draw();
		if (!dash.state.ended && es.readyState === EventSource.OPEN)
			dash.status('live: ' + describe() + ', last data ' +
				Math.round((Date.now() - lastEvent) / 1000) + ' s ago', 'ok');
	}, 1000);
})();
