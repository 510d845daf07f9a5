// load.js: sustained parallel transfers, one direction at a time, so the bottleneck's queue
// fills (a sequence of single transfers rarely does). Streams stay below the browser's six
// connections per host, leaving one connection for the latency samples.

export const STREAMS = 4;
const DOWN_BYTES = 50e6;  // per request; streams re-request until the phase ends
const UP_BYTES = 2e6;

function downStream(base, signal, count) {
  return (async () => {
    while (!signal.aborted) {
      const res = await fetch(new URL(`__down?bytes=${DOWN_BYTES}`, base), { cache: 'no-store', signal });
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        count(value.byteLength);
      }
    }
  })().catch(() => {});
}

// XHR, not fetch: only XHR reports upload progress while the body is being sent.
function upStream(base, signal, count) {
  const body = new Uint8Array(UP_BYTES);
  return (async () => {
    while (!signal.aborted) {
      await new Promise((resolve) => {
        const xhr = new XMLHttpRequest();
        let last = 0;
        xhr.open('POST', new URL('__up', base));
        xhr.upload.onprogress = (e) => { count(e.loaded - last); last = e.loaded; };
        xhr.onloadend = resolve;
        signal.addEventListener('abort', () => xhr.abort(), { once: true });
        xhr.send(body);
      });
    }
  })();
}

// Runs `dir` ('down' | 'up') for durationMs; marks gets cumulative byte counts over time.
export async function runLoad(base, dir, durationMs, marks) {
  const ctl = new AbortController();
  let bytes = 0;
  const count = (n) => { bytes += n; marks.push({ t: performance.now(), bytes }); };
  const start = dir === 'down' ? downStream : upStream;
  const streams = Array.from({ length: STREAMS }, () => start(base, ctl.signal, count));
  await new Promise((r) => setTimeout(r, durationMs));
  ctl.abort();
  await Promise.all(streams);
}
