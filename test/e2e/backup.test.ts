// Backup and restore (operations.md, second round), on the real binary: while track calls stream in, `audience
// backup --out FILE` takes a copy through the running server; `audience restore FILE --data DIR` fills a new
// directory, which serves every event acknowledged before the backup began (and nothing answered after it is
// required). Offline backups of a stopped server's directory, and refusals (a non-root key, a non-empty directory).

import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCliProcess, tempDir } from '../support/processes.js';
import { call, listeningUrl, serve, type WireEvent } from './support-crash.js';
import { waitUntil } from '../support/wait.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('backup and restore', () => {
  it('a backup taken under load restores every event acknowledged before it began', async () => {
    const dir = await tempDir('audience-backup-');
    cleanups.push(dir.remove);
    const data = join(dir.path, 'data');
    const init = await runCliProcess(['init', '--data', data, '--json']);
    expect(init.code).toBe(0);
    const keys = JSON.parse(init.stdout) as { private_key: string; public_key: string; workspace_id: string };
    const server = serve(data, cleanups, ['--threads', '1']);
    const url = await listeningUrl(server);
    const agent = new Agent({ keepAlive: true });
    cleanups.push(async () => agent.destroy());

    const users = Array.from({ length: 20 }, () => randomUUID());
    const acknowledged = new Map<string, WireEvent>();
    let sent = 0;
    let stop = false;
    const stream = async (): Promise<void> => {
      while (!stop && sent < 3000) {
        const body = { id: randomUUID(), user_id: users[sent++ % users.length] as string, name: 'Pageview', properties: { n: sent } };
        const answer = await call(agent, url, 'POST', '/v2.0/events', keys.public_key, body);
        expect(answer.status).toBe(200);
        acknowledged.set(body.id, answer.body as WireEvent);
      }
    };
    const streams = Array.from({ length: 4 }, stream);
    await waitUntil(() => acknowledged.size >= 200, '200 acknowledged events', 20_000);
    const before = new Map(acknowledged);
    expect(before.size).toBeGreaterThanOrEqual(200);
    const out = join(dir.path, 'under-load.backup');
    const backup = await runCliProcess(['backup', '--out', out, '--json', '--url', url.origin, '--key', keys.private_key]);
    expect(backup.code, backup.stderr).toBe(0);
    expect(JSON.parse(backup.stdout)).toMatchObject({ file: out, keys: expect.any(Number) });
    stop = true;
    await Promise.all(streams);
    expect(acknowledged.size).toBeGreaterThan(before.size); // writes went on around the backup

    // A key below the root may not take a whole-store backup.
    const child = await call(agent, url, 'POST', '/admin/v1/workspaces', keys.private_key, { name: 'child', parent_id: keys.workspace_id });
    const childKey = await call(agent, url, 'POST', '/admin/v1/keys', keys.private_key, { workspace_id: child.body.id, type: 'private', access: 'descendants' });
    expect((await call(agent, url, 'POST', '/admin/v1/backups', childKey.body.key)).status).toBe(403);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);

    const restored = join(dir.path, 'restored');
    const restore = await runCliProcess(['restore', out, '--data', restored]);
    expect(restore.code, restore.stderr).toBe(0);
    const again = await runCliProcess(['restore', out, '--data', restored]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not empty/);

    const second = serve(restored, cleanups, ['--threads', '0']);
    const secondUrl = await listeningUrl(second);
    const found = new Map<string, WireEvent>();
    for (const user of users) {
      const answer = await call(agent, secondUrl, 'GET', `/v2.0/events?user_id=${user}&limit=1000`, keys.public_key);
      expect(answer.status).toBe(200);
      for (const event of answer.body as WireEvent[]) found.set(event.id, event);
    }
    for (const [id, record] of before) expect(found.get(id), `acknowledged before the backup: ${id}`).toEqual(record);
    // Every restored event was acknowledged (nothing invented), and the restored server takes new events.
    for (const id of found.keys()) expect(acknowledged.has(id)).toBe(true);
    expect((await call(agent, secondUrl, 'POST', '/v2.0/events', keys.public_key, { user_id: users[0], name: 'Pageview', properties: {} })).status).toBe(200);
    second.child.kill('SIGTERM');
    expect((await second.exited).code).toBe(0);

    // Offline: a stopped server's directory.
    const offline = await runCliProcess(['backup', '--data', restored, '--out', join(dir.path, 'offline.backup')]);
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.stdout).toMatch(/backup of \d+ keys/);
  });
});
