// The events routes end to end (spec "Events", D12, D29, D30): track with user_id or aliases, safe retries, schema
// enforcement (1007 naming the path), reading by time with from/to bounds and the 1000 cap, and every error.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLimited, startIdentityHarness, type HttpAnswer, type IdentityHarness } from './support-identity.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** An event id the server minted (server/domain/events/event-id.ts): UUID v7 with the mark `a7e`. */
const MINTED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7a7e-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const INSECURE = { 'X-Forwarded-Proto': 'http' };

interface WireEvent {
  id: string;
  user_id: string;
  name: string;
  time: string;
  properties: Record<string, unknown>;
  session_id?: string;
  view_id?: string;
}

let h: IdentityHarness;
beforeAll(async () => {
  h = await startIdentityHarness({ trustProxy: true });
});
afterAll(async () => {
  await h?.close();
});

function expectIdentityError(answer: HttpAnswer, status: number, code: number): Record<string, unknown> {
  expect(answer.status).toBe(status);
  const body = answer.body as { request_id: string; error: Record<string, unknown> };
  expect(body.request_id).toMatch(UUID_V4);
  expect(body.error.code).toBe(code);
  expect(body.error).not.toHaveProperty('type');
  expect(body.error).not.toHaveProperty('status_code');
  expect(body.error.docs).toMatch(new RegExp(`/errors/${status}/${code}$`));
  return body.error;
}

const track = (body: unknown, key: string | null = h.keys.public_key) => h.call<WireEvent>('POST', '/v2.0/events', { key, body });

const read = (query: string, key: string | null = h.keys.public_key) => h.call<WireEvent[]>('GET', `/v2.0/events?${query}`, { key });

/** A fresh event name, so that schema tests do not meet each other's schemas. */
const freshName = (prefix: string) => `${prefix}_${randomUUID().replace(/-/g, '')}`;

