// D40 end to end: every string the service stores reads back byte for byte (astral characters, combining marks,
// U+FFFF, U+FFFD), before and after a restart; a lone surrogate or bytes that are not UTF-8 are refused with 400 code
// 1002 on every route, and the refused request stores nothing (D41).

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let s: TestService;

const COHORTS = '/cohorts-api/v2/cohorts';
const V1 = '/audience-api/v1';

/** Well-formed strings that a careless decoder or re-encoder alters. */
const ODD = ['😀 𝄞 👩‍👩‍👧', 'e\u0301 n\u0303 \u0915\u094d\u0937', '\uffff', '\ufffd', '\u0000\u001f\u2028\u2029', '\ud83d\ude00'];
const odd = (i: number) => `${ODD[i % ODD.length]}|${i}`;

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const reply = await s.json<any>(method, path, { body });
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** Sends a raw JSON text (so it can hold a `\udc00` escape JSON.stringify would never write). */
const raw = (method: string, path: string, text: string) => s.json<any>(method, path, { body: text });

beforeAll(async () => {
  s = await startTestService();
}, 60_000);

afterAll(async () => {
  await s?.close();
});

describe('stored strings read back byte for byte (D40)', () => {
  it('event properties, aliases, cohort names and queries, imports and segments, also after a restart', async () => {
    const user = randomUUID();
    const eventName = `Ev_${randomUUID().replace(/-/g, '')}`; // names are [A-Za-z0-9_]: the odd strings go in properties
    // Property names are [a-z0-9_]: the odd strings go in values, nested and in lists.
    const properties = Object.fromEntries(ODD.map((text, i) => [`k${i}`, { v: text, list: [text, odd(i + 2)] }]));
    await ok('POST', '/v2.0/events', { user_id: user, name: eventName, properties });
    const aliases = ODD.map((text, i) => ({ tag: 'email', id: `${text}@${i}.example`, priority: i }));
    await ok('POST', '/v2.0/identify', { user_id: user, aliases });
    const cohortQuery = { event: eventName, where: { property: 'properties.k0.v', condition: { equal_to: ODD } } };
    const cohort = await ok('POST', COHORTS, { name: `Cohort ${odd(3)}`, description: odd(4), tags: ODD, query: cohortQuery });
    const imported = await ok('POST', `${V1}/imports`, { name: `Import ${odd(5)}`, code: `imp-${randomUUID()}`, relation: '3rd', kind: 'segments', identifiers: ['email'] });
    const segment = await ok('POST', `${V1}/imports/${imported.id}/segments`, { name: `Segment ${odd(2)}`, code: `seg-${randomUUID()}` });

    const check = async (service: TestService) => {
      const events = (await service.json<any>('GET', `/v2.0/events?user_id=${encodeURIComponent(user)}`)).body;
      expect(events).toHaveLength(1);
      expect(events[0].name).toBe(eventName);
      expect(events[0].properties).toEqual(properties);
      const listed = (await service.json<any>('GET', `/v2.0/users/${user}/aliases`)).body as Array<{ id: string }>;
      expect(listed.map((a) => a.id).sort()).toEqual(aliases.map((a) => a.id).sort());
      // Each alias, looked up by its exact string, still leads to the user.
      for (const alias of aliases) {
        expect(await service.running.services.identity.findAliasUser(service.keys.organization_id, alias)).toBe(user);
      }
      const read = (await service.json<any>('GET', `${COHORTS}/${cohort.id}`)).body;
      expect(read).toMatchObject({ name: `Cohort ${odd(3)}`, description: odd(4), tags: ODD, query: cohortQuery });
      const imports = (await service.json<any>('GET', `${V1}/imports`)).body;
      expect(JSON.stringify(imports)).toContain(JSON.stringify(`Import ${odd(5)}`));
      const segments = (await service.json<any>('GET', `${V1}/imports/${imported.id}/segments`)).body;
      expect(JSON.stringify(segments)).toContain(JSON.stringify(segment.name));
      expect(segment.name).toBe(`Segment ${odd(2)}`);
    };
    await check(s);
    s = await s.restart();
    await check(s);
  });
});

