// `npm run package` (issue 14): the single executable runs on its own. The test builds it, copies it ALONE into an
// empty directory (no node_modules, no dist/, no node on PATH, a fresh HOME so its addons are written out anew) and
// drives it there: --version, init, offline keys, serve with a worker thread (so the piscina worker file and the
// three native addons come from the executable's assets: koffi's by a pass of --malloc-trim-every; the worker's heap
// compaction by a pass of --compact-heap-every), the dashboard's files (assets too), an event tracked with the
// printed public key, an online CLI command against it, SIGTERM to a clean exit, and the directory reopened offline
// afterwards.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToEnd, startProgram, tempDir } from '../support/processes.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILT = join(ROOT, 'dist', 'audience');

let dir: { path: string; remove: () => Promise<void> };
let exe: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(ROOT, 'dist', 'cli', 'package', 'build.js')], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  dir = await tempDir('audience-package-');
  exe = join(dir.path, 'audience');
  await copyFile(BUILT, exe);
  // Nothing from this machine's Node setup: no PATH to node, no NODE_OPTIONS, a HOME of its own.
  env = { HOME: dir.path, PATH: '/usr/bin:/bin', LANG: 'C.UTF-8' };
}, 180_000);

afterAll(async () => {
  await dir?.remove();
});

const run = (args: readonly string[]) => runToEnd(startProgram(exe, args, env, dir.path));

describe('the single executable', () => {
  it('runs init, offline keys and --version from an empty directory', async () => {
    expect(await readdir(dir.path)).toEqual(['audience']);
    const version = await run(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);

    const init = await run(['init', '--data', 'offline', '--json']);
    expect(init.code, init.stderr).toBe(0);
    const keys = JSON.parse(init.stdout) as { public_key: string; workspace_id: string };
    const created = await run(['keys', 'create', '--data', 'offline', '--workspace', keys.workspace_id, '--type', 'public', '--name', 'site', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const listed = await run(['keys', 'list', '--data', 'offline', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('site');
  });

  it('serves from an empty directory with a worker thread, and stops on SIGTERM', async () => {
    const server = startProgram(exe, ['serve', '--data', 'data', '--port', '0', '--threads', '1', '--malloc-trim-every', '1', '--compact-heap-every', '1', '--log-level', 'debug'], env, dir.path);
    try {
      const [, publicKey] = await server.waitFor(/public key:\s+(\S+)/);
      const [, privateKey] = await server.waitFor(/private key[^:]*:\s+(\S+)/);
      const [, url] = await server.waitFor(/listening on (http:\/\/\S+)/);
      // koffi's addon, written out and loaded: glibc's malloc_trim called (server/malloc-trim.ts).
      if (process.platform === 'linux') await server.waitFor(/"level":"debug".*malloc_trim: \d+\.\d ms/);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      // The dashboard's files come from the executable's assets too.
      const dashboard = await fetch(`${url}/dashboard`);
      expect(dashboard.status).toBe(200);
      expect(await dashboard.text()).toContain('/dashboard/app.js');
      expect((await fetch(`${url}/dashboard/app.js`)).status).toBe(200);

      const tracked = await fetch(`${url}/v2.0/events?k=${publicKey}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ user_id: randomUUID(), name: 'Pageview', properties: {} }) });
      expect(tracked.status, await tracked.clone().text()).toBe(200);

      await writeFile(join(dir.path, 'viewers.json'), '{"event":"Pageview"}');
      const cohort = await run(['cohorts', 'create', '--url', url as string, '--key', privateKey as string, '--name', 'Viewers', '--query', 'viewers.json', '--json']);
      expect(cohort.code, cohort.stderr).toBe(0);
      expect(JSON.parse(cohort.stdout)).toMatchObject({ name: 'Viewers' });
      // A heap compaction pass, which sends the owner thread a task of its own: the bundled worker loads the
      // compaction code (server/heap-compaction.ts) and answers (a heap this small has nothing worth compacting).
      await server.waitFor(/"level":"debug".*heap compaction: none of 2 heaps had a quarter of its old space free/);
    } finally {
      server.child.kill('SIGTERM');
    }
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const reopened = await run(['keys', 'list', '--data', 'data', '--json']);
    expect(reopened.code, reopened.stderr).toBe(0);
  });
});
