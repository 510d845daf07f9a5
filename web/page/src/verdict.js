// verdict.js: the grade bands, the overall grade and the shaper advice. Mirrors the CLI exactly:
// client/analysis/analysis.c (analysis_grade, analysis_grades, analysis_advice) and
// client/report/verdict.c (verdict_advice); tests/browser/grade_check.mjs compares the tables.

// Upper bounds (exclusive) of each band, in ms of latency increase; past the last: F.
export const GRADE_BANDS = [[5, 'A+'], [30, 'A'], [60, 'B'], [200, 'C'], [400, 'D']];

export function grade(increaseMs) {
  if (increaseMs === null || !Number.isFinite(increaseMs)) return null;
  for (const [below, g] of GRADE_BANDS) if (increaseMs < below) return g;
  return 'F';
}

// Overall: from the worse of the two directions, like analysis_grades.
export function overallGrade(downInc, upInc) {
  const vals = [downInc, upInc].filter((v) => v !== null && Number.isFinite(v));
  return vals.length ? grade(Math.max(...vals)) : null;
}

// Goodput to IP-level rate: a browser cannot read the MSS, so assume the usual 1500-byte MTU
// with TCP timestamps (1448 payload bytes in 1500; the CLI measures it per connection).
export const IP_OVERHEAD = 1500 / 1448;

// Shaping a little below the bottleneck (90 % of the IP-level rate) moves the queue into the
// user's own, managed router.
export function advice(g, downMbps, upMbps) {
  if (g === null) return null;
  if (g === 'A+' || g === 'A') return 'no bufferbloat to fix';
  const d = Number.isFinite(downMbps) ? (0.9 * downMbps * IP_OVERHEAD).toFixed(1) : null;
  const u = Number.isFinite(upMbps) ? (0.9 * upMbps * IP_OVERHEAD).toFixed(1) : null;
  if (d === null && u === null) return 'shape the link a little below its rate with SQM (cake or fq_codel)';
  return `shape to ${d ?? '-'} down / ${u ?? '-'} up Mbit/s with SQM (cake or fq_codel)`;
}
