// Builds the dashboard's static files into dist/dashboard/ (run by `npm run build`, so by `npm install` too):
// esbuild bundles app/main.ts with preact, htm and uPlot into one minified app.js; app.css is uPlot's stylesheet
// and ours; index.html is copied. Nothing is fetched at run time: the page works with no network (issue 16).

import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const APP = join(ROOT, 'server', 'dashboard', 'app');
const OUT = join(ROOT, 'dist', 'dashboard');
const require = createRequire(join(ROOT, 'package.json'));

mkdirSync(OUT, { recursive: true });
await build({
  entryPoints: [join(APP, 'main.ts')],
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: true,
  sourcemap: true,
  outfile: join(OUT, 'app.js'),
  logLevel: 'warning',
});
const uplotCss = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');
writeFileSync(join(OUT, 'app.css'), uplotCss + '\n' + readFileSync(join(APP, 'style.css'), 'utf8'));
copyFileSync(join(APP, 'index.html'), join(OUT, 'index.html'));
