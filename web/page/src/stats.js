// stats.js: percentiles and rates over the samples the load and latency modules collect.

export function percentile(values, p) {
  if (!values.length) return null;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1));
  return s[i];
}

export const median = (values) => percentile(values, 0.5);

// Mbit/s from byte-count marks [{t (ms), bytes (cumulative)}] between t0 and t1.
export function rateMbps(marks, t0, t1) {
  const inWin = marks.filter((m) => m.t >= t0 && m.t <= t1);
  if (inWin.length < 2) return null;
  const a = inWin[0], b = inWin[inWin.length - 1];
  return b.t > a.t ? ((b.bytes - a.bytes) * 8) / ((b.t - a.t) * 1000) : null;
}
