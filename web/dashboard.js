/* dashboard.js: fetches the recent tests from the daemon's API (same origin, relative URL so
 * a reverse proxy may mount the dashboard under any path) and draws the table and the SVG
 * chart. Text goes in through textContent only; nothing from the API is parsed as HTML. */
'use strict';

const API = 'api/v1/tests?limit=100';
const REFRESH_MS = 10000;
const SVG_NS = 'http://www.w3.org/2000/svg';
const SERIES = [
	{ key: 'down-server', label: 'download (server, TCP RTT)',
	  get: (t) => t.server ? t.server.download_rtt_increase_ms : null },
	{ key: 'down-client', label: 'download (client)',
	  get: (t) => t.client_reported ? t.client_reported.latency_increase_ms.download : null },
	{ key: 'up-client', label: 'upload (client)',
	  get: (t) => t.client_reported ? t.client_reported.latency_increase_ms.upload : null },
];

function num(v) {
	return typeof v === 'number' && isFinite(v);
}

function fmtMs(v) {
	if (!num(v))
		return '–';
	if (Math.abs(v) < 0.05)
		v = 0; /* no "-0.0" */
	return (Math.abs(v) < 10 ? v.toFixed(1) : v.toFixed(0)) + ' ms';
}

function fmtRate(bps) {
	if (!num(bps))
		return '–';
	if (bps >= 1e9)
		return (bps / 1e9).toFixed(2) + ' Gbit/s';
	if (bps >= 1e6)
		return (bps / 1e6).toFixed(1) + ' Mbit/s';
	return (bps / 1e3).toFixed(0) + ' kbit/s';
}

function fmtTime(iso) {
	return typeof iso === 'string' ? iso.replace('T', ' ').replace(/\.\d+Z$/, '') : '–';
}

function cell(tr, text, cls) {
	const td = document.createElement('td');
	td.textContent = text;
	if (cls)
		td.className = cls;
	tr.appendChild(td);
	return td;
}

/* Throughput: the client's figure when it reported one, else the server's mean rate. */
function throughput(t, dir) {
	const c = t.client_reported;
	if (c && num(c.throughput_bps[dir]))
		return c.throughput_bps[dir];
	return t.rate_bps ? t.rate_bps[dir] : null;
}

function renderTable(tests) {
	const body = document.querySelector('#tests tbody');
	body.replaceChildren();
	if (tests.length === 0) {
		const tr = document.createElement('tr');
		cell(tr, 'No tests yet.', 'empty').colSpan = 10;
		body.appendChild(tr);
		return;
	}
	for (const t of tests) {
		const c = t.client_reported;
		const tr = document.createElement('tr');
		tr.dataset.id = String(t.id);
		cell(tr, fmtTime(t.start));
		cell(tr, t.client || '–');
		cell(tr, num(t.duration_s) ? t.duration_s.toFixed(1) + ' s' : '–', 'n');
		cell(tr, fmtRate(throughput(t, 'download')), 'n');
		cell(tr, fmtRate(throughput(t, 'upload')), 'n');
		cell(tr, c ? fmtMs(c.idle_latency_ms) : '–', 'n');
		cell(tr, fmtMs(t.server ? t.server.download_rtt_increase_ms : null) + ' / ' +
			 (c ? fmtMs(c.latency_increase_ms.download) : '–'), 'n');
		cell(tr, c ? fmtMs(c.latency_increase_ms.upload) : '–', 'n');
		cell(tr, c ? fmtMs(c.buffer_ms.download) + ' / ' + fmtMs(c.buffer_ms.upload) : '–', 'n');
		cell(tr, c && c.grade ? c.grade : '–', 'grade');
		body.appendChild(tr);
	}
}

function svgEl(name, attrs, text) {
	const e = document.createElementNS(SVG_NS, name);
	for (const [k, v] of Object.entries(attrs))
		e.setAttribute(k, String(v));
	if (text !== undefined)
		e.textContent = text;
	return e;
}

