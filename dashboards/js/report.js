// SPDX-License-Identifier: GPL-2.0
// The report: dashboards/report inlines the records in a JSON script
// element; they are drawn once, with the same model and charts.
(function () {
	'use strict';
	const dash = FrlockDashboard.create({ mode: 'report' });
	window.frlockDashboard = dash;
	const data = JSON.parse(document.getElementById('frlock-data').textContent);
	for (const r of data.records)
		dash.model.add(r);
	for (const r of data.rows || [])
		dash.model.addRow(r);
	dash.model.malformed = data.malformed;
	dash.model.skipped = data.skipped || '';
	dash.state.ended = true;
	document.getElementById('mode').textContent = 'report';
	dash.render();
	dash.status('report of ' + data.source + ' (' + data.records.length +
		' records), written ' + data.generated, 'ended');
})();
