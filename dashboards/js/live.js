// SPDX-License-Identifier: GPL-2.0
// The live page: the server sends the view's snapshot by Server-Sent
// Events whenever it changed; each is drawn as it comes.
(function () {
	'use strict';
	const dash = FrlockDashboard.create({ mode: 'live' });
	window.frlockDashboard = dash;
	let source = '', ended = false;

	const es = new EventSource('events');
	es.addEventListener('hello', e => {
		source = JSON.parse(e.data).source;
		dash.status('live: following ' + source, 'ok');
	});
	es.addEventListener('view', e => {
		const v = JSON.parse(e.data);
		dash.draw(v);
		const st = v.status;
		if (st.error)
			dash.status('input error: ' + st.error, 'bad');
		else if (!ended)
			dash.status('live: ' + st.lines + ' lines from ' + source, 'ok');
	});
	es.addEventListener('end', () => {
		ended = true;
		es.close();
		const st = dash.state.snap ? dash.state.snap.status : {};
		dash.status((st.stopped ? 'server stopped: ' : 'input ended: ') + st.lines +
			' lines from ' + source, 'ended');
		document.getElementById('frlock-summary').textContent =
			JSON.stringify(Object.assign(dash.summary(), { ended: true }));
	});
	es.onerror = () => {
		if (!ended)
			dash.status('connection lost, retrying…', 'bad');
	};
})();
