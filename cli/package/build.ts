// `npm run package`: builds dist/audience, ONE executable in Node's single executable application format (SEA) that
// runs every command on a machine with no Node and no node_modules. Steps: esbuild bundles the worker file and the
// CLI (from dist/, what the tests run) into CommonJS, with four shims (uWebSockets.js, classic-level and koffi load
// their addons from the written-out assets, piscina starts its threads on the written-out worker file); node writes
// the SEA blob (script + assets: the three addons for this platform and Node ABI, and the worker); postject injects it
// into a copy of this node binary. The addons are this machine's: the executable runs where this node runs.

import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { ASSETS } from './natives.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DIST = join(ROOT, 'dist');
const OUT = join(DIST, 'package');
const EXECUTABLE = join(DIST, process.platform === 'win32' ? 'audience.exe' : 'audience');
/** The fuse node's SEA support looks for (documented with postject in Node's SEA guide). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

const require = createRequire(join(ROOT, 'package.json'));

/** Optional native helpers the bundled libraries try and do without (msgpackr, ws, piscina). */
const OPTIONAL = ['msgpackr-extract', 'bufferutil', 'utf-8-validate', '@napi-rs/nice'];

/** A dependency's folder (some packages' `exports` hide their package.json from require.resolve). */
function packageDir(name: string): string {
  const dir = join(ROOT, 'node_modules', name);
  if (!existsSync(join(dir, 'package.json'))) throw new Error(`${name} is not installed under ${ROOT}/node_modules: run npm install`);
  return dir;
}

/**
 * The addon files for this platform and this node's ABI, exactly as the packages themselves would pick them (koffi's:
 * its glibc build on Linux, what server/malloc-trim.ts calls into).
 */
function addonPaths(): { uws: string; classicLevel: string; koffi: string } {
  const uws = join(packageDir('uWebSockets.js'), 'dist', 'bin', `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`);
  const nodeGypBuild = require('node-gyp-build') as { path(dir: string): string };
  const classicLevel = nodeGypBuild.path(packageDir('classic-level'));
  const koffi = join(packageDir(`@koromix/koffi-${process.platform}-${process.arch}`), `${process.platform}_${process.arch}`, 'koffi.node');
  if (!existsSync(koffi)) throw new Error(`${koffi} is missing: run npm install`);
  return { uws, classicLevel, koffi };
}

/**
 * Replaces each `from` by its `to` in one file of a package as esbuild loads it; fails the build if a `from` is not
 * there.
 */
function patch(name: string, file: RegExp, edits: ReadonlyArray<readonly [from: string, to: string]>): Plugin {
  return {
    name,
    setup(b) {
      b.onLoad({ filter: file }, (args) => {
        let text = readFileSync(args.path, 'utf8');
        for (const [from, to] of edits) {
          if (!text.includes(from)) throw new Error(`${name}: "${from}" is not in ${args.path} any more; update cli/package/build.ts`);
          text = text.replace(from, to);
        }
        return { contents: text, loader: 'js' };
      });
    },
  };
}

/** A module of the bundle answered by a few lines of CommonJS instead of a file. */
function virtual(name: string, specifier: RegExp, contents: string): Plugin {
  return {
    name,
    setup(b) {
      b.onResolve({ filter: specifier }, (args) => ({ path: args.path, namespace: name }));
      b.onLoad({ filter: /.*/, namespace: name }, () => ({ contents, loader: 'js' }));
    },
  };
}

/** The optional helpers are left out: requiring one fails as a missing module does, and the library goes without. */
const absent: Plugin = {
  name: 'audience-optional-absent',
  setup(b) {
    const filter = new RegExp(`^(${OPTIONAL.map((name) => name.replace(/[/.@-]/g, (c) => `\\${c}`)).join('|')})$`);
    b.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'audience-absent' }));
    b.onLoad({ filter: /.*/, namespace: 'audience-absent' }, (args) => ({
      contents: `throw Object.assign(new Error(${JSON.stringify(`Cannot find module '${args.path}'`)}), { code: 'MODULE_NOT_FOUND' });`,
      loader: 'js',
    }));
  },
};

