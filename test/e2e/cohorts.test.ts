// End-to-end tests of the Cohorts API (spec "Cohorts", D5–D9, D14–D19) over a real HTTP server and real services.
// Every test makes its own organization, so lists and codes do not depend on other tests.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COHORTS,
  ISO_MS,
  PAGEVIEWS,
  TWO_PAGEVIEWS,
  UUID,
  createCohort,
  expectBadBody,
  expectError,
  makeHierarchy,
  names,
  startCohortsHarness,
  trackEvent,
  type CohortsHarness,
} from './support-cohorts.js';

let h: CohortsHarness;
beforeAll(async () => {
  h = await startCohortsHarness();
});
afterAll(async () => {
  await h?.close();
});

const create = (key: string, body: Record<string, unknown>) => createCohort(h, key, body);
const track = (org: string, user: string, name: string) => trackEvent(h, org, user, name);
const hierarchy = () => makeHierarchy(h);

describe('authentication and transport (D5, D6, D7)', () => {
  it('answers 401 2004 / 2005 / 2000 and 403 2001 on every route', async () => {
    const org = await h.newOrg();
    const cohort = await create(org.private_key, { name: 'c', query: PAGEVIEWS });
    const routes: Array<[string, string, unknown]> = [
      ['GET', COHORTS, undefined],
      ['POST', COHORTS, { name: 'x', query: PAGEVIEWS }],
      ['GET', `${COHORTS}/${cohort.id}`, undefined],
      ['PATCH', `${COHORTS}/${cohort.id}`, { name: 'y' }],
      ['DELETE', `${COHORTS}/${cohort.id}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      expectError(await h.request(method, path, { key: null, body }), 401, 2004);
      expectError(await h.request(method, path, { key: 'not-a-uuid', body }), 401, 2005);
      expectError(await h.request(method, path, { key: randomUUID(), body }), 401, 2000);
      expectError(await h.request(method, path, { key: org.public_key, body }), 403, 2001);
      const insecure = { key: org.private_key, body, headers: { 'X-Forwarded-Proto': 'http' } };
      expectError(await h.request(method, path, insecure), 403, 2001);
    }
    // Nothing was changed by the refused requests.
    const read = await h.request('GET', `${COHORTS}/${cohort.id}`, { key: org.private_key });
    expect(read.body.name).toBe('c');
  });

  it('accepts a private key behind a trusted proxy that says https (D7)', async () => {
    const org = await h.newOrg();
    const answer = await h.request('GET', COHORTS, { key: org.private_key, headers: { 'X-Forwarded-Proto': 'https' } });
    expect(answer.status).toBe(200);
  });
});

describe('create (D14, D17)', () => {
  it('answers 201 with the full cohort, Enabled, real_time, codes in creation order', async () => {
    const org = await h.newOrg();
    const first = await create(org.private_key, { name: 'Readers', query: PAGEVIEWS });
    expect(first).toEqual({
      id: expect.stringMatching(UUID),
      code: expect.any(Number),
      name: 'Readers',
      tags: [],
      state: 'Enabled',
      workspace_id: org.workspace_id,
      segment_type: 'real_time',
      live_audience_size: 0,
      created_at: expect.stringMatching(ISO_MS),
      last_updated_at: first.created_at,
      query: PAGEVIEWS,
    });
    const second = await create(org.private_key, {
      name: 'Offline',
      description: 'd',
      tags: ['x', 'y'],
      segment_type: 'offline',
      query: TWO_PAGEVIEWS,
    });
    expect(second.code).toBe(first.code + 1);
    expect(second).toMatchObject({ description: 'd', tags: ['x', 'y'], segment_type: 'offline', query: TWO_PAGEVIEWS });
    expect(second).not.toHaveProperty('live_audience_size');
    expect(await create(org.private_key, { name: 'n'.repeat(256), query: PAGEVIEWS })).toHaveProperty('name', 'n'.repeat(256));
  });

  it('treats null optional fields as absent and ignores unknown ones (D1)', async () => {
    const org = await h.newOrg();
    const cohort = await create(org.private_key, {
      id: null,
      name: 'n',
      query: PAGEVIEWS,
      description: null,
      tags: null,
      segment_type: null,
      workspace_id: null,
      code: 77,
      extra: { anything: true },
    });
    expect(cohort).not.toHaveProperty('description');
    expect(cohort).toMatchObject({ tags: [], segment_type: 'real_time', workspace_id: org.workspace_id });
    expect(cohort.id).not.toBeNull();
  });

  it('rejects bodies not structured as expected (400 1003 / 1002)', async () => {
    const { private_key: key } = await h.newOrg();
    expectError(await h.request('POST', COHORTS, { key }), 400, 1003);
    expectError(await h.request('POST', COHORTS, { key, body: '{"name": ' }), 400, 1002);
    expectBadBody(await h.request('POST', COHORTS, { key, body: [] }), 'body');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ query: PAGEVIEWS }, 'name'],
      [{ name: '', query: PAGEVIEWS }, 'name'],
      [{ name: 'n'.repeat(257), query: PAGEVIEWS }, 'name'],
      [{ name: 5, query: PAGEVIEWS }, 'name'],
      [{ name: 'n' }, 'query'],
      [{ name: 'n', query: null }, 'query'],
      [{ name: 'n', query: PAGEVIEWS, tags: 'sport' }, 'tags'],
      [{ name: 'n', query: PAGEVIEWS, tags: ['ok', 1] }, 'tags[1]'],
      [{ name: 'n', query: PAGEVIEWS, description: 5 }, 'description'],
      [{ name: 'n', query: PAGEVIEWS, segment_type: 'batch' }, 'segment_type'],
      [{ name: 'n', query: PAGEVIEWS, workspace_id: 5 }, 'workspace_id'],
    ];
    for (const [body, path] of cases) expectBadBody(await h.request('POST', COHORTS, { key, body }), path);
    expect((await h.request('GET', COHORTS, { key })).body).toEqual([]);
  });

  it('creates in a workspace the key may write; hidden is 404 3000, an ancestor 403 2001 (D9)', async () => {
    const { org, ws, aKey, aDescKey } = await hierarchy();
    const other = await h.newOrg();
    const inChild = await create(aDescKey, { name: 'in a1', query: PAGEVIEWS, workspace_id: ws.a1 });
    expect(inChild.workspace_id).toBe(ws.a1);
    expect((await create(aKey, { name: 'own', query: PAGEVIEWS })).workspace_id).toBe(ws.a);
    const body = (workspace_id: string) => ({ name: 'n', query: PAGEVIEWS, workspace_id });
    expectError(await h.request('POST', COHORTS, { key: aKey, body: body(org.workspace_id) }), 403, 2001);
    expectError(await h.request('POST', COHORTS, { key: aKey, body: body(ws.a1) }), 404, 3000);
    expectError(await h.request('POST', COHORTS, { key: aDescKey, body: body(ws.b) }), 404, 3000);
    expectError(await h.request('POST', COHORTS, { key: aDescKey, body: body(other.workspace_id) }), 404, 3000);
    expectError(await h.request('POST', COHORTS, { key: aDescKey, body: body(randomUUID()) }), 404, 3000);
  });
});

describe('query validation (D18)', () => {
  const invalid: Array<[string, unknown, string]> = [
    ['unknown key, nested path', { and: [PAGEVIEWS, { or: [{ event: 'X', where: { property: 'properties.a', condition: { contain: 'x' } } }] }] }, 'query.and[1].or[0].where.condition'],
    ['exactly one key', { event: 'Pageview', frequency: { greater_than: 1, less_than: 5 } }, 'query.frequency'],
    ['non-empty lists', { or: [] }, 'query.or'],
    ['non-empty operand lists', { event: 'P', where: { property: 'properties.a', condition: { equal_to: [] } } }, 'query.where.condition.equal_to'],
    ['integers where integers', { event: 'P', during: { the_last: { value: 1.5, unit: 'days' } } }, 'query.during.the_last.value'],
    ['unit names', { event: 'P', during: { the_last: { value: 1, unit: 'fortnights' } } }, 'query.during.the_last.unit'],
    ['compound where one level deep', { event: 'P', where: { and: [{ or: [{ property: 'properties.a', condition: 'x' }] }] } }, 'query.where.and[0]'],
    ['numeric functions on numeric comparisons', { event: 'P', where: { property: 'properties.items', condition: { property: 'n', function: 'sum', condition: { contains: 'x' } } } }, 'query.where.condition'],
    ['not an object', 'Pageview', 'query'],
    ['unknown cohort code', { has_entered: { segment: 999_999 } }, 'query.has_entered.segment'],
  ];
  it.each(invalid)('create rejects %s with 400 1002 naming the path', async (_rule, query, path) => {
    const { private_key: key } = await h.newOrg();
    expectBadBody(await h.request('POST', COHORTS, { key, body: { name: 'n', query } }), path);
    expect((await h.request('GET', COHORTS, { key })).body).toEqual([]);
  });

  it('PATCH rejects an invalid query and a cycle of transition clauses, leaving the cohort unchanged', async () => {
    const { private_key: key } = await h.newOrg();
    const a = await create(key, { name: 'a', query: PAGEVIEWS });
    const b = await create(key, { name: 'b', query: { has_entered: { segment: a.code } } });
    const c = await create(key, { name: 'c', query: { and: [PAGEVIEWS, { has_exited: { segment: b.code } }] } });
    const patch = (query: unknown) => h.request('PATCH', `${COHORTS}/${a.id}`, { key, body: { query } });
    expectBadBody(await patch({ event: 'P', frequency: {} }), 'query.frequency');
    expectBadBody(await patch({ has_entered: { segment: a.code } }), 'query.has_entered.segment');
    expectBadBody(await patch({ or: [PAGEVIEWS, { has_not_entered: { segment: c.code } }] }), 'query.or[1].has_not_entered.segment');
    const read = await h.request('GET', `${COHORTS}/${a.id}`, { key });
    expect(read.body).toMatchObject({ query: PAGEVIEWS, last_updated_at: a.last_updated_at });
  });
});

describe('list (D8, D9)', () => {
  it('shows own and ancestors\u2019 cohorts, descendants\u2019 only with the flag and descendants access', async () => {
    const { aKey, aDescKey, rootKey } = await hierarchy();
    const other = await h.newOrg();
    await create(other.private_key, { name: 'other org', query: PAGEVIEWS });
    const list = (key: string, query = '') => h.request('GET', `${COHORTS}${query}`, { key });
    expect(names(await list(aKey))).toEqual(['a', 'root']);
    expect(names(await list(aKey, '?include-child-workspaces=false'))).toEqual(['a', 'root']);
    expectError(await list(aKey, '?include-child-workspaces=true'), 403, 2001);
    expect(names(await list(aDescKey))).toEqual(['a', 'root']);
    expect(names(await list(aDescKey, '?include-child-workspaces=true'))).toEqual(['a', 'a1', 'root']);
    expect(names(await list(rootKey))).toEqual(['root']);
    expect(names(await list(rootKey, '?include-child-workspaces=true'))).toEqual(['a', 'a1', 'b', 'root']);
    for (const bad of ['yes', '1', '']) expectError(await list(aDescKey, `?include-child-workspaces=${bad}`), 400, 1000);
  });

  it('answers summaries: no query, live_audience_size on real-time cohorts, sorted by code', async () => {
    const { private_key: key } = await h.newOrg();
    const live = await create(key, { name: 'live', query: PAGEVIEWS, description: 'd', tags: ['t'] });
    const offline = await create(key, { name: 'offline', query: PAGEVIEWS, segment_type: 'offline' });
    const answer = await h.request('GET', COHORTS, { key });
    expect(answer.status).toBe(200);
    const { query: _query, ...summary } = live;
    const { query: _query2, ...offlineSummary } = offline;
    expect(answer.body).toEqual([summary, offlineSummary]);
    expect(answer.body[0]).toHaveProperty('live_audience_size', 0);
    expect(answer.body[1]).not.toHaveProperty('live_audience_size');
  });
});

describe('read one (D9, D15)', () => {
  it('answers visible cohorts and 404 3000 for hidden, unknown and malformed ids', async () => {
    const { aKey, aDescKey, cohorts } = await hierarchy();
    const other = await h.newOrg();
    const foreign = await create(other.private_key, { name: 'other org', query: PAGEVIEWS });
    const read = (key: string, id: string) => h.request('GET', `${COHORTS}/${id}`, { key });
    const own = await read(aKey, cohorts.a.id);
    expect(own.status).toBe(200);
    expect(own.body).toEqual(cohorts.a);
    expect((await read(aKey, cohorts.root.id)).body).toEqual(cohorts.root);
    expect((await read(aKey, cohorts.a.id.toUpperCase())).status).toBe(200);
    expect((await read(aDescKey, cohorts.a1.id)).body).toEqual(cohorts.a1);
    expectError(await read(aKey, cohorts.a1.id), 404, 3000);
    expectError(await read(aDescKey, cohorts.b.id), 404, 3000);
    expectError(await read(aDescKey, foreign.id), 404, 3000);
    expectError(await read(aDescKey, randomUUID()), 404, 3000);
    expectError(await read(aDescKey, 'not-a-uuid'), 404, 3000);
  });
});

describe('update (D16)', () => {
  it('changes the given fields only, deletes description on null, bumps last_updated_at', async () => {
    const { private_key: key } = await h.newOrg();
    const cohort = await create(key, { name: 'n', description: 'd', tags: ['t'], query: PAGEVIEWS });
    const path = `${COHORTS}/${cohort.id}`;
    const renamed = await h.request('PATCH', path, { key, body: { name: 'renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...cohort, name: 'renamed', last_updated_at: expect.stringMatching(ISO_MS) });
    expect(Date.parse(renamed.body.last_updated_at)).toBeGreaterThanOrEqual(Date.parse(cohort.last_updated_at));
    const changed = await h.request('PATCH', path, { key, body: { description: null, tags: ['u', 'v'], query: TWO_PAGEVIEWS } });
    expect(changed.body).not.toHaveProperty('description');
    expect(changed.body).toMatchObject({ name: 'renamed', tags: ['u', 'v'], query: TWO_PAGEVIEWS, code: cohort.code });
    expect((await h.request('GET', path, { key })).body).toEqual(changed.body);
    const described = await h.request('PATCH', path, { key, body: { description: 'again' } });
    expect(described.body.description).toBe('again');
  });

  it('sets state Enabled / Disabled; anything else is 400 1002', async () => {
    const { private_key: key } = await h.newOrg();
    const cohort = await create(key, { name: 'n', query: PAGEVIEWS });
    const path = `${COHORTS}/${cohort.id}`;
    expect((await h.request('PATCH', path, { key, body: { state: 'Disabled' } })).body.state).toBe('Disabled');
    expect((await h.request('GET', path, { key })).body.state).toBe('Disabled');
    expect((await h.request('PATCH', path, { key, body: { state: 'Enabled' } })).body.state).toBe('Enabled');
    expectBadBody(await h.request('PATCH', path, { key, body: { state: 'Paused' } }), 'state');
  });

  it('rejects bodies not structured as expected, leaving the cohort unchanged', async () => {
    const { private_key: key } = await h.newOrg();
    const cohort = await create(key, { name: 'n', query: PAGEVIEWS });
    const path = `${COHORTS}/${cohort.id}`;
    expectError(await h.request('PATCH', path, { key }), 400, 1003);
    expectBadBody(await h.request('PATCH', path, { key, body: ['name'] }), 'body');
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '' }, 'name'],
      [{ name: 7 }, 'name'],
      [{ description: 7 }, 'description'],
      [{ tags: [null] }, 'tags[0]'],
      [{ tags: {} }, 'tags'],
      [{ name: 'ok', query: { event: 7 } }, 'query.event'],
    ];
    for (const [body, field] of cases) expectBadBody(await h.request('PATCH', path, { key, body }), field);
    expect((await h.request('GET', path, { key })).body).toEqual(cohort);
  });

  it('is 403 2001 on an ancestor\u2019s or a lookalike cohort, 404 3000 where the key may not see (D9)', async () => {
    const { ws, aKey, aDescKey, cohorts } = await hierarchy();
    const other = await h.newOrg();
    const foreign = await create(other.private_key, { name: 'other org', query: PAGEVIEWS });
    const lookalike = await h.newLookalike(ws.a, PAGEVIEWS);
    const patch = (key: string, id: string) => h.request('PATCH', `${COHORTS}/${id}`, { key, body: { name: 'changed' } });
    expectError(await patch(aKey, cohorts.root.id), 403, 2001);
    expectError(await patch(aDescKey, cohorts.root.id), 403, 2001);
    expectError(await patch(aKey, lookalike.id), 403, 2001);
    expectError(await patch(aKey, cohorts.a1.id), 404, 3000);
    expectError(await patch(aDescKey, cohorts.b.id), 404, 3000);
    expectError(await patch(aDescKey, foreign.id), 404, 3000);
    expectError(await patch(aDescKey, randomUUID()), 404, 3000);
    expect((await patch(aDescKey, cohorts.a1.id)).body.name).toBe('changed');
    expect((await patch(aKey, cohorts.a.id)).body.name).toBe('changed');
    expect((await h.request('GET', `${COHORTS}/${cohorts.root.id}`, { key: aKey })).body.name).toBe('root');
  });
});

describe('delete (D16, D18)', () => {
  it('answers 200 with an empty body; the cohort is gone', async () => {
    const { private_key: key } = await h.newOrg();
    const cohort = await create(key, { name: 'n', query: PAGEVIEWS });
    const answer = await h.request('DELETE', `${COHORTS}/${cohort.id}`, { key });
    expect(answer.status).toBe(200);
    expect(answer.text).toBe('');
    expectError(await h.request('GET', `${COHORTS}/${cohort.id}`, { key }), 404, 3000);
    expectError(await h.request('DELETE', `${COHORTS}/${cohort.id}`, { key }), 404, 3000);
    expect((await h.request('GET', COHORTS, { key })).body).toEqual([]);
  });

  it('is 409 4000 while another cohort names it, the cause listing the referencing cohorts', async () => {
    const { private_key: key } = await h.newOrg();
    const target = await create(key, { name: 'target', query: PAGEVIEWS });
    const first = await create(key, { name: 'r1', query: { has_entered: { segment: target.code } } });
    const second = await create(key, { name: 'r2', query: { and: [PAGEVIEWS, { has_exited: { segment: target.code } }] } });
    const refused = await h.request('DELETE', `${COHORTS}/${target.id}`, { key });
    expectError(refused, 409, 4000);
    expect(refused.body.error.cause).toContain(String(first.code));
    expect(refused.body.error.cause).toContain(String(second.code));
    expect((await h.request('DELETE', `${COHORTS}/${first.id}`, { key })).status).toBe(200);
    await h.request('PATCH', `${COHORTS}/${second.id}`, { key, body: { query: PAGEVIEWS } });
    expect((await h.request('DELETE', `${COHORTS}/${target.id}`, { key })).status).toBe(200);
  });

  it('is 403 2001 on an ancestor\u2019s or a lookalike cohort, 404 3000 where the key may not see (D9)', async () => {
    const { ws, aKey, aDescKey, cohorts } = await hierarchy();
    const other = await h.newOrg();
    const foreign = await create(other.private_key, { name: 'other org', query: PAGEVIEWS });
    const lookalike = await h.newLookalike(ws.a, PAGEVIEWS);
    const del = (key: string, id: string) => h.request('DELETE', `${COHORTS}/${id}`, { key });
    expectError(await del(aKey, cohorts.root.id), 403, 2001);
    expectError(await del(aKey, lookalike.id), 403, 2001);
    expectError(await del(aKey, cohorts.a1.id), 404, 3000);
    expectError(await del(aDescKey, cohorts.b.id), 404, 3000);
    expectError(await del(aDescKey, foreign.id), 404, 3000);
    expect((await del(aDescKey, cohorts.a1.id)).status).toBe(200);
    expect(names(await h.request('GET', COHORTS, { key: aKey }))).toEqual(['Lookalike', 'a', 'root']);
  });
});

describe('live audience size (D19)', () => {
  it('follows membership as events arrive; a disabled cohort has no members', async () => {
    const org = await h.newOrg();
    const key = org.private_key;
    const cohort = await create(key, { name: 'two pageviews', query: TWO_PAGEVIEWS });
    const size = async () => {
      const one = await h.request('GET', `${COHORTS}/${cohort.id}`, { key });
      const listed = (await h.request('GET', COHORTS, { key })).body.find((c: { id: string }) => c.id === cohort.id);
      expect(listed.live_audience_size).toBe(one.body.live_audience_size);
      return one.body.live_audience_size;
    };
    const user = randomUUID();
    expect(await size()).toBe(0);
    await track(org.organization_id, user, 'Pageview');
    expect(await size()).toBe(0);
    await track(org.organization_id, user, 'Pageview');
    expect(await size()).toBe(1);
    await track(org.organization_id, randomUUID(), 'Pageview');
    expect(await size()).toBe(1);
    const disabled = await h.request('PATCH', `${COHORTS}/${cohort.id}`, { key, body: { state: 'Disabled' } });
    expect(disabled.body.live_audience_size).toBe(0);
    expect(await size()).toBe(0);
  });

  it('evaluates a changed query for the events that follow (the plan is changed on PATCH)', async () => {
    const org = await h.newOrg();
    const key = org.private_key;
    const cohort = await create(key, { name: 'signups', query: { event: 'Signup' } });
    const size = async () => (await h.request('GET', `${COHORTS}/${cohort.id}`, { key })).body.live_audience_size;
    await track(org.organization_id, randomUUID(), 'Click');
    expect(await size()).toBe(0);
    expect((await h.request('PATCH', `${COHORTS}/${cohort.id}`, { key, body: { query: PAGEVIEWS } })).status).toBe(200);
    await track(org.organization_id, randomUUID(), 'Pageview');
    expect(await size()).toBe(1);
  });
});

describe('PermutiveAPI-style client habits (D1, D5)', () => {
  it('key only in k, JSON content type on GET/DELETE without a body, trailing slash, echoed cohort in PATCH', async () => {
    const { private_key: key } = await h.newOrg();
    const json = { 'Content-Type': 'application/json' };
    const created = await h.request('POST', `${COHORTS}/`, {
      key,
      keyIn: 'query',
      body: { id: null, name: 'n', query: PAGEVIEWS, description: null, tags: null },
    });
    expect(created.status).toBe(201);
    const path = `${COHORTS}/${created.body.id}`;
    const listed = await h.request('GET', `${COHORTS}/`, { key, keyIn: 'query', headers: json });
    expect(listed.status).toBe(200);
    expect(listed.headers.get('content-type')).toMatch(/^application\/json/);
    const read = await h.request('GET', path, { key, keyIn: 'query', headers: json });
    expect(read.body).toEqual(created.body);
    const echoed = { ...read.body, name: 'renamed', description: null };
    const patched = await h.request('PATCH', path, { key, keyIn: 'query', body: echoed });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: created.body.id, code: created.body.code, name: 'renamed' });
    const deleted = await h.request('DELETE', path, { key, keyIn: 'query', headers: json });
    expect({ status: deleted.status, text: deleted.text }).toEqual({ status: 200, text: '' });
  });
});

describe('references across workspaces (D41)', () => {
  /** An organization with two sibling workspaces a and b below the root, a `workspace` key for each, and the root's. */
  const siblings = async () => {
    const org = await h.newOrg();
    const a = await h.newWorkspace(org.workspace_id, 'a');
    const b = await h.newWorkspace(org.workspace_id, 'b');
    return { org, a, b, aKey: await h.newKey(a, 'workspace'), bKey: await h.newKey(b, 'workspace') };
  };
  /** The same error with the named code (the cause's last mention) replaced, so hidden and unknown compare. */
  const withoutCode = (answer: { body: any }, code: string) => {
    const cause = String(answer.body.error.cause);
    const at = cause.lastIndexOf(code);
    return { message: answer.body.error.message, cause: at < 0 ? cause : `${cause.slice(0, at)}<code>${cause.slice(at + code.length)}` };
  };

  it('refuses a transition clause naming a sibling workspace\u2019s cohort, on create and PATCH, as an unknown code', async () => {
    const { org, aKey, bKey } = await siblings();
    const secret = await create(aKey, { name: 'a members', query: PAGEVIEWS });
    const shared = await create(org.private_key, { name: 'root cohort', query: PAGEVIEWS });
    const own = await create(bKey, { name: 'b cohort', query: PAGEVIEWS });
    const unknownCode = secret.code + 1000;
    const query = (code: number) => ({ and: [PAGEVIEWS, { has_entered: { segment: code } }] });

    const hidden = await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: query(secret.code) } });
    const unknown = await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: query(unknownCode) } });
    expectBadBody(hidden, 'query.and[1].has_entered.segment');
    expectBadBody(unknown, 'query.and[1].has_entered.segment');
    expect(withoutCode(hidden, String(secret.code))).toEqual(withoutCode(unknown, String(unknownCode)));

    const patchedHidden = await h.request('PATCH', `${COHORTS}/${own.id}`, { key: bKey, body: { query: query(secret.code) } });
    const patchedUnknown = await h.request('PATCH', `${COHORTS}/${own.id}`, { key: bKey, body: { query: query(unknownCode) } });
    expectBadBody(patchedHidden, 'query.and[1].has_entered.segment');
    expect(withoutCode(patchedHidden, String(secret.code))).toEqual(withoutCode(patchedUnknown, String(unknownCode)));
    expect((await h.request('GET', `${COHORTS}/${own.id}`, { key: bKey })).body.query).toEqual(PAGEVIEWS);
    expect(names(await h.request('GET', COHORTS, { key: bKey }))).toEqual(['b cohort', 'root cohort']);

    // An ancestor's cohort stays nameable, and the refused requests left no reference behind: a deletes its cohort.
    expect((await h.request('POST', COHORTS, { key: bKey, body: { name: 'ok', query: query(shared.code) } })).status).toBe(201);
    expect((await h.request('DELETE', `${COHORTS}/${secret.id}`, { key: aKey })).status).toBe(200);
  });

  it('refuses a provider naming a sibling workspace\u2019s import, on create and PATCH, as an unknown import', async () => {
    const { org, a, bKey } = await siblings();
    const { imports } = h.services;
    await imports.createImport(org.organization_id, a, { name: 'a data', code: 'a-data', relation: '3rd', kind: 'segments' });
    await imports.createImport(org.organization_id, a, {
      name: 'a crm',
      code: 'a-crm',
      relation: '2nd',
      kind: 'connections',
      schema: { plan: 'string' },
    });
    await imports.createImport(org.organization_id, org.workspace_id, { name: 'root data', code: 'root-data', relation: '3rd', kind: 'segments' });
    const segment = (provider: string) => ({ and: [PAGEVIEWS, { in_third_party_segment: { provider, segment: 'fans' } }] });
    const rows = (provider: string) => ({ in_connections_import_segment: { provider } });
    const own = await create(bKey, { name: 'b cohort', query: PAGEVIEWS });

    const hidden = await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: segment('a-data') } });
    const unknown = await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: segment('no-such') } });
    expectBadBody(hidden, 'query.and[1].in_third_party_segment.provider');
    expect(withoutCode(hidden, 'a-data')).toEqual(withoutCode(unknown, 'no-such'));
    const hiddenRows = await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: rows('a-crm') } });
    expectBadBody(hiddenRows, 'query.in_connections_import_segment.provider');
    expect(withoutCode(hiddenRows, 'a-crm')).toEqual(withoutCode(await h.request('POST', COHORTS, { key: bKey, body: { name: 'spy', query: rows('nope') } }), 'nope'));

    const patched = await h.request('PATCH', `${COHORTS}/${own.id}`, { key: bKey, body: { query: segment('a-data') } });
    expectBadBody(patched, 'query.and[1].in_third_party_segment.provider');
    expect(withoutCode(patched, 'a-data')).toEqual(withoutCode(unknown, 'no-such'));
    expect((await h.request('GET', `${COHORTS}/${own.id}`, { key: bKey })).body.query).toEqual(PAGEVIEWS);
    expect(names(await h.request('GET', COHORTS, { key: bKey }))).toEqual(['b cohort']);

    // An ancestor's import and the workspace's own are usable.
    expect((await h.request('POST', COHORTS, { key: bKey, body: { name: 'ok', query: segment('root-data') } })).status).toBe(201);
    const inA = await h.request('POST', COHORTS, { key: org.private_key, body: { name: 'in a', query: segment('a-data'), workspace_id: a } });
    expect(inA.status).toBe(201);
  });

  it('names in a 409 cause only the referencing cohorts the deleting key can see', async () => {
    const { org, aKey, bKey } = await siblings();
    const rootOnlyKey = await h.newKey(org.workspace_id, 'workspace');
    const target = await create(rootOnlyKey, { name: 'target', query: PAGEVIEWS });
    const named = (key: string) => create(key, { name: 'referrer', query: { has_entered: { segment: target.code } } });
    const fromRoot = await named(rootOnlyKey);
    const fromA = await named(aKey);
    const fromB = await named(bKey);

    const refused = await h.request('DELETE', `${COHORTS}/${target.id}`, { key: rootOnlyKey });
    expectError(refused, 409, 4000);
    expect(refused.body.error.cause).toBe(`cohort ${target.code} is named by the queries of cohorts ${fromRoot.code} "referrer" and of 2 cohorts this key cannot see`);

    // The organization's `descendants` key sees them all.
    const all = await h.request('DELETE', `${COHORTS}/${target.id}`, { key: org.private_key });
    expectError(all, 409, 4000);
    const codes = [fromRoot.code, fromA.code, fromB.code].sort((x, y) => x - y).map((code) => `${code} "referrer"`).join(', ');
    expect(all.body.error.cause).toBe(`cohort ${target.code} is named by the queries of cohorts ${codes}`);
  });
});

describe('backfill progress from the first answer on (D19)', () => {
  // The sweep is held before it reads or writes anything until `release` is called: what a slow start (counting
  // 30,000 users) looks like, without depending on timing.
  let held: Promise<void> | undefined;
  let release = (): void => undefined;
  const hold = () => {
    held = new Promise<void>((resolve) => {
      release = () => {
        held = undefined;
        resolve();
      };
    });
  };
  let g: CohortsHarness;
  beforeAll(async () => {
    g = await startCohortsHarness({ beforeSweep: async () => held });
  });
  afterAll(async () => {
    release();
    await g?.close();
  });

  it('shows backfill in the create and PATCH answers and every GET until the sweep is done, before the sweep saved anything', async () => {
    const org = await g.newOrg();
    const key = org.private_key;
    for (let i = 0; i < 3; i++) await trackEvent(g, org.organization_id, randomUUID(), 'Pageview');
    hold();
    const created = await g.request('POST', COHORTS, { key, body: { name: 'readers', query: PAGEVIEWS } });
    expect(created.status).toBe(201);
    expect(created.body.backfill).toEqual({ state: 'running', users_done: 0, users_total: expect.any(Number) });
    expect(created.body.backfill.users_total).toBeGreaterThanOrEqual(1);
    const read = await g.request('GET', `${COHORTS}/${created.body.id}`, { key });
    expect(read.body.backfill).toEqual(created.body.backfill);
    // The list's summary carries the same progress (what `audience cohorts list` shows).
    const listed = await g.request('GET', COHORTS, { key });
    expect(listed.body.find((c: { id: string }) => c.id === created.body.id).backfill).toEqual(created.body.backfill);

    release();
    await g.services.backfill.whenSwept(org.organization_id);
    const done = await g.request('GET', `${COHORTS}/${created.body.id}`, { key });
    expect(done.body).not.toHaveProperty('backfill');
    expect((await g.request('GET', COHORTS, { key })).body.find((c: { id: string }) => c.id === created.body.id)).not.toHaveProperty('backfill');
    expect(done.body.live_audience_size).toBe(3);

    hold();
    const patched = await g.request('PATCH', `${COHORTS}/${created.body.id}`, { key, body: { query: TWO_PAGEVIEWS } });
    expect(patched.status).toBe(200);
    // The last sweep counted 3 users: that is the total shown until the new sweep counts again.
    expect(patched.body.backfill).toEqual({ state: 'running', users_done: 0, users_total: 3 });
    expect((await g.request('GET', `${COHORTS}/${created.body.id}`, { key })).body.backfill).toEqual(patched.body.backfill);
    release();
    await g.services.backfill.whenSwept(org.organization_id);
    const after = await g.request('GET', `${COHORTS}/${created.body.id}`, { key });
    expect(after.body).not.toHaveProperty('backfill');
    expect(after.body.live_audience_size).toBe(0);
  });

  it('shows no backfill when the organization has no users to visit', async () => {
    const org = await g.newOrg();
    hold();
    const created = await g.request('POST', COHORTS, { key: org.private_key, body: { name: 'empty', query: PAGEVIEWS } });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('backfill');
    expect((await g.request('GET', `${COHORTS}/${created.body.id}`, { key: org.private_key })).body).not.toHaveProperty('backfill');
    release();
  });
});
