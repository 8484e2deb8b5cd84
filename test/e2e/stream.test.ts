// The live stream end to end (D38) with a real WebSocket client: live transitions in commit order with their
// documented fields, an exact resume after a cursor, a sibling workspace's key that sees none of them, the
// `cohorts` filter, and refusals before the upgrade (bad key, hidden cohort, malformed cursor).

import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import type { StreamMessage } from '../../server/reactions/stream/hub.js';
import { waitUntil } from '../support/wait.js';

let h: TestService;
const sockets: WebSocket[] = [];

beforeEach(async () => {
  h = await startTestService();
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  await h.close();
});


interface Client {
  readonly messages: StreamMessage[];
  until(count: number, what: string): Promise<void>;
}

function connect(query: string, key: string = h.keys.private_key): Promise<Client> {
  const socket = new WebSocket(`${h.url.replace('http', 'ws')}/reactions-api/v1/stream${query}`, { headers: { 'X-API-Key': key } });
  sockets.push(socket);
  const messages: StreamMessage[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as StreamMessage));
  return new Promise((resolve, reject) => {
    socket.once('open', () =>
      resolve({
        messages,
        until: (count, what) => waitUntil(() => messages.length >= count, `${what} on the stream`),
      }),
    );
    socket.once('unexpected-response', (_req, res) => reject(new Error(`refused: ${res.statusCode}`)));
    socket.once('error', reject);
  });
}

async function cohort(name: string, query: unknown, key = h.keys.private_key): Promise<{ id: string; code: number }> {
  const created = await h.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { key, body: { name, query } });
  expect(created.status).toBe(201);
  return created.body;
}

async function track(user: string, name: string): Promise<string> {
  const id = randomUUID();
  const answer = await h.json('POST', '/v2.0/events', { key: h.keys.public_key, body: { id, user_id: user, name, time: new Date().toISOString(), properties: {} } });
  expect(answer.status).toBe(200);
  return id;
}

describe('the live stream (D38)', () => {
  it('sends each live transition in commit order with its fields; `after` resumes exactly after a cursor', async () => {
    const viewers = await cohort('Viewers', { event: 'Pageview' });
    const few = await cohort('Fewer than two views', { event: 'Pageview', frequency: { less_than: 2 } });
    const live = await connect('');
    const user = randomUUID();
    const first = await track(user, 'Pageview');
    const second = await track(user, 'Pageview');
    await live.until(3, 'three transitions');
    expect(live.messages.map((m) => [m.kind, m.cohort.code, m.event_id])).toEqual([
      ['entered', viewers.code, first],
      ['entered', few.code, first],
      ['exited', few.code, second],
    ]);
    expect(live.messages[0]).toEqual({ cursor: expect.stringMatching(/^\d+\.0$/), kind: 'entered', cohort: { id: viewers.id, code: viewers.code }, user_id: user, time: expect.any(String), event_id: first });
    expect(live.messages[1]?.cursor).toBe(live.messages[0]?.cursor.replace(/\.0$/, '.1'));

    // Resume after the first message: the two others, nothing more, then live ones.
    const resumed = await connect(`?after=${live.messages[0]?.cursor}`);
    await resumed.until(2, 'the catch-up');
    expect(resumed.messages.map((m) => m.cursor)).toEqual(live.messages.slice(1).map((m) => m.cursor));
    const other = randomUUID();
    await track(other, 'Pageview');
    await resumed.until(4, 'the live ones after the catch-up');
    expect(resumed.messages.slice(2).map((m) => [m.kind, m.user_id])).toEqual([
      ['entered', other],
      ['entered', other],
    ]);
    // `cohorts=` keeps only those.
    const filtered = await connect(`?cohorts=${few.code}&after=0`);
    await filtered.until(3, 'the filtered catch-up');
    expect(filtered.messages.map((m) => [m.kind, m.cohort.code])).toEqual([
      ['entered', few.code],
      ['exited', few.code],
      ['entered', few.code],
    ]);
  });

  it("a sibling workspace's key sees none of another workspace's cohorts; refusals come before the upgrade", async () => {
    const siblingA = await h.json<{ id: string }>('POST', '/admin/v1/workspaces', { body: { name: 'A', parent_id: h.keys.workspace_id } });
    const siblingB = await h.json<{ id: string }>('POST', '/admin/v1/workspaces', { body: { name: 'B', parent_id: h.keys.workspace_id } });
    const keyOf = async (workspace: string) =>
      (await h.json<{ key: string }>('POST', '/admin/v1/keys', { body: { workspace_id: workspace, type: 'private', access: 'workspace' } })).body.key;
    const keyA = await keyOf(siblingA.body.id);
    const keyB = await keyOf(siblingB.body.id);
    const inA = await cohort('A viewers', { event: 'Pageview' }, keyA);
    const inB = await cohort('B clickers', { event: 'Click' }, keyB);
    const watcherB = await connect('', keyB);
    const user = randomUUID();
    await track(user, 'Pageview');
    await track(user, 'Click');
    await watcherB.until(1, "B's own transition");
    // A's entry was committed first; B's socket got only B's.
    expect(watcherB.messages.map((m) => m.cohort.code)).toEqual([inB.code]);

    await expect(connect('', randomUUID())).rejects.toThrow('refused: 401');
    await expect(connect('', h.keys.public_key)).rejects.toThrow('refused: 403');
    await expect(connect(`?cohorts=${inA.code}`, keyB)).rejects.toThrow('refused: 404');
    await expect(connect('?cohorts=x')).rejects.toThrow('refused: 400');
    await expect(connect('?after=yesterday')).rejects.toThrow('refused: 400');
  });
});
