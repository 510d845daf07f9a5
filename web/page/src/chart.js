// chart.js: the latency-over-time chart, hand-written SVG: one dot per sample, coloured by
// phase (idle, download, upload).
const NS = 'http://www.w3.org/2000/svg';
const COLOURS = { idle: '#888', down: '#2a7ae2', up: '#e2762a' };

function el(name, attrs) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  return e;
}

// samples: [{t (ms since start), ms, phase}]
export function drawChart(svg, samples) {
  const W = 600, H = 160, P = 30;
  svg.replaceChildren();
  svg.setAttribute('viewBox', `0 0 ${W} ${H}`);
  if (!samples.length) return;
  const tMax = Math.max(...samples.map((s) => s.t)) || 1;
  const yMax = Math.max(10, ...samples.map((s) => s.ms)) * 1.1;
  const x = (t) => P + (t / tMax) * (W - P - 5);
  const y = (ms) => H - P + 10 - (ms / yMax) * (H - P);
  svg.append(el('line', { x1: P, y1: y(0), x2: W - 5, y2: y(0), stroke: '#ccc' }));
  svg.append(el('line', { x1: P, y1: y(0), x2: P, y2: 5, stroke: '#ccc' }));
  for (const v of [0, yMax / 2, yMax]) {
    const lbl = el('text', { x: P - 4, y: y(v) + 4, 'text-anchor': 'end', 'font-size': 10 });
    lbl.textContent = Math.round(v);
    svg.append(lbl);
  }
  const axis = el('text', { x: W - 5, y: H - 2, 'text-anchor': 'end', 'font-size': 10 });
  axis.textContent = `${(tMax / 1000).toFixed(0)} s — latency (ms): idle, download, upload`;
  svg.append(axis);
  for (const s of samples)
    svg.append(el('circle', { cx: x(s.t), cy: y(s.ms), r: 2, fill: COLOURS[s.phase] }));
}
