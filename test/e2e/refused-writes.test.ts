// D41 end to end: a request answered 4xx changes nothing. One case per route that writes: each sends a request that
// is refused (where possible because of a bad item late in it, after good ones) and compares a read of the state
// the request would have changed before and after it.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let s: TestService;
let org: string;
let importId: string;
let crmId: string;
let cohortId: string;
let knownUser: string;
const knownAlias = { tag: 'email', id: `known-${randomUUID()}@example.com` };

const V1 = '/audience-api/v1';
const COHORTS = '/cohorts-api/v2/cohorts';

async function ok(method: string, path: string, body?: unknown): Promise<any> {
  const reply = await s.json<any>(method, path, { body });
  if (reply.status >= 300) throw new Error(`${method} ${path}: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** A cohort without what its sweep and live counting change on their own (D19): `live_audience_size`, `backfill`. */
function stored(cohort: Record<string, unknown>): Record<string, unknown> {
  const { live_audience_size: _size, backfill: _backfill, ...rest } = cohort;
  return rest;
}

/** A read of everything the cases could change (state only: no clocks or request ids). */
async function snapshot(): Promise<unknown> {
  const identity = s.running.services.identity;
  const newAliases = await Promise.all(
    ['late-bad-1', 'late-bad-2', 'late-bad-3', 'late-bad-4', 'late-bad-5'].map((id) =>
      identity.findAliasUser(org, { tag: 'email', id: `${id}@example.com` }),
    ),
  );
  return {
    knownAlias: await identity.findAliasUser(org, knownAlias),
    newAliases,
    knownUserAliases: await ok('GET', `/v2.0/users/${knownUser}/aliases`),
    knownUserEvents: await ok('GET', `/v2.0/events?user_id=${knownUser}`),
    cohorts: (await ok('GET', COHORTS)).map(stored),
    cohort: stored(await ok('GET', `${COHORTS}/${cohortId}`)),
    imports: await ok('GET', `${V1}/imports`),
    segments: await ok('GET', `${V1}/imports/${importId}/segments`),
    workspaces: await ok('GET', '/admin/v1/workspaces'),
    keys: await ok('GET', '/admin/v1/keys'),
  };
}

const newAlias = (n: number, priority = 0) => ({ tag: 'email', id: `late-bad-${n}@example.com`, priority });
const ref = (n: number) => ({ alias: { tag: 'email', id: `late-bad-${n}@example.com` } });

beforeAll(async () => {
  s = await startTestService();
  org = s.keys.organization_id;
  knownUser = randomUUID();
  await ok('POST', '/v2.0/identify', { user_id: knownUser, aliases: [{ ...knownAlias, priority: 1 }] });
  await ok('POST', '/v2.0/events', { user_id: knownUser, name: 'Pageview', properties: { n: 1 } });
  importId = (await ok('POST', `${V1}/imports`, { name: 'Panel', code: 'panel', relation: '3rd', kind: 'segments', identifiers: ['email'] })).id;
  await ok('POST', `${V1}/imports/${importId}/segments`, { name: 'Sports', code: 'sports' });
  crmId = (await ok('POST', `${V1}/imports`, { name: 'CRM', code: 'crm', relation: '3rd', kind: 'connections', schema: { plan: 'string' } })).id;
  cohortId = (await ok('POST', COHORTS, { name: 'Readers', query: { event: 'Pageview' } })).id;
}, 60_000);

afterAll(async () => {
  await s?.close();
});

interface Case {
  readonly route: string;
  readonly method: string;
  readonly path: () => string;
  readonly body?: () => unknown;
  readonly status: number;
}

const cases: Case[] = [
  {
    route: 'identify: a new alias, then the known one, then a malformed alias',
    method: 'POST',
    path: () => '/v2.0/identify',
    body: () => ({ user_id: randomUUID(), aliases: [newAlias(1), { ...knownAlias, priority: 0 }, { tag: 'email' }] }),
    status: 400,
  },
  {
    route: 'aliases: an alias of another user (409)',
    method: 'POST',
    path: () => `/v2.0/users/${randomUUID()}/aliases`,
    body: () => ({ ...knownAlias }),
    status: 409,
  },
  {
    route: 'aliases: a malformed alias of the known user',
    method: 'POST',
    path: () => `/v2.0/users/${knownUser}/aliases`,
    body: () => ({ tag: 'email', id: 'late-bad-1@example.com', priority: 'high' }),
    status: 400,
  },
  {
    route: 'events: new aliases and a property of the wrong type (1007)',
    method: 'POST',
    path: () => '/v2.0/events',
    body: () => ({ aliases: [newAlias(2)], name: 'Pageview', properties: { n: 'one' } }),
    status: 400,
  },
  {
    route: 'events: the known user, an event too far in the future',
    method: 'POST',
    path: () => '/v2.0/events',
    body: () => ({ user_id: knownUser, name: 'Pageview', time: '2999-01-01T00:00:00Z', properties: { n: 2 } }),
    status: 400,
  },
  {
    route: 'stateful segmentation: a new alias and an event of the wrong type',
    method: 'POST',
    path: () => '/ccs/v1/segmentation',
    body: () => ({
      aliases: [newAlias(3)],
      events: [
        { name: 'Pageview', time: new Date().toISOString(), properties: { n: 3 } },
        { name: 'Pageview', time: new Date().toISOString(), properties: { n: 'three' } },
      ],
    }),
    status: 400,
  },
  {
    route: 'cohorts create: a bad query',
    method: 'POST',
    path: () => COHORTS,
    body: () => ({ name: 'Bad', query: { event: 'Pageview', frequency: { nonsense: 1 } } }),
    status: 400,
  },
  {
    route: 'cohorts patch: a good name and a bad query',
    method: 'PATCH',
    path: () => `${COHORTS}/${cohortId}`,
    body: () => ({ name: 'Renamed', query: { nonsense: true } }),
    status: 400,
  },
  {
    route: 'cohorts delete: an unknown cohort',
    method: 'DELETE',
    path: () => `${COHORTS}/${randomUUID()}`,
    status: 404,
  },
  {
    route: 'cohorts recompute: an unknown cohort',
    method: 'POST',
    path: () => `${COHORTS}/${randomUUID()}/recompute`,
    status: 404,
  },
  {
    route: 'imports create: a taken code',
    method: 'POST',
    path: () => `${V1}/imports`,
    body: () => ({ name: 'Again', code: 'panel', relation: '3rd', kind: 'segments' }),
    status: 409,
  },
  {
    route: 'segments create: a taken code',
    method: 'POST',
    path: () => `${V1}/imports/${importId}/segments`,
    body: () => ({ name: 'Again', code: 'sports' }),
    status: 409,
  },
  {
    route: 'segments batch: a good create, then more than 5000 operations',
    method: 'PATCH',
    path: () => `${V1}/imports/${importId}/segments`,
    body: () => ({
      operations: [
        { operation: 'Create', name: 'News', code: 'news' },
        ...Array.from({ length: 5000 }, (_, i) => ({ operation: 'Create', name: `n${i}`, code: `n${i}` })),
      ],
    }),
    status: 400,
  },
  {
    route: 'segment patch by code: a good name and a bad cpm',
    method: 'PATCH',
    path: () => `${V1}/imports/${importId}/segments/code/sports`,
    body: () => ({ name: 'Renamed', cpm: -1 }),
    status: 400,
  },
  {
    route: 'segment patch by id: an unknown segment',
    method: 'PATCH',
    path: () => `${V1}/imports/${importId}/segments/${randomUUID()}`,
    body: () => ({ name: 'Renamed' }),
    status: 404,
  },
  {
    route: 'segment delete by id: an unknown segment',
    method: 'DELETE',
    path: () => `${V1}/imports/${importId}/segments/${randomUUID()}`,
    status: 404,
  },
  {
    route: 'segment delete by code: an unknown segment',
    method: 'DELETE',
    path: () => `${V1}/imports/${importId}/segments/code/none`,
    status: 404,
  },
  {
    route: 'members: new aliases to add, then a user_id that is not a UUID',
    method: 'POST',
    path: () => `${V1}/imports/${importId}/segments/code/sports/members`,
    body: () => ({ add: [ref(4), { user_id: knownUser }], remove: [{ user_id: 'not-a-uuid' }] }),
    status: 400,
  },
  {
    route: 'members: new aliases to add, then an alias with a tag that is not an identifier',
    method: 'POST',
    path: () => `${V1}/imports/${importId}/segments/code/sports/members`,
    body: () => ({ add: [ref(4), { alias: { tag: 'phone', id: '1' } }] }),
    status: 400,
  },
  {
    route: 'rows: a row of a new alias, then a row whose user_id is not a UUID',
    method: 'POST',
    path: () => `${V1}/imports/${crmId}/rows`,
    body: () => [{ ...ref(5), properties: { plan: 'gold' } }, { user_id: 'not-a-uuid', properties: {} }],
    status: 400,
  },
  {
    route: 'rows: a row of a new alias, then a property outside the schema',
    method: 'POST',
    path: () => `${V1}/imports/${crmId}/rows`,
    body: () => [{ ...ref(5), properties: { plan: 'gold' } }, { user_id: randomUUID(), properties: { tier: 'x' } }],
    status: 400,
  },
  {
    route: 'admin workspaces: an unknown parent',
    method: 'POST',
    path: () => '/admin/v1/workspaces',
    body: () => ({ name: 'Child', parent_id: randomUUID() }),
    status: 404,
  },
  {
    route: 'admin keys: a good workspace and a bad type',
    method: 'POST',
    path: () => '/admin/v1/keys',
    body: () => ({ workspace_id: s.keys.workspace_id, type: 'secret' }),
    status: 400,
  },
  {
    route: 'admin keys delete: an unknown key',
    method: 'DELETE',
    path: () => `/admin/v1/keys/${randomUUID()}`,
    status: 404,
  },
];

describe('D41: a refused request changes nothing', () => {
  it.each(cases)('$route', async ({ method, path, body, status }) => {
    const before = await snapshot();
    const reply = await s.json<any>(method, path(), { body: body?.() });
    expect({ status: reply.status, body: reply.body }).toMatchObject({ status, body: { error: expect.anything() } });
    expect(await snapshot()).toEqual(before);
  });
});
