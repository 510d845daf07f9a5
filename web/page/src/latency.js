// latency.js: one latency sample is a GET /__down?bytes=0, timed by the Resource Timing API
// (request sent to first response byte) less the server's own time from Server-Timing, so
// neither the browser's scheduling nor the daemon's work counts as network delay.

function serverMs(entry) {
  const st = (entry.serverTiming || []).find((s) => s.duration > 0);
  return st ? st.duration : 0;
}

let seq = 0;

export async function sampleLatency(base) {
  const url = new URL(`__down?bytes=0&lat=${Date.now()}-${seq++}`, base).href;
  const t0 = performance.now();
  const res = await fetch(url, { cache: 'no-store' });
  await res.arrayBuffer();
  const t1 = performance.now();
  const entry = performance.getEntriesByName(url).pop();
  performance.clearResourceTimings();
  // Without a usable entry (no Timing-Allow-Origin), fall back to the whole fetch.
  if (!entry || !(entry.responseStart > 0) || !(entry.requestStart > 0))
    return { t: t1, ms: t1 - t0 };
  return { t: t1, ms: Math.max(0, entry.responseStart - entry.requestStart - serverMs(entry)) };
}

// Samples every intervalMs until stop() is called; each sample goes to onSample.
export function sampleDuring(base, intervalMs, onSample) {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const started = performance.now();
      try {
        onSample(await sampleLatency(base));
      } catch (e) {
        /* a lost sample under load is not an error of the test */
      }
      const wait = intervalMs - (performance.now() - started);
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
  })();
  return async () => { stopped = true; await loop; };
}
