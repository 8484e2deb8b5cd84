// operations.md, second round: `audience --version` prints the package's version; every `serve` flag also reads an
// AUDIENCE_* environment variable (shown in --help) and the flag wins over it.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { startCli, tempDir, type RunningCli } from '../support/processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function serve(args: string[], env: Record<string, string>): RunningCli {
  const running = startCli(['serve', ...args], env);
  cleanups.push(async () => {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  });
  return running;
}

describe('version and environment variables', () => {
  it('--version prints package.json\'s version and exits 0', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const io = captureIo({ env: {} });
    expect(await runCli(['--version'], io)).toBe(0);
    expect(io.stdoutText()).toBe(`${version}\n`);
  });

  it('serve --help names the environment variable of every flag', async () => {
    const io = captureIo({ env: {} });
    expect(await runCli(['serve', '--help'], io)).toBe(0);
    for (const name of ['AUDIENCE_DATA', 'AUDIENCE_PORT', 'AUDIENCE_HOST', 'AUDIENCE_THREADS', 'AUDIENCE_FSYNC', 'AUDIENCE_STATE_CACHE_BYTES', 'AUDIENCE_DECODED_STATES', 'AUDIENCE_DELIVERY_HORIZON']) {
      expect(io.stdoutText().replace(/\s+/g, ' ')).toContain(`env: ${name}`);
    }
  });

  it('serve takes its data directory and port from the environment; a flag wins over its variable', async () => {
    const dir = await tempDir('audience-env-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    // AUDIENCE_HOST names an address nothing can listen on: the --host flag must win for the server to start.
    const running = serve(['--host', '127.0.0.1', '--threads', '0'], { AUDIENCE_DATA: data, AUDIENCE_PORT: '0', AUDIENCE_HOST: '203.0.113.1' });
    const match = await running.waitFor(/listening on (http:\/\/\S+)/);
    const url = match[1] as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(url.endsWith(':8080')).toBe(false);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
    // The data directory named by AUDIENCE_DATA was initialised.
    expect((await readFile(join(data, 'CURRENT'), 'utf8')).length).toBeGreaterThan(0);
  });
});
