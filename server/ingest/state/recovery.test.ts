// Crash recovery over LevelDB: a pipeline abandoned without close (only the store handle is closed) and a new one
// over the same directory answer the memberships and sizes a fresh pipeline computes by replaying every user's
// stored events from scratch, whether snapshots were written part-way, evicted, or never (ARCHITECTURE recovery).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readSnapshot, replayUserEvents, toWireRecord } from '../../domain/events/index.js';
import type { Store } from '../../store/contract.js';
import { openLevelStore } from '../../store/level.js';
import { MemoryStore } from '../../store/memory.js';
import { MapContexts, MapPlans, ORG, T0, cohort, eventId, tempDir, userId, type TempDir } from '../../../test/support/ingest.js';
import { openIngestPipeline, type IngestOptions, type Pipeline } from '../pipeline.js';
import type { NewEvent } from '../types.js';

const COHORTS = [
  cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 5 } }),
  cohort(2, { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 }, during: { the_last: { value: 1, unit: 'minutes' } } }),
  cohort(3, { event: 'Click', frequency: { greater_than_or_equal_to: 2 }, during: 'this_session' }),
  cohort(4, { has_entered: { segment: 1 } }),
  cohort(5, { event: 'Pageview', frequency: { less_than: 3 } }),
  cohort(6, { and: [{ event: 'Click', where: { property: 'properties.kind', condition: { equal_to: 'buy' } } }, { event: 'Pageview' }] }),
];
const CODES = COHORTS.map((c) => c.code);
const USERS = Array.from({ length: 40 }, (_, i) => userId(i));

/** A deterministic pseudo-random source (mulberry32). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Rounds of concurrent appends: each round some users get 1..3 events; times advance by seconds to hours. */
function workload(seed: number, rounds: number, firstId: number): { user: string; events: NewEvent[] }[][] {
  const next = random(seed);
  let id = firstId;
  let time = T0 + firstId * 60_000;
  const out: { user: string; events: NewEvent[] }[][] = [];
  for (let r = 0; r < rounds; r++) {
    const round: { user: string; events: NewEvent[] }[] = [];
    const requests = 1 + Math.floor(next() * 12);
    for (let q = 0; q < requests; q++) {
      const user = USERS[Math.floor(next() * USERS.length)] as string;
      const events: NewEvent[] = [];
      const count = 1 + Math.floor(next() * 3);
      for (let e = 0; e < count; e++) {
        time += next() < 0.1 ? 2_000_000 : Math.floor(next() * 40_000);
        const roll = next();
        const name = roll < 0.55 ? 'Pageview' : roll < 0.9 ? 'Click' : 'Other';
        const properties = name === 'Click' ? { kind: next() < 0.3 ? 'buy' : 'look' } : {};
        events.push({ id: eventId(id++), name, time: new Date(time).toISOString(), timeMs: time, properties });
      }
      round.push({ user, events });
    }
    out.push(round);
  }
  return out;
}

async function play(pipeline: Pipeline, rounds: { user: string; events: NewEvent[] }[][]): Promise<void> {
  for (const round of rounds) await Promise.all(round.map(({ user, events }) => pipeline.append({ org: ORG, user, events })));
}

/** A fresh pipeline fed every user's stored events from scratch, in arrival order. */
async function recompute(store: Store): Promise<Pipeline> {
  const reference = await openIngestPipeline({ store: new MemoryStore(), plans: new MapPlans(ORG, COHORTS), contexts: new MapContexts(), deadlines: false });
  for (const user of USERS) {
    const events: NewEvent[] = [];
    for await (const stored of replayUserEvents(store, ORG, user)) {
      const { user_id: _user, ...event } = toWireRecord(stored);
      events.push({ ...event, timeMs: stored.timeMs });
    }
    if (events.length > 0) await reference.append({ org: ORG, user, events });
  }
  return reference;
}

async function expectSameAudiences(recovered: Pipeline, reference: Pipeline): Promise<void> {
  for (const user of USERS) expect(await recovered.membershipsOf(ORG, user), user).toEqual(await reference.membershipsOf(ORG, user));
  for (const code of CODES) expect(recovered.audienceSize(ORG, code), `size of ${code}`).toBe(reference.audienceSize(ORG, code));
}

let dir: TempDir;

beforeEach(async () => {
  dir = await tempDir();
});

afterEach(async () => {
  await dir.remove();
});

// The events are timed days before now and a cohort has a `the_last` window: the deadline scheduler (D36, tested in
// server/ingest/deadlines/) is off here, so the recovered pipeline and the recomputation are both judged at the
// users' last events.
describe('crash recovery (lazy: a snapshot plus the user\'s later events)', () => {
  const cases: [string, Partial<IngestOptions>, boolean][] = [
    ['snapshots written part-way, states evicted from a small cache', { snapshotEvery: 4, cacheSize: 8 }, true],
    ['no snapshot ever written: recovery replays every event', { snapshotEvery: 1_000_000, cacheSize: 1_000 }, false],
  ];
  for (const [name, options, expectSnapshots] of cases) {
    it(name, async () => {
      const plans = new MapPlans(ORG, COHORTS);
      const store = await openLevelStore(dir.path);
      const crashed = await openIngestPipeline({ store, plans, contexts: new MapContexts(), partitions: 4, deadlines: false, ...options });
      await play(crashed, workload(7, 60, 0));
      let snapshots = 0;
      for (const user of USERS) if ((await readSnapshot(store, ORG, user)) !== undefined) snapshots++;
      expect(snapshots > 0).toBe(expectSnapshots);
      // The crash: the pipeline is abandoned without close; only the store handle goes.
      await store.close();

      const reopened = await openLevelStore(dir.path);
      try {
        const recovered = await openIngestPipeline({ store: reopened, plans, contexts: new MapContexts(), deadlines: false, ...options });
        await expectSameAudiences(recovered, await recompute(reopened));
        // State recovered from snapshots continues exactly: more events, then compare again.
        await play(recovered, workload(8, 30, 10_000));
        await expectSameAudiences(recovered, await recompute(reopened));
        await recovered.close();
      } finally {
        await reopened.close();
      }
    });
  }

  it('a crash with appends in flight: every acknowledged event is stored and the state matches the stored events', async () => {
    const plans = new MapPlans(ORG, COHORTS);
    const store = await openLevelStore(dir.path);
    const crashed = await openIngestPipeline({ store, plans, contexts: new MapContexts(), partitions: 4, snapshotEvery: 3, cacheSize: 16, deadlines: false });
    await play(crashed, workload(11, 20, 0));
    const inFlight = workload(12, 1, 5_000)[0] ?? [];
    const settling = Promise.allSettled(inFlight.map(({ user, events }) => crashed.append({ org: ORG, user, events })));
    await store.close();
    const settled = await settling;

    const reopened = await openLevelStore(dir.path);
    try {
      for (const [i, outcome] of settled.entries()) {
        if (outcome.status !== 'fulfilled') continue;
        const request = inFlight[i] as { user: string; events: NewEvent[] };
        const stored = [];
        for await (const event of replayUserEvents(reopened, ORG, request.user)) stored.push(event.id);
        for (const event of request.events) expect(stored).toContain(event.id);
      }
      const recovered = await openIngestPipeline({ store: reopened, plans, contexts: new MapContexts(), deadlines: false });
      await expectSameAudiences(recovered, await recompute(reopened));
      await recovered.close();
    } finally {
      await reopened.close();
    }
  });
});
