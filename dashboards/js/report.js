// SPDX-License-Identifier: GPL-2.0
// The report: dashboards/report inlines the view's snapshot of the whole
// feed in a JSON script element; it is drawn once, by the same code.
(function () {
	'use strict';
	const dash = FrlockDashboard.create({ mode: 'report' });
	window.frlockDashboard = dash;
	const data = JSON.parse(document.getElementById('frlock-data').textContent);
	document.getElementById('mode').textContent = 'report';
	dash.draw(data.view);
	dash.status('report of ' + data.source + ', written ' + data.generated, 'ended');
})();
