// stats.js: percentiles and rates over the samples the load and latency modules collect.

export function percentile(values, p) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1));
  return s[i];
}

export const median = (values) => percentile(values, 0.5);

// A stream's cumulative bytes at time t, linear between its marks (t within them).
function bytesAt(marks, t) {
  let i = 1;
  while (i < marks.length - 1 && marks[i].t < t) i++;
  const a = marks[i - 1], b = marks[i];
  return b.t > a.t ? a.bytes + ((b.bytes - a.bytes) * (t - a.t)) / (b.t - a.t) : b.bytes;
}

// Mbit/s of all streams together from t0 to at most t1, from per-stream marks
// [[{t (ms), bytes (cumulative)}, ...], ...]. The window ends where every stream still has a
// mark (an upload's bytes are known only at its requests' ends), so no stream is extrapolated.
export function rateMbps(streams, t0, t1) {
  const live = streams.filter((m) => m.length >= 2);
  if (!live.length) return null;
  const end = Math.min(t1, ...live.map((m) => m[m.length - 1].t));
  if (!(end > t0)) return null;
  const bytes = live.reduce((sum, m) => sum + bytesAt(m, end) - bytesAt(m, t0), 0);
  return (bytes * 8) / ((end - t0) * 1000);
}
