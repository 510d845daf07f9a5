// grade_check.mjs: the page's grade bands and advice (web/page/src/verdict.js) must be the CLI's.
// Reads the bands out of client/analysis/analysis.c (analysis_grade) and compares the tables,
// then checks the overall grade (worse direction) and the advice wording against verdict.c.
// Usage: node grade_check.mjs SOURCE_DIR
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const src = process.argv[2];
const fail = (msg) => { console.error(`grade_check: ${msg}`); process.exit(1); };
const c = readFileSync(join(src, 'client/analysis/analysis.c'), 'utf8');
const body = c.match(/const char \*analysis_grade\(double increase_ms\)\n\{([\s\S]*?)\n\}/);
if (!body) fail('analysis_grade not found in client/analysis/analysis.c');
const cBands = [...body[1].matchAll(/if \(increase_ms < ([0-9.]+)\)\s*return "([A-F+]+)";/g)]
  .map((m) => [Number(m[1]), m[2]]);
const last = body[1].match(/return "([A-F+]+)";\s*$/);
const v = await import(pathToFileURL(join(src, 'web/page/src/verdict.js')).href);
if (JSON.stringify(cBands) !== JSON.stringify(v.GRADE_BANDS))
  fail(`bands differ: CLI ${JSON.stringify(cBands)} page ${JSON.stringify(v.GRADE_BANDS)}`);
if (!last || v.grade(1e9) !== last[1]) fail(`past the last band: CLI ${last && last[1]} page ${v.grade(1e9)}`);
// Each boundary: just below gets the band, at it the next (bands are exclusive above).
for (let i = 0; i < cBands.length; i++) {
  const next = i + 1 < cBands.length ? cBands[i + 1][1] : last[1];
  if (v.grade(cBands[i][0] - 0.001) !== cBands[i][1] || v.grade(cBands[i][0]) !== next)
    fail(`boundary ${cBands[i][0]} ms graded differently`);
}
if (v.grade(NaN) !== null || v.grade(null) !== null) fail('unmeasured increase must give no grade');
if (v.overallGrade(3, 250) !== 'D' || v.overallGrade(250, 3) !== 'D' || v.overallGrade(null, 40) !== 'B')
  fail('overall grade must come from the worse direction');
const verdict = readFileSync(join(src, 'client/report/verdict.c'), 'utf8');
for (const phrase of ['no bufferbloat to fix', 'with SQM (cake or fq_codel)'])
  if (!verdict.includes(phrase)) fail(`verdict.c no longer says "${phrase}"`);
if (v.advice('A', 10, 2) !== 'no bufferbloat to fix') fail('grade A must give no advice to shape');
const adv = v.advice('C', 19.1, 4.78);
const want = `shape to ${(0.9 * 19.1 * 1500 / 1448).toFixed(1)} down / ${(0.9 * 4.78 * 1500 / 1448).toFixed(1)} up Mbit/s with SQM (cake or fq_codel)`;
if (adv !== want) fail(`advice "${adv}", want "${want}"`);
console.log('grade_check: page and CLI grade bands and advice agree');