describe('POST /v2.0/events', () => {
  it('tracks for a user_id and answers the record (D29, D3), readable with the same key in k', async () => {
    const user = randomUUID();
    const answer = await track({ user_id: user, name: 'Pageview', properties: { client: { url: 'https://a.example/' } } });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      id: expect.stringMatching(MINTED_ID),
      user_id: user,
      name: 'Pageview',
      time: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      properties: { client: { url: 'https://a.example/' } },
    });
    // The minted id is a UUID v7 carrying the event's time (server/domain/events/event-id.ts).
    expect(parseInt(answer.body.id.replace(/-/g, '').slice(0, 12), 16)).toBe(Date.parse(answer.body.time));
    const stored = await read(`user_id=${user}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toEqual([answer.body]);
  });

  it('normalises a given time to UTC with milliseconds and keeps session_id/view_id; null optionals are absent', async () => {
    const user = randomUUID();
    const session = randomUUID();
    const answer = await track({
      user_id: user,
      name: 'Click',
      time: '2026-01-02T03:04:05+02:00',
      session_id: session,
      view_id: null,
      id: null,
      aliases: null,
      properties: null,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.time).toBe('2026-01-02T01:04:05.000Z');
    expect(answer.body.session_id).toBe(session);
    expect(answer.body).not.toHaveProperty('view_id');
    expect(answer.body.properties).toEqual({});
  });

  it('tracks with new aliases against a new user, then against the user of the known alias (spec "Events")', async () => {
    const email = { id: `${randomUUID()}@example.com`, tag: 'email', priority: 1 };
    const device = { id: randomUUID(), tag: 'device', priority: 2 };
    const first = await track({ aliases: [email, device], name: 'Signup' });
    expect(first.status).toBe(200);
    const user = first.body.user_id;
    expect(user).toMatch(UUID_V4);
    const second = await track({ aliases: [{ id: randomUUID(), tag: 'cookie', priority: 0 }, device], name: 'Signup' });
    expect(second.body.user_id).toBe(user);
    const aliases = await h.call<Array<{ id: string; tag: string; platform_id: string }>>('GET', `/v2.0/users/${user}/aliases`);
    expect(aliases.body).toHaveLength(3);
    expect(aliases.body.every((a) => a.platform_id === user)).toBe(true);
    expect((await read(`user_id=${user}`)).body.map((e) => e.id)).toEqual([first.body.id, second.body.id]);
  });

  it('answers a repeated client id for the same user with the stored record and stores nothing (D29)', async () => {
    const user = randomUUID();
    const id = randomUUID();
    const first = await track({ user_id: user, id, name: 'Purchase', properties: { amount: 10 } });
    expect(first.status).toBe(200);
    expect(first.body.id).toBe(id);
    const retry = await track({ user_id: user, id, name: 'Purchase', properties: { amount: 10 } });
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual(first.body);
    // A retry whose body differs still answers the stored record and changes nothing, not even the schema.
    const name = freshName('Retry');
    const original = await track({ user_id: user, id: randomUUID(), name, properties: { amount: 10 } });
    const altered = await track({ ...original.body, name, properties: { amount: 'ten', extra: 'x' } });
    expect(altered.status).toBe(200);
    expect(altered.body).toEqual(original.body);
    expect((await track({ user_id: user, name, properties: { extra: 5 } })).status).toBe(200);
    expect((await read(`user_id=${user}`)).body).toHaveLength(3);
  });

  it('answers a retry with an id the server minted with the stored record, found without an id index entry (D29)', async () => {
    const user = randomUUID();
    // Two events at the same millisecond and one backdated: each minted id finds its own record.
    const time = '2026-01-02T03:04:05.678Z';
    const first = await track({ user_id: user, name: 'Purchase', time, properties: { amount: 1 } });
    const second = await track({ user_id: user, name: 'Purchase', time, properties: { amount: 2 } });
    const backdated = await track({ user_id: user, name: 'Purchase', time: '1999-12-31T23:59:59.999Z', properties: { amount: 3 } });
    for (const answer of [first, second, backdated]) expect(answer.body.id).toMatch(MINTED_ID);
    expect(second.body.id).not.toBe(first.body.id);
    for (const answer of [first, second, backdated]) {
      const retry = await track({ ...answer.body, properties: { amount: 99 } });
      expect(retry.status).toBe(200);
      expect(retry.body).toEqual(answer.body);
    }
    // By alias too: the retry's user is the winning alias's, as for any client id.
    const alias = { tag: 'email', id: `${randomUUID()}@example.com`, priority: 1 };
    const byAlias = await track({ aliases: [alias], name: 'Purchase', properties: { amount: 4 } });
    const aliasRetry = await track({ aliases: [alias], id: byAlias.body.id, name: 'Purchase', properties: { amount: 5 } });
    expect(aliasRetry.body).toEqual(byAlias.body);
    // A client's id of the same shape carrying another time is a client id like any other: stored, then found.
    const shaped = `${first.body.id.slice(0, 9)}0000${first.body.id.slice(13)}`;
    const client = await track({ user_id: user, id: shaped, name: 'Purchase', time, properties: { amount: 6 } });
    expect(client.body.id).toBe(shaped);
    expect((await track({ user_id: user, id: shaped, name: 'Purchase', properties: { amount: 7 } })).body).toEqual(client.body);
    expect((await read(`user_id=${user}`)).body.map((event) => event.properties['amount'])).toEqual([3, 1, 2, 6]);
  });

  it('answers 400 1007 naming the property path, expected and actual type (D30)', async () => {
    const name = freshName('Purchase');
    const user = randomUUID();
    expect((await track({ user_id: user, name, properties: { cart: { total: 10, items: [{ sku: 'a' }] } } })).status).toBe(200);
    const wrong = await track({ user_id: user, name, properties: { cart: { total: 'ten' } } });
    const error = expectIdentityError(wrong, 400, 1007);
    expect(error.cause).toMatch(/^properties\.cart\.total: /);
    expect(error.cause).toContain('number');
    expect(error.cause).toContain('string');
    const inList = await track({ user_id: user, name, properties: { cart: { items: [{ sku: 5 }] } } });
    expect(expectIdentityError(inList, 400, 1007).cause).toMatch(/^properties\.cart\.items\[0\]\.sku: /);
    // null conforms; new properties grow the schema and are enforced from then on.
    expect((await track({ user_id: user, name, properties: { cart: { total: null }, coupon: 'X1' } })).status).toBe(200);
    expect(expectIdentityError(await track({ user_id: user, name, properties: { coupon: 1 } }), 400, 1007).cause).toMatch(
      /^properties\.coupon: /,
    );
    // Rejected events were not stored.
    expect((await read(`user_id=${user}`)).body).toHaveLength(2);
  });

  it('answers 400 1003 without a body and 1002 naming the problem of a malformed one (D29)', async () => {
    expectIdentityError(await h.call('POST', '/v2.0/events', { key: h.keys.public_key }), 400, 1003);
    const user = randomUUID();
    const cases: Array<[unknown, RegExp]> = [
      [{ user_id: user, name: 'bad-name' }, /^name:/],
      [{ user_id: user }, /^name:/],
      [{ name: 'Pageview' }, /^user_id:/],
      [{ name: 'Pageview', aliases: [] }, /^aliases:/],
      [{ name: 'Pageview', user_id: 'nope' }, /^user_id:/],
      [{ name: 'Pageview', user_id: user, properties: { Bad: 1 } }, /^properties\.Bad:/],
      [{ name: 'Pageview', user_id: user, properties: [] }, /^properties:/],
      [{ name: 'Pageview', user_id: user, time: 'yesterday' }, /^time:/],
      [{ name: 'Pageview', user_id: user, time: new Date(Date.now() + 3_600_000).toISOString() }, /^time:/],
      [{ name: 'Pageview', user_id: user, id: 'not-a-uuid' }, /^id:/],
    ];
    for (const [body, cause] of cases) {
      const error = expectIdentityError(await track(body), 400, 1002);
      expect(error.cause, JSON.stringify(body)).toMatch(cause);
    }
    // Nothing was recorded for the user: the read still answers the flat 3002 (D12).
    const unknown = await read(`user_id=${user}`);
    expect(unknown.status).toBe(400);
    expect((unknown.body as unknown as Record<string, unknown>)['code']).toBe(3002);
  });

  it('authenticates: 401 2004/2005/2000, 403 2001 for a private key over plain HTTP (D5, D7)', async () => {
    const body = { user_id: randomUUID(), name: 'Pageview' };
    expectIdentityError(await track(body, null), 401, 2004);
    expectIdentityError(await track(body, 'x'), 401, 2005);
    expectIdentityError(await track(body, randomUUID()), 401, 2000);
    expectIdentityError(await h.call('POST', '/v2.0/events', { body, headers: INSECURE }), 403, 2001);
    const viaProxy = await h.call('POST', '/v2.0/events', { key: h.keys.public_key, body, headers: INSECURE });
    expect(viaProxy.status).toBe(200);
    expect((await h.call('POST', '/v2.0/events', { keyIn: 'header', body })).status).toBe(200);
  });
});

describe('GET /v2.0/events', () => {
  it('answers a user never seen with the flat 400 body {request_id, status, code: 3002, message, docs} (D12)', async () => {
    const answer = await read(`user_id=${randomUUID()}`);
    expect(answer.status).toBe(400);
    expect(Object.keys(answer.body).sort()).toEqual(['code', 'docs', 'message', 'request_id', 'status']);
    const body = answer.body as unknown as Record<string, unknown>;
    expect(body['code']).toBe(3002);
    expect(body['status']).toBe('Bad Request');
    expect(body['request_id']).toBe(answer.headers['x-request-id']);
    expect(body['docs']).toMatch(/\/errors\/400\/3002$/);
  });

  it('answers a known user without events with an empty array', async () => {
    const created = await h.call<{ id: string }>('POST', '/v2.0/users', { key: h.keys.public_key });
    const answer = await read(`user_id=${created.body.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([]);
  });

  it('answers 400 1000 for a missing or malformed user_id and for a bad from or to (D29)', async () => {
    const user = randomUUID();
    await track({ user_id: user, name: 'Pageview' });
    expectIdentityError(await read(''), 400, 1000);
    expectIdentityError(await read('user_id='), 400, 1000);
    expectIdentityError(await read('user_id=someone'), 400, 1000);
    expectIdentityError(await read(`user_id=${user}&from=yesterday`), 400, 1000);
    expectIdentityError(await read(`user_id=${user}&to=2026-13-01T00:00:00Z`), 400, 1000);
    expectIdentityError(await read(`user_id=${user}&from=2026-01-01T00:00:00`), 400, 1000);
  });

  it('orders by time ascending (ties in arrival order); from is exclusive, to inclusive (D29)', async () => {
    const user = randomUUID();
    const at = (minute: number) => `2025-06-01T10:${String(minute).padStart(2, '0')}:00.000Z`;
    for (const [minute, tag] of [[30, 'c'], [10, 'a'], [20, 'b1'], [20, 'b2'], [40, 'd']] as const) {
      expect((await track({ user_id: user, name: 'Step', time: at(minute), properties: { tag } })).status).toBe(200);
    }
    const tags = (answer: HttpAnswer<WireEvent[]>) => answer.body.map((e) => e.properties['tag']);
    expect(tags(await read(`user_id=${user}`))).toEqual(['a', 'b1', 'b2', 'c', 'd']);
    expect(tags(await read(`user_id=${user}&from=${at(10)}&to=${at(30)}`))).toEqual(['b1', 'b2', 'c']);
    expect(tags(await read(`user_id=${user}&from=${encodeURIComponent('2025-06-01T12:20:00+02:00')}`))).toEqual(['c', 'd']);
    expect(tags(await read(`user_id=${user}&to=2025-06-01`))).toEqual([]);
    expect(tags(await read(`user_id=${user}&from=2025-06-01&to=${at(10)}`))).toEqual(['a']);
    expect(tags(await read(`user_id=${user}&from=${at(40)}`))).toEqual([]);
    // A private key works too; the key rides in k and a JSON Content-Type is sent on this bodiless GET.
    expect(tags(await read(`user_id=${user}`, h.keys.private_key))).toHaveLength(5);
  });

  it('answers at most 1000 events, the oldest after from; the rest follow with from = the last time', async () => {
    const user = randomUUID();
    const base = Date.parse('2025-01-01T00:00:00.000Z');
    await runLimited(1500, 64, async (index) => {
      const answer = await track({ user_id: user, name: 'Tick', time: new Date(base + index * 1000).toISOString(), properties: { n: index } });
      expect(answer.status).toBe(200);
    });
    const firstPage = await read(`user_id=${user}`);
    expect(firstPage.body).toHaveLength(1000);
    expect(firstPage.body.map((e) => e.properties['n'])).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    const last = firstPage.body[999] as WireEvent;
    const secondPage = await read(`user_id=${user}&from=${encodeURIComponent(last.time)}`);
    expect(secondPage.body.map((e) => e.properties['n'])).toEqual(Array.from({ length: 500 }, (_, i) => 1000 + i));
  });

  it('authenticates: 401 without or with a bad key, 403 for a private key over plain HTTP', async () => {
    const user = randomUUID();
    await track({ user_id: user, name: 'Pageview' });
    expectIdentityError(await read(`user_id=${user}`, null), 401, 2004);
    expectIdentityError(await read(`user_id=${user}`, 'abc'), 401, 2005);
    expectIdentityError(await read(`user_id=${user}`, randomUUID()), 401, 2000);
    const insecure = await h.call('GET', `/v2.0/events?user_id=${user}`, { headers: INSECURE });
    expectIdentityError(insecure, 403, 2001);
  });
});
