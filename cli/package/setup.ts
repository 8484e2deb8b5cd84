// Imported first by main.ts, so it runs before any bundled module that loads a native addon or starts a worker
// (ES module imports evaluate in order): writes the assets out and tells the bundle's shims where they are.

import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { setWorkerFilename } from '../../server/ingest/worker/executor.js';
import { loadAddon, writeOutAssets, type SeaAssets } from './natives.js';

/** Set by the build (esbuild `define`): the content hash of the embedded assets. */
declare const AUDIENCE_ASSETS_BUILD: string;

// node:sea exists only inside a single executable (and in Node versions that have it).
const sea = createRequire(process.execPath)('node:sea') as SeaAssets & { isSea(): boolean };
if (!sea.isSea()) throw new Error('cli/package/main.js runs only inside the single executable built by `npm run package`');
const paths = writeOutAssets(sea, AUDIENCE_ASSETS_BUILD);
const natives = globalThis as { __audienceNative?: Record<string, () => unknown>; __audiencePiscinaWorker?: string };
natives.__audienceNative = { uws: () => loadAddon(paths.uws), classicLevel: () => loadAddon(paths.classicLevel), koffi: () => loadAddon(paths.koffi) };
// piscina starts each thread on its own worker.js, which then loads the task file: here one file is both (worker.ts).
natives.__audiencePiscinaWorker = paths.worker;
setWorkerFilename(paths.worker);
// The dashboard's static files (server/routes/dashboard.ts serves them from here).
globalThis.__audienceDashboardDir = dirname(paths.dashboardHtml);
