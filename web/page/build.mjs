// build.mjs: bundles the page into OUTDIR (index.html, app.js, app.css). Run by cmake/webpage.cmake
// in the build tree, where `npm ci` installed the pinned engine and esbuild.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [src, out] = process.argv.slice(2);
// The sources import from the build tree's node_modules, next to this script, not from a
// node_modules above SRCDIR (a clean checkout has none).
const modules = join(dirname(fileURLToPath(import.meta.url)), 'node_modules');
if (!src || !out) { console.error('usage: node build.mjs SRCDIR OUTDIR'); process.exit(2); }
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(src, 'main.js')], bundle: true, format: 'esm', minify: true,
  target: 'es2020', outfile: join(out, 'app.js'), logLevel: 'warning', legalComments: 'inline',
  nodePaths: [modules],
});
copyFileSync(join(src, 'index.html'), join(out, 'index.html'));
copyFileSync(join(src, 'app.css'), join(out, 'app.css'));
