// load.js: sustained parallel transfers, one direction at a time, so the bottleneck's queue
// fills (a sequence of single transfers rarely does). Streams stay below the browser's six
// connections per host, leaving one connection for the latency samples.
//
// Each stream records marks {t (ms), bytes (cumulative)} of bytes that have *arrived*: a
// download counts what the reader got; an upload counts a request's body only when the daemon
// has answered it, i.e. received all of it. (XHR upload progress counts bytes handed to the
// socket, which runs ahead of the bottleneck by the send buffer and the queue itself.)

export const STREAMS = 4;
const DOWN_BYTES = 50e6;       // per request; streams re-request until the phase ends
const UP_FIRST = 256 * 1024;   // first upload request of a stream
const UP_TARGET_MS = 3000;     // later ones are sized to take about this long
const UP_MIN = 64 * 1024, UP_MAX = 32 * 1024 * 1024;

function downStream(base, signal, marks) {
  let bytes = 0;
  return (async () => {
    while (!signal.aborted) {
      const res = await fetch(new URL(`__down?bytes=${DOWN_BYTES}`, base), { cache: 'no-store', signal });
      const reader = res.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        bytes += value.byteLength;
        marks.push({ t: performance.now(), bytes });
      }
    }
  })().catch(() => {});
}

function upOne(base, signal, size) {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', new URL('__up', base));
    xhr.onloadend = () => resolve(xhr.status === 200);
    signal.addEventListener('abort', () => xhr.abort(), { once: true });
    xhr.send(new Uint8Array(size));
  });
}

// Requests sized from the last one's duration: long enough that the gap between two (one round
// trip on this stream) is small, short enough that a phase sees several completions.
function upStream(base, signal, marks) {
  let bytes = 0, size = UP_FIRST;
  return (async () => {
    while (!signal.aborted) {
      const t0 = performance.now();
      if (!(await upOne(base, signal, size))) break;
      const t1 = performance.now();
      bytes += size;
      marks.push({ t: t1, bytes });
      size = Math.round(Math.min(UP_MAX, Math.max(UP_MIN, (size * UP_TARGET_MS) / Math.max(1, t1 - t0))));
    }
  })();
}

// Runs `dir` ('down' | 'up') for durationMs. Returns one array of marks per stream, each
// starting at {t: start, bytes: 0}.
export async function runLoad(base, dir, durationMs) {
  const ctl = new AbortController();
  const start = performance.now();
  const marks = Array.from({ length: STREAMS }, () => [{ t: start, bytes: 0 }]);
  const run = dir === 'down' ? downStream : upStream;
  const streams = marks.map((m) => run(base, ctl.signal, m));
  await new Promise((r) => setTimeout(r, durationMs));
  ctl.abort();
  await Promise.all(streams);
  return marks;
}
