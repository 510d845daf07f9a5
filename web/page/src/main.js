// main.js: runs the test (idle, download, upload), shows the result and posts it to the daemon.
import { idleLatency } from './engine.js';
import { sampleDuring } from './latency.js';
import { runLoad, STREAMS } from './load.js';
import { median, rateMbps } from './stats.js';
import { grade, overallGrade, advice } from './verdict.js';
import { drawChart } from './chart.js';

const PHASE_MS = 10000;   // each load phase
const WARMUP_MS = 3000;   // the queue fills and TCP leaves slow start before we count
const SAMPLE_MS = 100;    // latency sample interval under load
const base = new URL('./', location.href);
const $ = (id) => document.getElementById(id);
const fmt = (v, d = 0) => (v === null || !Number.isFinite(v) ? '–' : v.toFixed(d));
const round1 = (v) => (v === null || !Number.isFinite(v) ? null : Math.round(v * 10) / 10);

async function loadPhase(dir, t0, samples, status) {
  status(`${dir === 'down' ? 'download' : 'upload'}: ${STREAMS} parallel transfers for ${PHASE_MS / 1000} s`);
  const lat = [];
  const start = performance.now();
  const stop = sampleDuring(base, SAMPLE_MS, (s) => {
    samples.push({ t: s.t - t0, ms: s.ms, phase: dir });
    if (s.t - start >= WARMUP_MS) lat.push(s.ms);
    drawChart($('chart'), samples);
  });
  const marks = await runLoad(base, dir, PHASE_MS);
  await stop();
  return { mbps: rateMbps(marks, start + WARMUP_MS, start + PHASE_MS), loaded: median(lat) };
}

export async function runTest(status = () => {}) {
  const t0 = performance.now();
  const samples = [];
  status('idle latency');
  const idlePts = await idleLatency(base);
  idlePts.forEach((ms, i) => samples.push({ t: i * 50, ms, phase: 'idle' }));
  const idle = median(idlePts);
  const down = await loadPhase('down', t0, samples, status);
  const up = await loadPhase('up', t0, samples, status);
  const inc = (p) => (p.loaded === null || idle === null ? null : Math.max(0, p.loaded - idle));
  const dInc = inc(down), uInc = inc(up);
  const g = overallGrade(dInc, uInc);
  return {
    result: {
      version: 1, grade: g, idle_ms: round1(idle),
      down: { mbps: round1(down.mbps), loaded_ms: round1(down.loaded), increase_ms: round1(dInc) },
      up: { mbps: round1(up.mbps), loaded_ms: round1(up.loaded), increase_ms: round1(uInc) },
      engine: 'bloatmeter-page/1 + @cloudflare/speedtest',
    },
    advice: advice(g, down.mbps, up.mbps),
    samples,
  };
}

function show(r, adv) {
  $('grade').textContent = r.grade ?? '?';
  $('grade').className = `grade g-${(r.grade ?? 'none').replace('+', 'p')}`;
  $('idle').textContent = fmt(r.idle_ms);
  for (const d of ['down', 'up']) {
    $(`${d}-mbps`).textContent = fmt(r[d].mbps, 1);
    $(`${d}-loaded`).textContent = fmt(r[d].loaded_ms);
    $(`${d}-inc`).textContent = `+${fmt(r[d].increase_ms)}`;
    $(`${d}-grade`).textContent = grade(r[d].increase_ms) ?? '–';
  }
  $('advice').textContent = adv ?? '';
}

async function post(result) {
  if (result.grade === null) return 'not posted: no grade';
  const res = await fetch(new URL('api/v1/results', base), {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(result),
  });
  return res.ok ? 'result saved' : `not saved: ${(await res.text()).trim()}`;
}

async function start() {
  const status = (s) => { $('status').textContent = s; };
  $('start').disabled = true;
  try {
    const { result, advice: adv } = await runTest(status);
    show(result, adv);
    status(await post(result).catch((e) => `not saved: ${e.message}`));
    window.bloatmeterResult = { ...result, advice: adv };
  } catch (e) {
    status(`test failed: ${e.message}`);
    window.bloatmeterResult = { error: e.message };
  } finally {
    $('start').disabled = false;
  }
}

$('start').addEventListener('click', start);
if (new URLSearchParams(location.search).has('autostart')) start();
