// What the single executable (`npm run package`) carries besides its script: native addons (uWebSockets.js,
// classic-level, koffi) and the partition owners' worker file. Node loads none of them from inside the executable, so
// they are written out once into a cache directory named by the build's content hash (concurrent starts are safe:
// each file is written under a temporary name, then renamed) and loaded from there: addons with process.dlopen, the
// worker by its path.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The asset names the build embeds (build.ts) and the runtime writes out; `dashboard/` files are dist/dashboard's. */
export const ASSETS = {
  uws: 'uws.node',
  classicLevel: 'classic-level.node',
  koffi: 'koffi.node',
  worker: 'worker.cjs',
  dashboardHtml: 'dashboard/index.html',
  dashboardJs: 'dashboard/app.js',
  dashboardMap: 'dashboard/app.js.map',
  dashboardCss: 'dashboard/app.css',
} as const;

export interface SeaAssets {
  getAsset(key: string): ArrayBuffer;
}

/** `AUDIENCE_NATIVE_DIR`, else `$XDG_CACHE_HOME/audience` or `~/.cache/audience`, else the temporary directory. */
function cacheRoot(): string {
  const chosen = process.env['AUDIENCE_NATIVE_DIR'];
  if (chosen !== undefined && chosen !== '') return chosen;
  const xdg = process.env['XDG_CACHE_HOME'];
  if (xdg !== undefined && xdg !== '') return join(xdg, 'audience');
  const home = homedir();
  return home === '' ? join(tmpdir(), 'audience') : join(home, '.cache', 'audience');
}

/** Writes every asset into `<cache>/<build>/` unless it is there already; answers each file's path by asset name. */
export function writeOutAssets(sea: SeaAssets, build: string): Record<keyof typeof ASSETS, string> {
  const dir = join(cacheRoot(), build);
  mkdirSync(dir, { recursive: true });
  const paths = {} as Record<keyof typeof ASSETS, string>;
  for (const [name, asset] of Object.entries(ASSETS) as [keyof typeof ASSETS, string][]) {
    const path = join(dir, asset);
    if (!existsSync(path)) {
      mkdirSync(dirname(path), { recursive: true });
      const temporary = `${path}.${process.pid}.${createHash('sha1').update(String(Math.random())).digest('hex').slice(0, 8)}`;
      writeFileSync(temporary, new Uint8Array(sea.getAsset(asset)), { mode: 0o755 });
      renameSync(temporary, path);
    }
    paths[name] = path;
  }
  return paths;
}

/** Loads a native addon from a file (what `require` of a .node file does, which the executable's script cannot). */
export function loadAddon(path: string): unknown {
  const module = { exports: {} as unknown };
  process.dlopen(module, path);
  return module.exports;
}
