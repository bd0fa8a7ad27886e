// SPDX-License-Identifier: GPL-2.0
// The live page: the server (host/frlock/server.py) sends by Server-Sent
// Events the whole document (the view's snapshot and the feed's status)
// first, then what changed: "append" to a list that grew, "set" for any
// other value. Each message is merged into the document and drawn; no
// figure is computed here. A message that does not apply to the document
// this page has (a gap in the sequence) makes it open a new stream, which
// starts with the whole document again.
(function () {
	'use strict';
	let source = '', ended = false, es = null;
	let doc = null, seq = null;
	const stream = { whole: 0, changes: 0, bytes: 0, resyncs: 0 };
	const dash = FrlockDashboard.create({ mode: 'live', stream: () => Object.assign({}, stream) });
	window.frlockDashboard = dash;

	// One op, at its path in the document: lists grow in place, so that the
	// tables add only their new rows (charts.js).
	function apply(op) {
		const [what, path, value] = op;
		let at = doc;
		for (const k of path.slice(0, -1))
			at = at[k];
		const last = path[path.length - 1];
		if (what === 'append')
			for (const item of value)
				at[last].push(item);
		else
			at[last] = value;
	}

	function onView(e) {
		const m = JSON.parse(e.data);
		stream.bytes += e.data.length;
		if (m.full) {
			doc = m.full;
			stream.whole++;
		} else if (doc !== null && m.base === seq) {
			m.ops.forEach(apply);
			stream.changes++;
		} else {
			stream.resyncs++;
			dash.status('missed an update (had ' + seq + ', got one for ' + m.base +
				'): asking for the whole view again', 'bad');
			connect();
			return;
		}
		seq = m.seq;
		dash.draw(doc);
		const st = doc.status;
		if (st.error)
			dash.status('input error: ' + st.error, 'bad');
		else if (!ended)
			dash.status('live: ' + st.lines + ' lines from ' + source, 'ok');
	}

	function onEnd() {
		ended = true;
		es.close();
		const st = doc ? doc.status : {};
		dash.status((st.stopped ? 'server stopped: ' : 'input ended: ') + st.lines +
			' lines from ' + source, 'ended');
		document.getElementById('frlock-summary').textContent =
			JSON.stringify(Object.assign(dash.summary(), { ended: true }));
	}

	// A new stream carries no Last-Event-ID: it starts with the whole document.
	function connect() {
		if (es)
			es.close();
		doc = seq = null;
		es = new EventSource('events');
		es.addEventListener('hello', e => {
			source = JSON.parse(e.data).source;
			dash.status('live: following ' + source, 'ok');
		});
		es.addEventListener('view', onView);
		es.addEventListener('end', onEnd);
		es.onerror = () => {
			if (!ended)
				dash.status('connection lost, retrying…', 'bad');
		};
	}
	connect();
})();
