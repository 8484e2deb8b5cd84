// The dashboard's reads (issue 16): a cohort's last day by minute (entries, exits, sizes; kept across a restart from
// the transitions log), "explain" (which clauses of a query hold for a user, from the whole history, now), the
// cohorts a user is in, and the user an alias points to.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../support/service.js';

let h: TestService | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface Series {
  size: number;
  minutes: { time: string; size: number; entered: number; exited: number }[];
}

async function track(service: TestService, user: string, name: string, properties: Record<string, unknown> = {}): Promise<void> {
  const answer = await service.json('POST', '/v2.0/events', { key: service.keys.public_key, body: { user_id: user, name, properties } });
  expect(answer.status).toBe(200);
}

async function createCohort(service: TestService, name: string, query: unknown): Promise<{ id: string; code: number }> {
  const created = await service.json<{ id: string; code: number }>('POST', '/cohorts-api/v2/cohorts', { body: { name, query } });
  expect(created.status).toBe(201);
  return created.body;
}

describe('a cohort\'s series', () => {
  it('counts live entries and exits in the current minute, sizes back from now, and keeps them across a restart', async () => {
    let service = (h = await startTestService());
    // Exactly one page view: the first enters, the second exits.
    const cohort = await createCohort(service, 'One view', { event: 'Pageview', frequency: { equal_to: 1 } });
    const [a, b] = [randomUUID(), randomUUID()];
    await track(service, a, 'Pageview', { page: '/a' });
    await track(service, b, 'Pageview', { page: '/b' });
    await track(service, b, 'Pageview', { page: '' });
    const read = async () => {
      const answer = await service.json<Series>('GET', `/cohorts-api/v2/cohorts/${cohort.id}/series`);
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const check = (series: Series) => {
      expect(series.size).toBe(1);
      expect(series.minutes).toHaveLength(1440);
      const last = series.minutes[1439] as Series['minutes'][number];
      expect(Date.parse(last.time)).toBeLessThanOrEqual(Date.now());
      const totals = series.minutes.reduce((sum, m) => ({ entered: sum.entered + m.entered, exited: sum.exited + m.exited }), { entered: 0, exited: 0 });
      expect(totals).toEqual({ entered: 2, exited: 1 });
      // Sizes before the first change are 0, and the last minute ends at the size now.
      expect(series.minutes[0]?.size).toBe(0);
      expect(last.size).toBe(1);
    };
    check(await read());
    h = service = await service.restart();
    check(await read());
  });

  it('is 404 for a cohort the key cannot see', async () => {
    const service = (h = await startTestService());
    expect((await service.json('GET', `/cohorts-api/v2/cohorts/${randomUUID()}/series`)).status).toBe(404);
  });
});

describe('explain', () => {
  it('says which clauses hold for a user, from the whole history, beside the live membership', async () => {
    const service = (h = await startTestService());
    const query = {
      and: [
        { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } },
        { or: [{ event: 'Purchase' }, { event: 'Signup' }] },
      ],
    };
    const cohort = await createCohort(service, 'Engaged buyers', query);
    const user = randomUUID();
    await track(service, user, 'Pageview');
    await track(service, user, 'Pageview');
    await track(service, user, 'Signup');
    const explain = async (id: string) => service.json<Record<string, unknown>>('GET', `/cohorts-api/v2/cohorts/${cohort.id}/explain?user_id=${id}`);
    const answer = await explain(user);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      user_id: user,
      cohort: { id: cohort.id, code: cohort.code, name: 'Engaged buyers' },
      live_member: true,
      member: true,
      events: 3,
      groups: [
        { path: 'query.and[0]', holds: true, clauses: [{ path: 'query.and[0]', clause: query.and[0], holds: true }] },
        {
          path: 'query.and[1]',
          holds: true,
          clauses: [
            { path: 'query.and[1].or[0]', clause: { event: 'Purchase' }, holds: false },
            { path: 'query.and[1].or[1]', clause: { event: 'Signup' }, holds: true },
          ],
        },
      ],
    });

    const other = randomUUID();
    await track(service, other, 'Purchase');
    const out = await explain(other);
    expect(out.body).toMatchObject({ live_member: false, member: false, groups: [{ holds: false }, { holds: true }] });

    expect((await explain(randomUUID())).status).toBe(404);
    expect((await service.json('GET', `/cohorts-api/v2/cohorts/${cohort.id}/explain`)).status).toBe(400);
  });

  it('evaluates a clause naming another cohort with that cohort', async () => {
    const service = (h = await startTestService());
    const viewers = await createCohort(service, 'Viewers', { event: 'Pageview' });
    const cohort = await createCohort(service, 'Entered viewers', { has_entered: { segment: viewers.code } });
    const user = randomUUID();
    await track(service, user, 'Pageview');
    const answer = await service.json<{ member: boolean; live_member: boolean }>('GET', `/cohorts-api/v2/cohorts/${cohort.id}/explain?user_id=${user}`);
    expect(answer.body).toMatchObject({ member: true, live_member: true });
  });
});

describe('a user\'s cohorts and alias lookup', () => {
  it('lists the visible cohorts a user is in now, and finds a user by alias', async () => {
    const service = (h = await startTestService());
    const viewers = await createCohort(service, 'Viewers', { event: 'Pageview' });
    await createCohort(service, 'Buyers', { event: 'Purchase' });
    const user = randomUUID();
    const identified = await service.json('POST', '/v2.0/identify', { key: service.keys.public_key, body: { user_id: user, aliases: [{ id: 'u/1@example.com', tag: 'email', priority: 0 }] } });
    expect(identified.status).toBe(200);
    await track(service, user, 'Pageview');
    const cohorts = await service.json<unknown[]>('GET', `/cohorts-api/v2/users/${user}/cohorts`);
    expect(cohorts.body).toEqual([{ id: viewers.id, code: viewers.code, name: 'Viewers', segment_type: 'real_time' }]);
    expect((await service.json('GET', `/cohorts-api/v2/users/${randomUUID()}/cohorts`)).status).toBe(404);

    const found = await service.json('GET', `/v2.0/aliases/email/${encodeURIComponent('u/1@example.com')}`);
    expect(found).toMatchObject({ status: 200, body: { id: 'u/1@example.com', tag: 'email', platform_id: user } });
    expect((await service.json('GET', '/v2.0/aliases/email/nobody')).status).toBe(404);
    expect((await service.json('GET', '/v2.0/aliases/email/nobody', { key: service.keys.public_key })).status).toBe(403);
  });
});
