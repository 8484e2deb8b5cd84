// `npm start` stops cleanly on SIGTERM (issue 14): npm forwards the signal to its script's process, so the start
// script `exec`s node (a `sh -c` in between would die and leave the server running, the data directory locked).
// Runs the repository's own start script, from a scratch directory holding a copy of package.json and dist/.

import { spawn } from 'node:child_process';
import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, tempDir } from '../support/processes.js';
import { waitUntil } from '../support/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('npm start', () => {
  it('stops on SIGTERM to npm: the server exits and the data directory can be opened again', async () => {
    const dir = await tempDir('audience-npm-start-');
    cleanups.push(dir.remove);
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    await writeFile(join(dir.path, 'package.json'), JSON.stringify({ name: 'audience-start-check', private: true, scripts: { start: pkg.scripts.start } }));
    await symlink(join(ROOT, 'dist'), join(dir.path, 'dist'));
    await symlink(join(ROOT, 'node_modules'), join(dir.path, 'node_modules'));
    const npm = spawn('npm', ['start'], { cwd: dir.path, env: { ...process.env, AUDIENCE_PORT: '0', AUDIENCE_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    let out = '';
    npm.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    cleanups.push(async () => {
      if (npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
    });
    await waitUntil(() => {
      if (npm.exitCode !== null) throw new Error(`npm start exited before listening: ${out}`);
      return /listening on http:\/\/\S+/.test(out);
    }, 'npm start to listen', 30_000);
    const url = (/listening on (http:\/\/\S+)/.exec(out) as RegExpExecArray)[1] as string;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    npm.kill('SIGTERM');
    await exited;
    // The server is gone (its port refuses) and its lock is released (the directory opens offline).
    await waitUntil(async () => (await runCliProcess(['keys', 'list', '--data', join(dir.path, 'data')])).code === 0, 'the data directory to open offline', 10_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});
