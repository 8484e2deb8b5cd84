// D40: one item of a write group that cannot be stored (an event msgpackr cannot encode) is rejected alone; the other
// items of its group, its own user's later items included, are written and answered.

import { afterEach, describe, expect, it } from 'vitest';
import { readUserEvents } from '../../domain/events/index.js';
import { ServiceError } from '../../errors.js';
import { openLevelStore } from '../../store/level.js';
import type { Store } from '../../store/contract.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, tempDir, userId, type TempDir } from '../../../test/support/ingest.js';
import { openIngestPipeline, type Pipeline } from '../pipeline.js';

const TWO_PAGEVIEWS = cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } });

let dir: TempDir | undefined;
let store: Store | undefined;
let pipeline: Pipeline | undefined;

afterEach(async () => {
  await pipeline?.close();
  await store?.close();
  await dir?.remove();
  pipeline = undefined;
  store = undefined;
  dir = undefined;
});

/** 70,000 keys in one map: more than msgpackr's 16-bit map size, so its batch cannot be encoded. */
function unencodable(): Record<string, number> {
  const properties: Record<string, number> = {};
  for (let i = 0; i < 70_000; i++) properties[`k${i}`] = i;
  return properties;
}

describe('a bad item in a write group', () => {
  it('is rejected alone while the other items of its group, its user\'s later ones included, are written', async () => {
    dir = await tempDir();
    store = await openLevelStore(dir.path);
    const logged: string[] = [];
    pipeline = await openIngestPipeline({
      store,
      partitions: 4,
      plans: new MapPlans(ORG, [TWO_PAGEVIEWS]),
      contexts: new MapContexts(),
      now: () => T0,
      log: (line) => logged.push(line),
    });
    const p = pipeline;
    const owner = userId(1);
    const others = Array.from({ length: 12 }, (_, i) => userId(100 + i));
    // All appended in one turn: they join one group (one batch).
    const first = p.append({ org: ORG, user: owner, events: [event(1)] });
    const bad = p.append({ org: ORG, user: owner, events: [event(2, 'Pageview', { properties: unencodable() })] });
    const last = p.append({ org: ORG, user: owner, events: [event(3)] });
    const good = others.map((user, i) => p.append({ org: ORG, user, events: [event(10 + 2 * i), event(11 + 2 * i)] }));

    const badError = await bad.then(() => undefined, (error: unknown) => error);
    expect(badError).toBeInstanceOf(ServiceError);
    expect((badError as ServiceError).code).toBe(5000);
    expect((await first).memberships).toEqual([]);
    expect((await last).memberships).toEqual([1]);
    for (const answer of await Promise.all(good)) expect(answer.memberships).toEqual([1]);

    expect((await readUserEvents(store, ORG, owner)).map((stored) => stored.id)).toEqual([event(1).id, event(3).id]);
    for (const user of others) expect(await readUserEvents(store, ORG, user)).toHaveLength(2);
    expect(p.audienceSize(ORG, 1)).toBe(others.length + 1);
    expect(logged.some((line) => line.includes('cannot be stored'))).toBe(true);
  });
});
