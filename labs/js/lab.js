// SPDX-License-Identifier: GPL-2.0
// A lab's report: host/frlock/labs.py inlines its charts' data (already worked out
// from the run) in a JSON script element; this draws them with Chart.js,
// once, and marks the page drawn (#lab-drawn) for the browser test.
(function () {
	'use strict';
	const colours = ['#3b78c2', '#e67e22', '#2e8b57', '#c0392b', '#8e44ad', '#7f8c8d'];
	const data = JSON.parse(document.getElementById('lab-data').textContent);
	let drawn = 0;
	for (const c of data.charts) {
		const canvas = document.getElementById('chart-' + c.id);
		if (!canvas)
			throw new Error('no canvas for chart ' + c.id);
		const scale = (log, title, stacked) => ({
			type: log ? 'logarithmic' : 'linear',
			stacked: !!stacked,
			title: { display: !!title, text: title || '' },
		});
		const datasets = c.datasets.map((d, i) => ({
			label: d.label,
			data: d.data,
			showLine: !!d.showLine,
			borderDash: d.dash ? [6, 4] : [],
			backgroundColor: colours[i % colours.length],
			borderColor: colours[i % colours.length],
			pointRadius: 4,
		}));
		const x = c.type === 'scatter' ? scale(c.xlog, c.xtitle) :
			{ type: 'category', stacked: !!c.stacked,
			  title: { display: !!c.xtitle, text: c.xtitle || '' } };
		new Chart(canvas, {
			type: c.type,
			data: { labels: c.labels, datasets: datasets },
			options: {
				animation: false,
				maintainAspectRatio: false,
				scales: { x: x, y: scale(c.ylog, c.ytitle, c.stacked) },
				plugins: { legend: { display: true } },
			},
		});
		drawn++;
	}
	const mark = document.createElement('p');
	mark.id = 'lab-drawn';
	mark.hidden = true;
	mark.textContent = String(drawn);
	document.body.appendChild(mark);
})();
