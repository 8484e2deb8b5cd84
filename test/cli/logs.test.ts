// operations.md, second round: `serve` logs JSON lines on stdout, one per answered request at info (request id,
// method, route, status, duration; an error's code), at the level `--log-level` sets.

import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, tempDir, type RunningCli } from '../support/processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function serve(args: string[]): Promise<{ running: RunningCli; url: string }> {
  const dir = await tempDir('audience-logs-');
  cleanups.push(dir.remove);
  const running = startCli(['serve', '--data', `${dir.path}/data`, '--port', '0', '--threads', '0', ...args]);
  cleanups.push(async () => {
    if (running.child.exitCode === null && running.child.signalCode === null) {
      running.child.kill('SIGKILL');
      await running.exited;
    }
  });
  const match = await running.waitFor(/listening on (http:\/\/\S+)/);
  return { running, url: match[1] as string };
}

/** The JSON lines of stdout (the announcement and the first start's keys are plain text). */
function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout.split('\n').flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : []));
}

describe('JSON-line logs', () => {
  it('one line per request at info, with the request id, route, status, duration and an error code', async () => {
    const { running, url } = await serve([]);
    const ok = await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': '0f8fad5b-d9cb-469f-a165-70867728950e' } });
    expect(ok.status).toBe(200);
    const missing = await fetch(`${url}/cohorts-api/v2/cohorts`);
    expect(missing.status).toBe(401);
    await expect.poll(() => jsonLines(running.stdout()).filter((l) => l['msg'] === 'request').length, { timeout: 5000 }).toBe(2);
    const [health, refused] = jsonLines(running.stdout()).filter((l) => l['msg'] === 'request');
    expect(health).toMatchObject({ level: 'info', request_id: '0f8fad5b-d9cb-469f-a165-70867728950e', method: 'GET', route: '/healthz', status: 200 });
    expect(typeof health?.['time']).toBe('string');
    expect(health?.['duration_ms']).toBeGreaterThanOrEqual(0);
    expect(refused).toMatchObject({ level: 'info', request_id: missing.headers.get('x-request-id'), route: '/cohorts-api/v2/cohorts', status: 401, code: 2004 });
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
    expect(jsonLines(running.stdout()).map((l) => l['msg'])).toContain('stopped');
  });

  it('--log-level warn leaves requests out; a bad level is exit 2', async () => {
    const { running, url } = await serve(['--log-level', 'warn']);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    running.child.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
    expect(jsonLines(running.stdout())).toEqual([]);
    const dir = await tempDir('audience-logs-');
    cleanups.push(dir.remove);
    const bad = startCli(['serve', '--data', `${dir.path}/data`, '--log-level', 'loud']);
    expect((await bad.exited).code).toBe(2);
    expect(existsSync(`${dir.path}/data`)).toBe(false); // refused before the data directory is touched
  });
});