/* Latency increase per test over time, one line per series, oldest on the left. */
function renderChart(tests) {
	const W = 1100, H = 320, L = 60, R = 20, T = 20, B = 50;
	const box = document.getElementById('chart');
	const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img',
				   'aria-label': 'latency increase per test' });
	const pts = tests.slice().reverse().map((t) => ({ t: Date.parse(t.start), test: t }))
		.filter((p) => num(p.t));
	let t0 = Math.min(...pts.map((p) => p.t)), t1 = Math.max(...pts.map((p) => p.t));
	let ymax = 10;

	if (pts.length === 0) {
		t0 = Date.now() - 3600e3;
		t1 = Date.now();
	}
	if (t1 - t0 < 60e3) {
		t0 -= 30e3;
		t1 += 30e3;
	}
	for (const p of pts)
		for (const s of SERIES) {
			const v = s.get(p.test);
			if (num(v) && v > ymax)
				ymax = v;
		}
	ymax *= 1.1;
	const x = (t) => L + (t - t0) / (t1 - t0) * (W - L - R);
	const y = (v) => T + (1 - Math.max(v, 0) / ymax) * (H - T - B);

	svg.appendChild(svgEl('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
	svg.appendChild(svgEl('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
	for (let i = 0; i <= 4; i++) {
		const v = ymax * i / 4;
		svg.appendChild(svgEl('line', { class: 'axis', x1: L - 4, y1: y(v), x2: L, y2: y(v) }));
		svg.appendChild(svgEl('text', { x: L - 8, y: y(v) + 4, 'text-anchor': 'end' },
				      v.toFixed(v < 10 ? 1 : 0)));
	}
	svg.appendChild(svgEl('text', { x: 14, y: T + (H - T - B) / 2, 'text-anchor': 'middle',
					transform: `rotate(-90 14 ${T + (H - T - B) / 2})` }, 'ms'));
	/* Time labels: the clock within a day, the date too over longer spans. */
	const label = (t) => t1 - t0 < 86400e3 ? new Date(t).toISOString().slice(11, 19)
		: new Date(t).toISOString().slice(5, 16).replace('T', ' ');
	[['start', t0], ['middle', (t0 + t1) / 2], ['end', t1]].forEach(([anchor, t]) =>
		svg.appendChild(svgEl('text', { x: x(t), y: H - B + 18, 'text-anchor': anchor },
				      label(t))));
	SERIES.forEach((s, i) => {
		const line = pts.filter((p) => num(s.get(p.test)));
		if (line.length > 0) {
			const d = line.map((p, j) => (j ? 'L' : 'M') + x(p.t).toFixed(1) + ' ' +
					   y(s.get(p.test)).toFixed(1)).join(' ');
			svg.appendChild(svgEl('path', { class: 's-' + s.key, 'data-series': s.key, d: d }));
			for (const p of line)
				svg.appendChild(svgEl('circle', { class: 'dot-' + s.key, r: 3,
								  cx: x(p.t).toFixed(1),
								  cy: y(s.get(p.test)).toFixed(1) }));
		}
		const lx = L + 10 + i * 240;
		svg.appendChild(svgEl('line', { class: 's-' + s.key, x1: lx, y1: H - 12, x2: lx + 24,
						y2: H - 12 }));
		svg.appendChild(svgEl('text', { x: lx + 30, y: H - 8 }, s.label));
	});
	box.replaceChildren(svg);
}

async function refresh() {
	const status = document.getElementById('status');
	try {
		const r = await fetch(API, { cache: 'no-store' });
		if (!r.ok)
			throw new Error('HTTP ' + r.status);
		const tests = await r.json();
		if (!Array.isArray(tests))
			throw new Error('unexpected answer');
		renderTable(tests);
		renderChart(tests);
		status.className = 'status';
		status.textContent = `${tests.length} test(s); updated ${new Date().toISOString()
			.slice(11, 19)} UTC, every ${REFRESH_MS / 1000} s.`;
	} catch (e) {
		status.className = 'status error';
		status.textContent = 'Cannot load the tests: ' + e.message;
	}
}

refresh();
setInterval(refresh, REFRESH_MS);