const shims: Plugin[] = [
  absent,
  // uWebSockets.js (uws-pack) requires its .node file next to itself: the executable has it written out (setup.ts).
  virtual('audience-uws', /^uWebSockets\.js$/, 'module.exports = globalThis.__audienceNative.uws();'),
  // classic-level finds its addon with node-gyp-build under its own folder; same answer, from the written-out file.
  patch('audience-classic-level', /classic-level[\\/]binding\.js$/, [["require('node-gyp-build')(__dirname)", 'globalThis.__audienceNative.classicLevel()']]),
  // koffi looks for its addon in its per-platform package or beside itself (a require made from import.meta.url,
  // which a CommonJS bundle has not); same answer, from the written-out file.
  patch('audience-koffi', /koffi[\\/]src[\\/]koffi[\\/]index\.js$/, [
    ['createRequire(import.meta.url)', 'createRequire(__filename)'],
    ['loadStatic(pkg) ?? loadDynamic(import.meta.dirname, pkg, triplets)', 'globalThis.__audienceNative.koffi()'],
  ]),
  patch('audience-koffi-static', /koffi[\\/]src[\\/]koffi[\\/]src[\\/]static\.js$/, [['createRequire(import.meta.url)', 'createRequire(__filename)']]),
  // piscina starts every thread on its own worker.js beside it; the executable's worker file is that host too.
  patch('audience-piscina', /piscina[\\/]dist[\\/]index\.js$/, [["(0, node_path_1.resolve)(__dirname, 'worker.js')", 'globalThis.__audiencePiscinaWorker']]),
];

async function bundle(entry: string, outfile: string, plugins: Plugin[], define: Record<string, string> = {}): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: `node${process.versions.node.split('.')[0]}`,
    plugins,
    define,
    logLevel: 'warning',
    // Bundled ESM that reads import.meta.url is either shimmed above or never reached in the executable.
    logOverride: { 'empty-import-meta': 'silent' },
  });
}

function sha256(...files: string[]): string {
  const hash = createHash('sha256');
  for (const file of files) hash.update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

async function main(): Promise<void> {
  const started = Date.now();
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const addons = addonPaths();

  // The worker file: piscina's host and the owners' task in one (cli/package/worker.ts).
  const workerFile = join(OUT, ASSETS.worker);
  const host = join(packageDir('piscina'), 'dist', 'worker.js');
  await bundle(join(DIST, 'cli', 'package', 'worker.js'), workerFile, [
    absent,
    {
      name: 'audience-piscina-host',
      setup(b) {
        b.onResolve({ filter: /^audience-piscina-worker-host$/ }, () => ({ path: host }));
      },
    },
  ]);

  // The assets' content names the directory they are written to, so a new build never reuses an old build's files.
  const dashboard = {
    [ASSETS.dashboardHtml]: join(DIST, 'dashboard', 'index.html'),
    [ASSETS.dashboardJs]: join(DIST, 'dashboard', 'app.js'),
    [ASSETS.dashboardMap]: join(DIST, 'dashboard', 'app.js.map'),
    [ASSETS.dashboardCss]: join(DIST, 'dashboard', 'app.css'),
  };
  for (const file of Object.values(dashboard)) if (!existsSync(file)) throw new Error(`${file} is missing: run npm run build first`);
  const assetsBuild = `${version}-${sha256(workerFile, addons.uws, addons.classicLevel, addons.koffi, ...Object.values(dashboard))}`;
  const script = join(OUT, 'audience.cjs');
  await bundle(join(DIST, 'cli', 'package', 'main.js'), script, shims, {
    AUDIENCE_PACKAGE_VERSION: JSON.stringify(version),
    AUDIENCE_ASSETS_BUILD: JSON.stringify(assetsBuild),
  });

  const blob = join(OUT, 'sea-prep.blob');
  const config = join(OUT, 'sea-config.json');
  writeFileSync(
    config,
    JSON.stringify({
      main: script,
      output: blob,
      disableExperimentalSEAWarning: true,
      assets: { [ASSETS.uws]: addons.uws, [ASSETS.classicLevel]: addons.classicLevel, [ASSETS.koffi]: addons.koffi, [ASSETS.worker]: workerFile, ...dashboard },
    }),
  );
  execFileSync(process.execPath, ['--experimental-sea-config', config], { stdio: 'inherit' });

  rmSync(EXECUTABLE, { force: true });
  copyFileSync(process.execPath, EXECUTABLE);
  chmodSync(EXECUTABLE, 0o755);
  const { inject } = require('postject') as {
    inject(file: string, name: string, data: Buffer, options: { sentinelFuse: string; machoSegmentName?: string }): Promise<void>;
  };
  await inject(EXECUTABLE, 'NODE_SEA_BLOB', readFileSync(blob), {
    sentinelFuse: SEA_FUSE,
    ...(process.platform === 'darwin' && { machoSegmentName: 'NODE_SEA' }),
  });
  const size = readFileSync(EXECUTABLE).byteLength;
  process.stdout.write(`built ${EXECUTABLE} (${(size / 1024 / 1024).toFixed(1)} MiB, node ${process.version}, ${process.platform}-${process.arch}) in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`package: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
