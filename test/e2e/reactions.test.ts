// The Reactions API end to end (D37, D9, D10): create with its validation, the secret only in the create answer,
// list/get/PATCH/DELETE with sibling workspaces unable to see each other's, a cohort that reactions name cannot be
// deleted, and the deliveries list with the retry of a failed one.

import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';
import { reactionsKeys, type Delivery } from '../../server/domain/reactions/contract.js';

let h: TestService;
beforeEach(async () => {
  h = await startTestService();
});
afterEach(async () => {
  await h.close();
});

const BASE = '/reactions-api/v1/reactions';
const HOOK = 'https://hooks.example.com/in';

async function cohort(name: string, extra: Record<string, unknown> = {}, key = h.keys.private_key): Promise<{ id: string; code: number }> {
  const created = await h.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { key, body: { name, query: { event: 'Pageview' }, ...extra } });
  expect(created.status).toBe(201);
  return created.body;
}

const create = (body: unknown, key = h.keys.private_key) => h.json<any>('POST', BASE, { key, body });

describe('reactions (D37)', () => {
  it('create answers 201 with the secret once; reads never show it; PATCH changes name, action and state', async () => {
    const viewers = await cohort('Viewers');
    const created = await create({ name: 'welcome', cohort_id: viewers.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'welcome',
      cohort_id: viewers.id,
      cohort_code: viewers.code,
      trigger: 'on_entry',
      action: { type: 'webhook', url: HOOK },
      state: 'Enabled',
      workspace_id: h.keys.workspace_id,
      created_at: expect.any(String),
      last_updated_at: expect.any(String),
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const id = created.body.id as string;
    const got = await h.json<any>('GET', `${BASE}/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect((await h.json<any[]>('GET', BASE)).body.map((r) => r.id)).toEqual([id]);
    const patched = await h.json<any>('PATCH', `${BASE}/${id}`, { body: { name: 'hello', action: { type: 'webhook', url: 'http://127.0.0.1:9/x' }, state: 'Disabled', trigger: 'on_exit' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'hello', action: { url: 'http://127.0.0.1:9/x' }, state: 'Disabled', trigger: 'on_entry' });
    expect(patched.body.secret).toBeUndefined();
    expect((await h.json('DELETE', `${BASE}/${id}`)).status).toBe(200);
    expect((await h.json<any>('GET', `${BASE}/${id}`)).body.error.code).toBe(3000);
  });

  it('refuses bad bodies with 400 1002 naming the field, and hidden or offline cohorts', async () => {
    const viewers = await cohort('Viewers');
    const offline = await cohort('Offline', { segment_type: 'offline' });
    const good = { name: 'r', cohort_id: viewers.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } };
    const cases: Array<[unknown, string]> = [
      [{ ...good, name: undefined }, 'name'],
      [{ ...good, name: '' }, 'name'],
      [{ ...good, cohort_id: undefined }, 'cohort_id'],
      [{ ...good, cohort_id: randomUUID() }, 'cohort_id'],
      [{ ...good, cohort_id: 'nope' }, 'cohort_id'],
      [{ ...good, cohort_id: offline.id }, 'cohort_id'],
      [{ ...good, trigger: 'sometimes' }, 'trigger'],
      [{ ...good, trigger: undefined }, 'trigger'],
      [{ ...good, action: undefined }, 'action'],
      [{ ...good, action: { type: 'email', url: HOOK } }, 'action.type'],
      [{ ...good, action: { type: 'webhook', url: 'not a url' } }, 'action.url'],
      [{ ...good, action: { type: 'webhook', url: 'ftp://x.example/' } }, 'action.url'],
      [{ ...good, action: { type: 'webhook', url: 'https://user:pw@x.example/' } }, 'action.url'],
      [{ ...good, action: { type: 'webhook', url: `https://x.example/${'a'.repeat(2100)}` } }, 'action.url'],
      [[], 'body'],
    ];
    for (const [body, field] of cases) {
      const answer = await create(body);
      expect(answer.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(answer.body.error.code).toBe(1002);
      expect(answer.body.error.cause).toContain(field);
    }
    expect((await h.json<any>('POST', BASE, {})).body.error.code).toBe(1003);
    expect((await create(good, h.keys.public_key)).status).toBe(403);
    expect((await create(good, null as unknown as string)).status).toBe(401);
    expect((await h.json<any>('GET', `${BASE}/not-a-uuid`)).status).toBe(404);
  });

  it("sibling workspaces cannot see each other's reactions (404), a parent's are read-only (403)", async () => {
    const ws = async (name: string) => (await h.json<{ id: string }>('POST', '/admin/v1/workspaces', { body: { name, parent_id: h.keys.workspace_id } })).body.id;
    const keyOf = async (workspace: string) => (await h.json<{ key: string }>('POST', '/admin/v1/keys', { body: { workspace_id: workspace, type: 'private', access: 'workspace' } })).body.key;
    const a = await ws('A');
    const b = await ws('B');
    const keyA = await keyOf(a);
    const keyB = await keyOf(b);
    const inA = await cohort('A viewers', {}, keyA);
    const rootCohort = await cohort('Root viewers');
    const reactionA = (await create({ name: 'a', cohort_id: inA.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } }, keyA)).body;
    // B can name neither A's cohort nor see A's reaction.
    expect((await create({ name: 'b', cohort_id: inA.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } }, keyB)).body.error.code).toBe(1002);
    expect((await h.json<any>('GET', `${BASE}/${reactionA.id}`, { key: keyB })).status).toBe(404);
    expect((await h.json<any>('PATCH', `${BASE}/${reactionA.id}`, { key: keyB, body: { name: 'x' } })).status).toBe(404);
    expect((await h.json<any>('GET', `${BASE}/${reactionA.id}/deliveries`, { key: keyB })).status).toBe(404);
    expect((await h.json<any[]>('GET', BASE, { key: keyB })).body).toEqual([]);
    // A may use its parent's cohort; the parent's reactions are visible to A but read-only.
    expect((await create({ name: 'a2', cohort_id: rootCohort.id, trigger: 'on_exit', action: { type: 'webhook', url: HOOK } }, keyA)).status).toBe(201);
    const rootReaction = (await create({ name: 'root', cohort_id: rootCohort.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } })).body;
    expect((await h.json<any>('GET', `${BASE}/${rootReaction.id}`, { key: keyA })).status).toBe(200);
    expect((await h.json<any>('DELETE', `${BASE}/${rootReaction.id}`, { key: keyA })).status).toBe(403);
  });

  it('a cohort that reactions name cannot be deleted (409 4000); deleting the reaction frees it', async () => {
    const viewers = await cohort('Viewers');
    const reaction = (await create({ name: 'r', cohort_id: viewers.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } })).body;
    const refused = await h.json<any>('DELETE', `/cohorts-api/v2/cohorts/${viewers.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe(4000);
    expect((await h.json('DELETE', `${BASE}/${reaction.id}`)).status).toBe(200);
    expect((await h.json('DELETE', `/cohorts-api/v2/cohorts/${viewers.id}`)).status).toBe(200);
  });

  it('lists deliveries newest first by status with a limit; a failed one is retried once (409 otherwise); DELETE removes the outbox', async () => {
    const viewers = await cohort('Viewers');
    const reaction = (await create({ name: 'r', cohort_id: viewers.id, trigger: 'on_entry', action: { type: 'webhook', url: HOOK } })).body;
    await h.json('PATCH', `${BASE}/${reaction.id}`, { body: { state: 'Disabled' } });
    const store = h.running.services.store;
    const at = Date.now() - 1000;
    const delivery = (seq: number, status: Delivery['status']): Delivery => ({
      seq,
      org: 'o',
      body: { id: `dlv_${seq.toString(16).padStart(14, '0')}`, reaction_id: reaction.id, trigger: 'on_entry', cohort: { id: viewers.id, code: viewers.code, name: 'Viewers' }, user_id: `u${seq}`, time: new Date(at).toISOString(), event_id: null },
      status,
      attempts: status === 'pending' ? 0 : 3,
      created_at: at,
      next_at: at,
      last_status: status === 'failed' ? 500 : null,
      last_error: status === 'failed' ? 'HTTP 500' : null,
      last_attempt_at: status === 'pending' ? null : at,
    });
    const statuses: Delivery['status'][] = ['delivered', 'failed', 'pending', 'failed', 'delivered'];
    await store.batch(statuses.map((status, i) => ({ type: 'put' as const, key: reactionsKeys.delivery(reaction.id, i + 1), value: delivery(i + 1, status) })));
    const list = async (query: string) => (await h.json<any[]>('GET', `${BASE}/${reaction.id}/deliveries${query}`)).body.map((d) => `${d.id.slice(-1)}:${d.status}`);
    expect(await list('')).toEqual(['5:delivered', '4:failed', '3:pending', '2:failed', '1:delivered']);
    expect(await list('?status=failed')).toEqual(['4:failed', '2:failed']);
    expect(await list('?limit=2')).toEqual(['5:delivered', '4:failed']);
    expect((await h.json<any>('GET', `${BASE}/${reaction.id}/deliveries?status=lost`)).body.error.code).toBe(1000);
    expect((await h.json<any>('GET', `${BASE}/${reaction.id}/deliveries?limit=0`)).body.error.code).toBe(1000);

    const retried = await h.json<any>('POST', `${BASE}/${reaction.id}/deliveries/dlv_00000000000004/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: 'dlv_00000000000004', status: 'pending', attempts: 3 });
    expect(await store.get(reactionsKeys.pending(reaction.id, 4))).toBe('u4');
    expect((await h.json<any>('POST', `${BASE}/${reaction.id}/deliveries/dlv_00000000000004/retry`)).status).toBe(409);
    expect((await h.json<any>('POST', `${BASE}/${reaction.id}/deliveries/dlv_00000000000009/retry`)).status).toBe(404);
    expect((await h.json<any>('POST', `${BASE}/${reaction.id}/deliveries/nope/retry`)).status).toBe(404);

    expect((await h.json('DELETE', `${BASE}/${reaction.id}`)).status).toBe(200);
    const left: string[] = [];
    for await (const [key] of store.iterate({ gte: 'o', lt: 'p' })) if (key.includes(reaction.id)) left.push(key);
    expect(left).toEqual([]);
  });
});
