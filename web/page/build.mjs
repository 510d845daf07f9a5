// build.mjs: bundles the page into OUTDIR (index.html, app.js, app.css). Run by cmake/webpage.cmake
// in the build tree, where `npm ci` installed the pinned engine and esbuild.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

const [src, out] = process.argv.slice(2);
if (!src || !out) { console.error('usage: node build.mjs SRCDIR OUTDIR'); process.exit(2); }
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(src, 'main.js')], bundle: true, format: 'esm', minify: true,
  target: 'es2020', outfile: join(out, 'app.js'), logLevel: 'warning', legalComments: 'inline',
});
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));
copyFileSync(join(src, 'app.css'), join(out, 'app.css'));