describe('a lone surrogate or non-UTF-8 bytes are refused with 400 code 1002, and nothing is stored (D40, D41)', () => {
  it('in an event name or property (events)', async () => {
    const user = randomUUID();
    for (const text of [
      `{"user_id":"${user}","name":"Pageview","properties":{"x":"\\udc00"}}`,
      `{"user_id":"${user}","name":"Page\\ud800view","properties":{}}`,
      `{"user_id":"${user}","name":"Pageview","properties":{"\\udc00":1}}`,
    ]) {
      const answer = await raw('POST', '/v2.0/events', text);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 1002, cause: expect.stringContaining('not well-formed Unicode (lone surrogate)') });
    }
    expect((await raw('POST', '/v2.0/events', `{"user_id":"${user}","name":"Pageview","properties":{"x":"\\udc00"}}`)).body.error.cause).toBe(
      'properties.x: not well-formed Unicode (lone surrogate)',
    );
    // Never seen: the flat 3002 body of the events read (D12).
    expect((await s.json<any>('GET', `/v2.0/events?user_id=${user}`)).body).toMatchObject({ code: 3002 });
  });

  it('in bytes that are not UTF-8 (events)', async () => {
    const user = randomUUID();
    const body = Buffer.concat([Buffer.from(`{"user_id":"${user}","name":"Pageview","properties":{"x":"`), Buffer.from([0xed, 0xb0, 0x80]), Buffer.from('"}}')]);
    const response = await fetch(`${s.url}/v2.0/events`, { method: 'POST', headers: { 'X-API-Key': s.keys.private_key, 'Content-Type': 'application/json' }, body });
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).error).toMatchObject({ code: 1002, cause: 'body: not well-formed Unicode (invalid UTF-8)' });
    expect((await s.json<any>('GET', `/v2.0/events?user_id=${user}`)).body).toMatchObject({ code: 3002 });
  });

  it('in an alias (identify) and in a user id in the path (aliases)', async () => {
    const user = randomUUID();
    const answer = await raw('POST', '/v2.0/identify', `{"user_id":"${user}","aliases":[{"tag":"email","id":"a\\udfff@example.com","priority":0}]}`);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 1002, cause: 'aliases[0].id: not well-formed Unicode (lone surrogate)' });
    const identity = s.running.services.identity;
    for (const id of ['a\ufffd@example.com', 'a\udfff@example.com']) {
      expect(await identity.findAliasUser(s.keys.organization_id, { tag: 'email', id })).toBeUndefined();
    }
    const path = await s.json<any>('GET', '/v2.0/users/u%ED%B0%80/aliases');
    expect(path.status).toBe(400);
    expect(path.body.error).toMatchObject({ code: 1002, cause: 'path.user_id: not well-formed Unicode (invalid UTF-8)' });
  });

  it('in a cohort query, and in a query-string value', async () => {
    const before = await ok('GET', COHORTS);
    const answer = await raw('POST', COHORTS, '{"name":"Lone","query":{"event":"Pageview","where":{"property":"properties.x","condition":{"equal_to":["\\udc00"]}}}}');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ status_code: 400, code: 1002, cause: 'query.where.condition.equal_to[0]: not well-formed Unicode (lone surrogate)' });
    expect(await ok('GET', COHORTS)).toEqual(before);
    const events = await s.json<any>('GET', '/v2.0/events?user_id=%ED%B0%80');
    expect(events.status).toBe(400);
    expect(events.body.error).toMatchObject({ code: 1002, cause: 'query.user_id: not well-formed Unicode (invalid UTF-8)' });
  });

  it('in an import or a segment (taxonomy envelope)', async () => {
    const before = await ok('GET', `${V1}/imports`);
    const answer = await raw('POST', `${V1}/imports`, '{"name":"\\ud800","code":"lone","relation":"3rd","kind":"segments","identifiers":["email"]}');
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ requestId: answer.headers.get('x-request-id'), error: { c: 'InvalidRequestBody', d: { code: 1002, cause: 'name: not well-formed Unicode (lone surrogate)' } } });
    expect(await ok('GET', `${V1}/imports`)).toEqual(before);
    const imported = await ok('POST', `${V1}/imports`, { name: 'Panel', code: `p-${randomUUID()}`, relation: '3rd', kind: 'segments', identifiers: ['email'] });
    const segmentsBefore = await ok('GET', `${V1}/imports/${imported.id}/segments`);
    const segment = await raw('POST', `${V1}/imports/${imported.id}/segments`, '{"name":"Sports","code":"sp\\udc00"}');
    expect(segment.status).toBe(400);
    expect(segment.body.error.d).toMatchObject({ code: 1002, cause: 'code: not well-formed Unicode (lone surrogate)' });
    expect(await ok('GET', `${V1}/imports/${imported.id}/segments`)).toEqual(segmentsBefore);
  });
});
