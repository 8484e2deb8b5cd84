// D20 over HTTP: offline cohorts are computed over stored history by POST /cohorts-api/v2/cohorts/{id}/recompute
// (202 with progress), their size is the last computed one and their members are stored; the progress of a
// real-time cohort's sweep is on GET one while it runs (D19).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EMPTY_CONTEXT } from '../../engine/index.js';
import { createRng, randomEvents } from '../../test/differential/generate.js';
import { evaluateReference } from '../../test/reference/index.js';
import { startTestService, type TestService } from '../../test/support/service.js';
import { prefixEnd } from '../store/contract.js';
import type { Cohort } from '../domain/cohorts/index.js';
import { offlineMembersPrefix } from './keys.js';
import { storedHistory } from '../../test/support/backfill-harness.js';

const COHORTS = '/cohorts-api/v2/cohorts';
const userId = (n: number): string => `c0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
const QUERY = { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } };

let service: TestService;
let org: string;

beforeEach(async () => {
  service = await startTestService();
  org = service.keys.organization_id;
});

afterEach(async () => {
  await service.close();
});

async function seed(users: readonly string[], seed: number): Promise<void> {
  const rng = createRng(seed);
  const { pipeline } = service.running.services;
  await Promise.all(
    users.map(async (user, u) => {
      const events = randomEvents(rng, rng.int(1, 20)).map((event, i) => ({
        id: `e-${seed}-${u}-${i}`,
        name: event.name,
        time: new Date(event.time).toISOString(),
        timeMs: event.time,
        properties: event.properties,
      }));
      await pipeline.append({ org, user, events });
    }),
  );
}

async function referenceMembers(users: readonly string[], query: unknown): Promise<string[]> {
  const { store } = service.running.services;
  const members: string[] = [];
  for (const user of users) {
    const steps = evaluateReference([{ code: 1, query }], await storedHistory(store, org, user), EMPTY_CONTEXT);
    if (steps[steps.length - 1]?.memberships.includes(1) === true) members.push(user);
  }
  return members;
}

async function storedMembers(code: number): Promise<string[]> {
  const { store } = service.running.services;
  const prefix = offlineMembersPrefix(org, code);
  const out: string[] = [];
  for await (const [key] of store.iterate({ gte: prefix, lt: prefixEnd(prefix) })) out.push(key.slice(prefix.length));
  return out.sort();
}

const cohortOf = (id: string): Cohort => service.running.services.cohorts.get(id) as Cohort;

describe('D20: offline cohorts are computed over history on demand', () => {
  it('POST recompute answers 202 with progress; the size is the last computed one and the members are stored', async () => {
    const users = Array.from({ length: 40 }, (_, i) => userId(i + 1));
    await seed(users, 2001);
    const created = await service.json<{ id: string; code: number }>('POST', COHORTS, { body: { name: 'offline', query: QUERY, segment_type: 'offline' } });
    expect(created.status).toBe(201);
    expect(created.body).not.toHaveProperty('live_audience_size');

    const started = await service.json<{ backfill: { state: string; users_done: number; users_total: number } }>('POST', `${COHORTS}/${created.body.id}/recompute`);
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ id: created.body.id, code: created.body.code, backfill: { state: 'running' } });
    await service.running.services.backfill.whenComputed(cohortOf(created.body.id));

    const expected = await referenceMembers(users, QUERY);
    expect(expected.length).toBeGreaterThan(0);
    const read = await service.json<Record<string, unknown>>('GET', `${COHORTS}/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body['live_audience_size']).toBe(expected.length);
    expect(read.body).not.toHaveProperty('backfill');
    expect(await storedMembers(created.body.code)).toEqual([...expected].sort());

    // Not evaluated per event: new events change nothing until the next computation.
    const more = Array.from({ length: 20 }, (_, i) => userId(100 + i));
    await seed([...users.slice(0, 10), ...more], 2002);
    expect((await service.json<Record<string, unknown>>('GET', `${COHORTS}/${created.body.id}`)).body['live_audience_size']).toBe(expected.length);
    expect((await service.request('POST', `${COHORTS}/${created.body.id}/recompute`)).status).toBe(202);
    await service.running.services.backfill.whenComputed(cohortOf(created.body.id));
    const again = await referenceMembers([...users, ...more], QUERY);
    expect((await service.json<Record<string, unknown>>('GET', `${COHORTS}/${created.body.id}`)).body['live_audience_size']).toBe(again.length);
    expect(await storedMembers(created.body.code)).toEqual([...again].sort());

    // The last computed size survives a restart.
    service = await service.restart();
    expect((await service.json<Record<string, unknown>>('GET', `${COHORTS}/${created.body.id}`)).body['live_audience_size']).toBe(again.length);
  });

  it('a disabled cohort is not computed (409 4000); a real-time cohort answers its sweep; needs a private key', async () => {
    const users = Array.from({ length: 10 }, (_, i) => userId(i + 1));
    await seed(users, 2003);
    const offline = await service.json<{ id: string }>('POST', COHORTS, { body: { name: 'o', query: QUERY, segment_type: 'offline' } });
    await service.request('PATCH', `${COHORTS}/${offline.body.id}`, { body: { state: 'Disabled' } });
    const refused = await service.json<{ error: { code: number } }>('POST', `${COHORTS}/${offline.body.id}/recompute`);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe(4000);

    const live = await service.json<{ id: string; code: number }>('POST', COHORTS, { body: { name: 'live', query: QUERY } });
    await service.running.services.backfill.whenSwept(org);
    const answer = await service.json<{ backfill: unknown; live_audience_size: number }>('POST', `${COHORTS}/${live.body.id}/recompute`);
    expect(answer.status).toBe(200);
    expect(answer.body.backfill).toEqual({ state: 'done', users_done: users.length, users_total: users.length });
    expect(answer.body.live_audience_size).toBe((await referenceMembers(users, QUERY)).length);

    const anonymous = await service.request('POST', `${COHORTS}/${live.body.id}/recompute`, { key: service.keys.public_key });
    expect(anonymous.status).toBe(403);
    expect((await service.request('POST', `${COHORTS}/00000000-0000-4000-8000-000000000000/recompute`)).status).toBe(404);
  });
});
