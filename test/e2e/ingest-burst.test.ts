// Bursts of concurrent track calls over HTTP (issue 5, D19, D29): 1,000 at once for one user store exactly 1,000
// events and put the user in a `>= 1000` cohort exactly once; across 1,000 users a `>= 1` cohort counts 1,000.

import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { validateQuery } from '../../engine/index.js';
import { startIdentityHarness, type IdentityHarness } from './support-identity.js';

const harnesses: IdentityHarness[] = [];
afterEach(async () => {
  for (const harness of harnesses.splice(0)) await harness.close();
});

async function start(): Promise<IdentityHarness> {
  const harness = await startIdentityHarness();
  harnesses.push(harness);
  return harness;
}

/** Creates an enabled real-time cohort in the organization's root workspace and tells the pipeline (D14, D19). */
async function createCohort(h: IdentityHarness, query: unknown): Promise<number> {
  const validated = validateQuery(query);
  if (!validated.ok) throw new Error(`invalid test query: ${JSON.stringify(validated.problems)}`);
  const cohort = await h.services.cohorts.create({
    workspaceId: h.keys.workspace_id,
    name: 'burst cohort',
    query,
    ast: validated.query,
    references: validated.references,
    now: new Date(),
    newId: randomUUID,
  });
  h.services.pipeline.planChanged(h.keys.organization_id);
  return cohort.code;
}

describe('a burst of 1,000 concurrent track calls', () => {
  it('for one user stores exactly 1,000 events and the >= 1000 cohort counts that user once', async () => {
    const h = await start();
    const code = await createCohort(h, { event: 'Pageview', frequency: { greater_than_or_equal_to: 1000 } });
    const user = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, n) =>
        h.call('POST', '/v2.0/events', { key: h.keys.public_key, body: { user_id: user, name: 'Pageview', properties: { n } } }),
      ),
    );
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1000);

    const stored = await h.call<Array<{ id: string; properties: { n: number } }>>('GET', `/v2.0/events?user_id=${user}`);
    expect(stored.status).toBe(200);
    expect(stored.body).toHaveLength(1000);
    expect(new Set(stored.body.map((e) => e.properties.n)).size).toBe(1000);
    expect(h.services.pipeline.audienceSize(h.keys.organization_id, code)).toBe(1);
    expect(await h.services.pipeline.membershipsOf(h.keys.organization_id, user)).toEqual([code]);
  });

  it('across 1,000 distinct users puts each of them in the >= 1 cohort: size 1,000', async () => {
    const h = await start();
    const code = await createCohort(h, { event: 'Pageview', frequency: { greater_than_or_equal_to: 1 } });
    const users = Array.from({ length: 1000 }, () => randomUUID());
    const answers = await Promise.all(
      users.map((user) => h.call('POST', '/v2.0/events', { key: h.keys.public_key, body: { user_id: user, name: 'Pageview' } })),
    );
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    expect(h.services.pipeline.audienceSize(h.keys.organization_id, code)).toBe(1000);
    for (const user of users.slice(0, 20)) {
      const stored = await h.call<unknown[]>('GET', `/v2.0/events?user_id=${user}`);
      expect(stored.body).toHaveLength(1);
    }
  });

  it('of retries (D29): 10 ids each sent 30 times at once, and again while the first copies commit, store 10 events', async () => {
    const h = await start();
    const code = await createCohort(h, { event: 'Pageview', frequency: { greater_than_or_equal_to: 10 } });
    const user = randomUUID();
    const ids = Array.from({ length: 10 }, () => randomUUID());
    const send = (id: string, n: number) =>
      h.call('POST', '/v2.0/events', { key: h.keys.public_key, body: { id, user_id: user, name: 'Pageview', properties: { n } } });
    // The first wave races its own copies; the second starts as soon as any answer of the first came back, so its
    // lookups overlap the commits of the first (the window of ids committed after a lookup decides those).
    const first = ids.flatMap((id, i) => Array.from({ length: 30 }, () => send(id, i)));
    await Promise.race(first);
    const second = ids.flatMap((id, i) => Array.from({ length: 30 }, () => send(id, i)));
    const answers = await Promise.all([...first, ...second]);
    expect(answers.map((a) => a.status).filter((s) => s !== 200)).toEqual([]);
    for (const id of ids) {
      const copies = answers.filter((a) => a.body.id === id);
      expect(copies).toHaveLength(60);
      expect(new Set(copies.map((a) => JSON.stringify(a.body))).size).toBe(1);
    }
    const stored = await h.call<Array<{ id: string }>>('GET', `/v2.0/events?user_id=${user}`);
    expect(stored.body.map((e) => e.id).sort()).toEqual([...ids].sort());
    expect(h.services.pipeline.audienceSize(h.keys.organization_id, code)).toBe(1);
  });
});

