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
const UP_FIRST = 256 * 1024;   // first upload request of stream 0; stream k's is (1 + k/STREAMS) times it
const UP_TARGET_MS = 3000;     // later ones are sized to take about this long
const UP_MIN = 64 * 1024, UP_MAX = 32 * 1024 * 1024;
// Upload requests in flight at once: one per stream and one spare for a hand-over (below). With
// the latency samples' connection that is the browser's six per host.
const UP_SLOTS = STREAMS + 1;

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

// A counting semaphore: take() resolves once one of n slots is free, give() frees one.
function slots(n) {
  let free = n;
  const waiting = [];
  return {
    take: () => (free > 0 ? (free--, Promise.resolve()) : new Promise((r) => waiting.push(r))),
    give: () => { const w = waiting.shift(); if (w) w(); else free++; },
  };
}

// One POST of `size` bytes: `sent` resolves when the browser has handed the whole body to the
// socket (XHR upload load), `done` with true once the daemon has answered, i.e. received it all.
function upOne(base, signal, size) {
  const xhr = new XMLHttpRequest();
  const sent = new Promise((resolve) => { xhr.upload.onload = resolve; });
  const done = new Promise((resolve) => { xhr.onloadend = () => resolve(xhr.status === 200); });
  xhr.open('POST', new URL('__up', base));
  signal.addEventListener('abort', () => xhr.abort(), { once: true });
  xhr.send(new Uint8Array(size));
  return { sent, done };
}

// A stream of back-to-back requests that does not let its share of the queue drain between
// them. Waiting for one answer before sending the next request leaves the stream idle for a
// round trip, and the next request's connection may restart from a small window after idling.
// So when a request's body has left the browser (its last bytes still wait in the socket and
// in the bottleneck's queue) the stream starts its next request, on the spare slot, and the
// new connection grows its window while the old one drains. The streams' first requests differ
// in size, so their hand-overs come at different times and seldom wait for the one spare slot.
// Requests are sized from the stream's last rate: long enough that hand-overs are rare, short
// enough that a phase sees several completions (the marks the rate is computed from).
function upStream(base, signal, marks, pool, first) {
  let bytes = 0, rate = null;   // rate: bytes per ms of the last request that completed
  const launch = (size) => {
    const t0 = performance.now();
    const req = upOne(base, signal, size);
    const sentAt = req.sent.then(() => performance.now());
    const done = req.done.then((ok) => {
      const t1 = performance.now();
      pool.give();
      if (ok) {
        bytes += size;
        marks.push({ t: t1, bytes });
        rate = size / Math.max(1, t1 - t0);
      }
      return ok;
    });
    // Before any request completed, the time to hand over the body (≤ its whole duration)
    // gives an upper bound of the rate, hence a next request of at least the target length.
    const estimate = async () => rate ?? size / Math.max(1, (await sentAt) - t0);
    return { sent: req.sent.then(() => true), done, estimate };
  };
  return (async () => {
    await pool.take();
    let cur = launch(first);
    while (!signal.aborted) {
      if (!(await Promise.race([cur.sent, cur.done]))) break;
      const r = await Promise.race([cur.estimate(), cur.done.then(() => rate)]);
      await pool.take();   // the spare slot, or this stream's own once its request ends
      if (signal.aborted || r === null) { pool.give(); break; }
      cur = launch(Math.round(Math.min(UP_MAX, Math.max(UP_MIN, r * UP_TARGET_MS))));
    }
    await cur.done;
  })();
}

// Runs `dir` ('down' | 'up') for durationMs. Returns one array of marks per stream, each
// starting at {t: start, bytes: 0}.
export async function runLoad(base, dir, durationMs) {
  const ctl = new AbortController();
  const start = performance.now();
  const marks = Array.from({ length: STREAMS }, () => [{ t: start, bytes: 0 }]);
  const pool = slots(UP_SLOTS);
  const streams = marks.map((m, k) => (dir === 'down'
    ? downStream(base, ctl.signal, m)
    : upStream(base, ctl.signal, m, pool, Math.round(UP_FIRST * (1 + k / STREAMS)))));
  await new Promise((r) => setTimeout(r, durationMs));
  ctl.abort();
  await Promise.all(streams);
  return marks;
}
