// D40 limits end to end: property paths per event and per event schema (400, never 500, also after a restart), and
// a bad event never failing the good ones written around it.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

interface ErrorBody {
  error: { code: number; cause?: string };
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await service?.close();
});

const track = (body: unknown) => service.json<ErrorBody>('POST', '/v2.0/events', { key: service.keys.public_key, body });
const freshName = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

/** `count` flat properties named `${prefix}0`, `${prefix}1`, ... */
function flat(prefix: string, count: number): Record<string, number> {
  const properties: Record<string, number> = {};
  for (let i = 0; i < count; i++) properties[`${prefix}${i}`] = i;
  return properties;
}

describe('property paths (D40, default limit 1,000)', () => {
  it('one event with 1,001 property paths is 400 1002 naming the limit; 1,000 are accepted', async () => {
    const name = freshName('Wide');
    const over = await track({ user_id: randomUUID(), name, properties: { nested: flat('p', 1000) } });
    expect(over.status).toBe(400);
    expect(over.body.error.code).toBe(1002);
    expect(over.body.error.cause).toMatch(/1000 property paths/);
    expect(over.body.error.cause).toMatch(/max schema paths/);
    const at = await track({ user_id: randomUUID(), name, properties: flat('p', 1000) });
    expect(at.status).toBe(200);
  });

  it('a schema grown to the cap refuses a new path with 400 1007 naming the limit, accepts known paths, also after a restart', async () => {
    const name = freshName('Growing');
    const user = randomUUID();
    for (let part = 0; part < 4; part++) {
      const grown = await track({ user_id: user, name, properties: flat(`g${part}_`, 250) });
      expect(grown.status).toBe(200);
    }
    const newPath = { user_id: user, name, properties: { g0_1: 5, brand_new: 'x' } };
    const known = { user_id: user, name, properties: { g0_1: 5, g3_249: 7 } };
    const refused = await track(newPath);
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(1007);
    expect(refused.body.error.cause).toMatch(/past 1000 property paths/);
    expect((await track(known)).status).toBe(200);

    service = await service.restart();
    const again = await track(newPath);
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe(1007);
    expect((await track(known)).status).toBe(200);
  });

  it('an event with 70,000 keys is 400 and good requests sent with it are all stored', async () => {
    const name = freshName('Crowd');
    const users = Array.from({ length: 24 }, () => randomUUID());
    const answers = await Promise.all([
      track({ user_id: randomUUID(), name, properties: flat('k', 70_000) }),
      ...users.map((user, i) => track({ user_id: user, name, properties: { i } })),
    ]);
    const [bad, ...good] = answers;
    expect(bad?.status).toBe(400);
    expect(bad?.body.error.code).toBe(1002);
    expect(good.map((answer) => answer.status)).toEqual(users.map(() => 200));
  });
});

describe('event names per organization (D40, configured to 3 here)', () => {
  it('the 4th new name is 400 1002 naming the limit; known names are still accepted, also after a restart', async () => {
    let capped = await startTestService({ limits: { maxEventNames: 3, schemaCacheBytes: 1 } });
    try {
      const send = (name: string) =>
        capped.json<ErrorBody>('POST', '/v2.0/events', { key: capped.keys.public_key, body: { user_id: randomUUID(), name, properties: { n: 1 } } });
      for (const name of ['One', 'Two', 'Three']) expect((await send(name)).status).toBe(200);
      const refused = await send('Four');
      expect(refused.status).toBe(400);
      expect(refused.body.error.code).toBe(1002);
      expect(refused.body.error.cause).toBe('name: the organization already has 3 event names, the limit (max event names)');
      expect((await send('One')).status).toBe(200);

      capped = await capped.restart();
      expect((await send('Four')).status).toBe(400);
      for (const name of ['One', 'Two', 'Three']) expect((await send(name)).status).toBe(200);
    } finally {
      await capped.close();
    }
  });
});

describe('users\' state cache bounded in bytes (D40, configured to 1 byte here)', () => {
  it('every state is evicted after its tick, and the cohort still counts exactly the users with two pageviews', async () => {
    const tiny = await startTestService({ limits: { stateCacheBytes: 1 } });
    try {
      const created = await tiny.json<{ id: string }>('POST', '/cohorts-api/v2/cohorts', {
        body: { name: 'Two pageviews', query: { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } } },
      });
      expect(created.status).toBe(201);
      const size = async () =>
        (await tiny.json<{ live_audience_size: number }>('GET', `/cohorts-api/v2/cohorts/${created.body.id}`)).body.live_audience_size;
      const users = Array.from({ length: 6 }, () => randomUUID());
      const send = async (user: string, name: string) => {
        const answer = await tiny.json('POST', '/v2.0/events', { key: tiny.keys.public_key, body: { user_id: user, name } });
        expect(answer.status).toBe(200);
      };
      for (const user of users) await send(user, 'Pageview');
      expect(await size()).toBe(0);
      // Users 0..3 view again, 4 and 5 click: each state was evicted and is loaded again from the store.
      for (const [i, user] of users.entries()) await send(user, i < 4 ? 'Pageview' : 'Click');
      expect(await size()).toBe(4);
      for (const user of users.slice(4)) await send(user, 'Pageview');
      expect(await size()).toBe(6);
      const cache = (tiny.running.services.pipeline as unknown as { cache: { size: number } }).cache;
      expect(cache.size).toBe(1);
    } finally {
      await tiny.close();
    }
  });
});
