// `audience reactions` and `audience stream` against the real service in-process (D37, D38): create (secret shown
// once), list, get, update, deliveries, delete, one-line errors; the stream prints live transitions as lines or
// NDJSON and exits 0 on SIGINT, 1 when the server refuses.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../cli/main.js';
import { captureIo } from '../support/cli-io.js';
import { startTestService, type TestService } from '../support/service.js';
import { startReceiver, type Receiver } from '../support/receiver.js';

describe('audience reactions and audience stream', () => {
  let service: TestService;
  let receiver: Receiver;
  let cohortId: string;
  let cohortCode: number;

  const cli = (argv: string[], key: string = service.keys.private_key) => {
    const io = captureIo({ env: { AUDIENCE_URL: service.url, AUDIENCE_KEY: key } });
    return { io, done: runCli(argv, io) };
  };
  const run = async (argv: string[], key?: string) => {
    const { io, done } = cli(argv, key);
    const code = await done;
    return { code, out: io.stdoutText(), err: io.stderrText() };
  };

  beforeAll(async () => {
    service = await startTestService();
    receiver = await startReceiver();
    const created = await service.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { body: { name: 'Viewers', query: { event: 'Pageview' } } });
    cohortId = created.body.id;
    cohortCode = created.body.code;
  });

  afterAll(async () => {
    await service.close();
    await receiver.close();
  });

  it('create prints the secret once; list, get, update, deliveries and delete work; errors are one line', async () => {
    const created = await run(['reactions', 'create', '--name', 'welcome', '--cohort', cohortId, '--trigger', 'on_entry', '--webhook', receiver.url, '--json']);
    expect(created.code).toBe(0);
    const reaction = JSON.parse(created.out) as { id: string; secret: string };
    expect(reaction.secret).toMatch(/^[0-9a-f]{64}$/);
    const human = await run(['reactions', 'get', reaction.id]);
    expect(human.out).toContain(receiver.url);
    expect(human.out).not.toContain(reaction.secret);
    expect((await run(['reactions', 'list'])).out).toContain(reaction.id);

    await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { user_id: randomUUID(), name: 'Pageview', properties: {} } });
    await receiver.until((got) => got.length === 1, 'the delivery');
    const listed = await run(['reactions', 'deliveries', reaction.id, '--status', 'delivered', '--json']);
    await expect.poll(async () => JSON.parse((await run(['reactions', 'deliveries', reaction.id, '--status', 'delivered', '--json'])).out).length, { timeout: 5000 }).toBe(1);
    expect(listed.code).toBe(0);

    expect((await run(['reactions', 'update', reaction.id, '--disable', '--json'])).out).toContain('"Disabled"');
    const bad = await run(['reactions', 'create', '--name', 'x', '--cohort', cohortId, '--trigger', 'on_entry', '--webhook', 'ftp://nope']);
    expect(bad.code).toBe(1);
    expect(bad.err.trim().split('\n')).toHaveLength(1);
    expect(bad.err).toContain('action.url');
    expect((await run(['reactions', 'create', '--name', 'x', '--cohort', cohortId, '--trigger', 'sometimes', '--webhook', receiver.url])).code).toBe(2);
    const retry = await run(['reactions', 'retry', reaction.id, 'dlv_00000000000001']);
    expect(retry.code).toBe(1);
    expect(retry.err).toMatch(/HTTP 409 4000/);
    expect((await run(['reactions', 'delete', reaction.id])).code).toBe(0);
    expect((await run(['reactions', 'get', reaction.id])).err).toMatch(/HTTP 404 3000/);
  });

  it('stream prints each live transition as a line (NDJSON with --json) and exits 0 on SIGINT', async () => {
    const { io, done } = cli(['stream', '--json']);
    // Connected once the server counts the client.
    await expect.poll(() => service.running.services.stream.clients, { timeout: 5000 }).toBe(1);
    const user = randomUUID();
    await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { user_id: user, name: 'Pageview', properties: {} } });
    await expect.poll(() => io.stdoutText(), { timeout: 5000 }).toContain(user);
    const line = JSON.parse(io.stdoutText().trim().split('\n')[0] as string) as { kind: string; cohort: { code: number }; user_id: string };
    expect(line).toMatchObject({ kind: 'entered', cohort: { code: cohortCode }, user_id: user });
    process.emit('SIGINT');
    expect(await done).toBe(0);
  });

  it('under --json an error is one JSON object on stderr (an HTTP error with its status, code and request id)', async () => {
    const missing = await run(['reactions', 'get', '00000000-0000-4000-8000-000000000000', '--json']);
    expect(missing.code).toBe(1);
    expect(missing.out).toBe('');
    expect(JSON.parse(missing.err)).toEqual({ error: { message: expect.any(String), status: 404, code: 3000, request_id: expect.any(String) } });
    const usage = await run(['reactions', 'create', '--name', 'x', '--cohort', cohortId, '--trigger', 'sometimes', '--webhook', receiver.url, '--json']);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.err)).toEqual({ error: { message: expect.stringContaining('--trigger'), exit_code: 2 } });
  });

  it('stream exits 1 with one line when the server refuses the upgrade', async () => {
    const refused = await run(['stream', '--cohorts', 'nope']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/HTTP 400 1000/);
  });
});
