// A property named `__proto__` is a valid name (D29: `[a-z0-9_]+`) and is data like any other: a tracked event reads
// back with it, a partition owner in a worker thread segments it as tracked (the task crosses as msgpack), and so do
// the owner's replay after a restart (the stored records) and the stateless route. msgpackr alone reads the key as
// `__proto_` (server/msgpack-keys.ts).

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

const COHORTS = '/cohorts-api/v2/cohorts';

let s: TestService;
beforeAll(async () => {
  s = await startTestService({ threads: 1 });
});
afterAll(async () => {
  await s?.close();
});

/** The raw text of an answer: JSON.stringify keeps an own `__proto__` member, toEqual may not look at it. */
async function text(service: TestService, method: string, path: string, body?: string, key?: string): Promise<{ status: number; text: string }> {
  const answer = await service.request(method, path, { body, key });
  return { status: answer.status, text: await answer.text() };
}

async function memberships(service: TestService, user: string): Promise<string[]> {
  const answer = await service.json<{ cohorts: string[] }>('POST', '/ccs/v1/segmentation', { body: { user_id: user, events: [] } });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.cohorts;
}

describe('a property named __proto__ (D29)', () => {
  it('reads back as tracked and is segmented as tracked, by a worker owner, after a restart and statelessly', async () => {
    const name = `Proto_${randomUUID().replace(/-/g, '')}`;
    const where = (path: string, value: string) => ({ event: name, where: { property: path, condition: { equal_to: [value] } } });
    const proto = await s.json<{ code: number }>('POST', COHORTS, { body: { name: 'proto', query: where('properties.__proto__.plan', 'pro') } });
    const near = await s.json<{ code: number }>('POST', COHORTS, { body: { name: 'near', query: where('properties.__proto_.plan', 'pro') } });
    expect(proto.status).toBe(201);
    expect(near.status).toBe(201);

    const user = randomUUID();
    const properties = '{"__proto__":{"plan":"pro","__proto__":[{"__proto__":1}]},"__proto_":{"plan":"free"},"a":1}';
    const tracked = await text(s, 'POST', '/v2.0/events', `{"user_id":"${user}","name":"${name}","properties":${properties}}`, s.keys.public_key);
    expect(tracked.status, tracked.text).toBe(200);
    expect(tracked.text).toContain(`"properties":${properties}`);

    const check = async (service: TestService) => {
      const read = await text(service, 'GET', `/v2.0/events?user_id=${user}`);
      expect(read.status).toBe(200);
      expect(read.text).toContain(`"properties":${properties}`);
      expect(await memberships(service, user)).toEqual([String(proto.body.code)]);
    };
    await check(s);
    s = await s.restart();
    await check(s);
    // A second event after the restart: the owner loads the user from its snapshot and stored events first.
    const again = await text(s, 'POST', '/v2.0/events', `{"user_id":"${user}","name":"${name}","properties":${properties}}`, s.keys.public_key);
    expect(again.status, again.text).toBe(200);
    await check(s);

    const stateless = await s.json<{ state: { cohorts: string[] } }>('POST', '/ccs/v1/segmentation/stateless', {
      key: s.keys.public_key,
      body: `{"user_id":"${randomUUID()}","events":[{"name":"${name}","time":"${new Date().toISOString()}","properties":${properties}}]}`,
    });
    expect(stateless.status, JSON.stringify(stateless.body)).toBe(200);
    expect(stateless.body.state.cohorts).toEqual([String(proto.body.code)]);
  });
});
