// `audience workspaces` and `audience keys` against the real service in-process (operations.md admin API):
// success in tables and --json, and the failures: no key, a public key (403 2001), unknown ids (404 3000).

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { startTestService, type TestService } from '../support/service.js';

interface Ran {
  code: number;
  out: string;
  err: string;
}

describe('audience workspaces and keys', () => {
  let service: TestService;
  const run = async (argv: string[], key: string | null = service.keys.private_key): Promise<Ran> => {
    const io = captureIo({ env: { AUDIENCE_URL: service.url, AUDIENCE_KEY: key ?? undefined } });
    const code = await runCli(argv, io);
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };
  const json = async <T>(argv: string[], key?: string | null): Promise<T> => {
    const ran = await run([...argv, '--json'], key);
    expect(ran.err).toBe('');
    expect(ran.code).toBe(0);
    return JSON.parse(ran.out) as T;
  };
  const expectOneLineError = (ran: Ran, pattern: RegExp): void => {
    expect(ran.code).toBe(1);
    expect(ran.err).toMatch(pattern);
    expect(ran.err.trim().split('\n')).toHaveLength(1);
    expect(ran.out).toBe('');
  };

  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => {
    await service.close();
  });

  it('lists the workspaces the key reaches, as a table and as JSON', async () => {
    const list = await json<Array<{ id: string; parent_id: string | null }>>(['workspaces', 'list']);
    expect(list.map((ws) => ws.id)).toContain(service.keys.workspace_id);
    const table = await run(['workspaces', 'list']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.out.trimEnd().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+PARENT\s+CREATED$/);
    expect(rows.some((row) => row.startsWith(service.keys.workspace_id))).toBe(true);
  });

  it("creates a workspace below the key's own workspace by default, and below --parent when given", async () => {
    const child = await json<{ id: string; name: string; parent_id: string }>(['workspaces', 'create', 'Europe']);
    expect(child.parent_id).toBe(service.keys.workspace_id);
    expect(child.name).toBe('Europe');
    const grandchild = await json<{ parent_id: string }>(['workspaces', 'create', 'France', '--parent', child.id]);
    expect(grandchild.parent_id).toBe(child.id);
    const human = await run(['workspaces', 'create', 'Spain', '--parent', child.id]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/created workspace\s+[0-9a-f-]{36}/);
  });

  it('answers 404 3000 for a --parent the key cannot see (D9)', async () => {
    expectOneLineError(await run(['workspaces', 'create', 'Nowhere', '--parent', randomUUID()]), /^error: HTTP 404 3000: /);
  });

  it('refuses a public key with 403 2001 (D6) as one line, exit 1', async () => {
    expectOneLineError(await run(['workspaces', 'list'], service.keys.public_key), /^error: HTTP 403 2001: /);
    expectOneLineError(await run(['keys', 'list'], service.keys.public_key), /^error: HTTP 403 2001: /);
  });

  it('refuses an unknown key with 401 2000 (D5)', async () => {
    expectOneLineError(await run(['keys', 'list'], randomUUID()), /^error: HTTP 401 2000: /);
  });

  it('exits 1 naming --key/AUDIENCE_KEY when no key is given', async () => {
    const ran = await run(['workspaces', 'create', 'X'], null);
    expectOneLineError(ran, /--key.*AUDIENCE_KEY/);
  });

  it('creates a key shown once, lists keys without values, and revokes a key so it stops working', async () => {
    const created = await json<{ id: string; key: string; type: string; access: string; workspace_id: string }>([
      'keys', 'create', '--workspace', service.keys.workspace_id, '--type', 'private', '--access', 'descendants', '--name', 'ci',
    ]);
    expect(created.key).toMatch(/^[0-9a-f-]{36}$/);
    expect([created.type, created.access, created.workspace_id]).toEqual(['private', 'descendants', service.keys.workspace_id]);
    // The new key works for administration.
    expect((await run(['workspaces', 'list', '--json'], created.key)).code).toBe(0);

    const listed = await json<Array<Record<string, unknown>>>(['keys', 'list']);
    expect(listed.map((key) => key['id'])).toContain(created.id);
    expect(listed.every((key) => !('key' in key))).toBe(true);
    const table = await run(['keys', 'list']);
    expect(table.out).toContain(created.id);
    expect(table.out).not.toContain(created.key);

    const revoked = await run(['keys', 'revoke', created.id]);
    expect(revoked.code).toBe(0);
    expect(revoked.out).toContain(created.id);
    expectOneLineError(await run(['workspaces', 'list'], created.key), /^error: HTTP 401 2000: /);
    expectOneLineError(await run(['keys', 'revoke', created.id]), /^error: HTTP 404 3000: /);
  });

  it('prints a created public key in the human form', async () => {
    const ran = await run(['keys', 'create', '--workspace', service.keys.workspace_id, '--type', 'public']);
    expect(ran.code).toBe(0);
    expect(ran.out).toMatch(/^key\s+[0-9a-f-]{36}$/m);
    expect(ran.out).toMatch(/^type\s+public$/m);
  });

  it('exits 2 on a bad --type or --access, and without --workspace, before any request', async () => {
    expect((await run(['keys', 'create', '--workspace', service.keys.workspace_id, '--type', 'secret'])).code).toBe(2);
    expect((await run(['keys', 'create', '--workspace', service.keys.workspace_id, '--type', 'public', '--access', 'all'])).code).toBe(2);
    expect((await run(['keys', 'create', '--type', 'public'])).code).toBe(2);
    expect((await run(['keys', 'revoke'])).code).toBe(2);
  });
});
