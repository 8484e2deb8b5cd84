// operations.md, second round: `audience keys create|list --data DIR` work offline on a stopped server's data
// directory, the way back when every key is lost; a running server's directory is refused with one line.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { runCliProcess, startCli, tempDir, type RunningCli } from '../support/processes.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const io = captureIo({ env: {} });
  const code = await runCli(argv, io);
  return { code, out: io.stdoutText(), err: io.stderrText() };
}

describe('offline keys', () => {
  it('creates a working key and lists every key of a stopped server; refuses a running one', async () => {
    const dir = await tempDir('audience-keys-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    const init = await runCliProcess(['init', '--data', data, '--json']);
    expect(init.code).toBe(0);
    const { workspace_id: workspace } = JSON.parse(init.stdout) as { workspace_id: string };

    const created = await run(['keys', 'create', '--data', data, '--workspace', workspace, '--type', 'private', '--access', 'descendants', '--name', 'recovery', '--json']);
    expect(created.err).toBe('');
    const key = JSON.parse(created.out) as { key: string; id: string; type: string; access: string };
    expect(key).toMatchObject({ type: 'private', access: 'descendants' });
    const listed = await run(['keys', 'list', '--data', data, '--json']);
    expect((JSON.parse(listed.out) as Array<{ id: string }>).map((k) => k.id)).toContain(key.id);
    expect(JSON.parse(listed.out)).toHaveLength(3);
    expect(listed.out).not.toContain(key.key);

    const bad = await run(['keys', 'create', '--data', data, '--workspace', 'nope', '--type', 'public']);
    expect(bad.code).toBe(1);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect((await run(['keys', 'list', '--data', join(dir.path, 'missing')])).code).toBe(1);

    const server: RunningCli = startCli(['serve', '--data', data, '--port', '0', '--threads', '0']);
    cleanups.push(async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    });
    const url = (await server.waitFor(/listening on (http:\/\/\S+)/))[1] as string;
    const admin = await fetch(`${url}/admin/v1/keys`, { headers: { 'X-API-Key': key.key } });
    expect(admin.status).toBe(200);
    const locked = await run(['keys', 'list', '--data', data]);
    expect(locked.code).toBe(1);
    expect(locked.err).toMatch(/in use/);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
  });
});
