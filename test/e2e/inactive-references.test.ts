// A real-time cohort may name a cohort that is disabled or offline (E21, D19): the service keeps evaluating it,
// with the named cohort never entered, instead of failing to compile the plan. Through the whole service.

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ threads: 1 });
});
afterAll(async () => {
  await service?.close();
});

async function createCohort(body: Record<string, unknown>): Promise<{ id: string; code: number }> {
  const created = await service.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { body });
  expect(created.status).toBe(201);
  return created.body;
}

async function sizeOf(id: string): Promise<number> {
  const read = await service.json<{ live_audience_size: number }>('GET', `/cohorts-api/v2/cohorts/${id}`);
  return read.body.live_audience_size;
}

describe('E21: queries naming inactive cohorts', () => {
  it('evaluates a cohort naming a disabled and an offline cohort: has_entered never holds, has_not_entered does', async () => {
    const buyers = await createCohort({ name: 'buyers', query: { event: 'Buy' } });
    const offline = await createCohort({ name: 'offline buyers', query: { event: 'Buy' }, segment_type: 'offline' });
    const entered = await createCohort({
      name: 'entered buyers',
      query: { or: [{ has_entered: { segment: buyers.code } }, { has_entered: { segment: offline.code } }] },
    });
    const notEntered = await createCohort({
      name: 'never entered buyers',
      query: { and: [{ has_not_entered: { segment: buyers.code } }, { has_not_entered: { segment: offline.code } }] },
    });
    const disabled = await service.json('PATCH', `/cohorts-api/v2/cohorts/${buyers.id}`, { body: { state: 'Disabled' } });
    expect(disabled.status).toBe(200);

    const user = randomUUID();
    const tracked = await service.json('POST', '/v2.0/events', {
      key: service.keys.public_key,
      body: { name: 'Buy', user_id: user, properties: {} },
    });
    expect(tracked.status).toBe(200);
    const stateless = await service.json<{ state: { cohorts: string[] } }>('POST', '/ccs/v1/segmentation/stateless', {
      key: service.keys.public_key,
      // The same user: the stateless call publishes its event after replying (D24), so another user's would race.
      body: { user_id: user, events: [{ name: 'Buy', time: new Date().toISOString(), properties: {} }] },
    });
    expect(stateless.status).toBe(200);
    expect(stateless.body.state.cohorts).toEqual([String(notEntered.code)]);

    expect(await sizeOf(entered.id)).toBe(0);
    expect(await sizeOf(notEntered.id)).toBe(1);
  });
});
