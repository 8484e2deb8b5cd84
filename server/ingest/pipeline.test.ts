// The ingest pipeline with the inline executor: durability of acknowledged appends, arrival order under bursts,
// exact memberships and sizes (D19), safe retries (D29), plan changes, close, overload and failed commits.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lastSeq, partitionOf as partitionIndex, readUserEvents, replayUserEvents } from '../domain/events/index.js';
import { isEncodedBlock } from '../domain/events/blocks.js';
import { readTransitionLog } from '../domain/reactions/log.js';
import { mintEventId, type NewEvent, type StoredEvent } from '../domain/events/index.js';
import { ServiceError } from '../errors.js';
import type { BatchOp, Store } from '../store/contract.js';
import { openLevelStore } from '../store/level.js';
import { MemoryStore } from '../store/memory.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, eventId, tempDir, userId, type TempDir } from '../../test/support/ingest.js';
import { openIngestPipeline, type IngestOptions, type Pipeline } from './pipeline.js';

const U1 = userId(1);
const PAGEVIEWS_1000 = cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 1000 } });
const ANY_PAGEVIEW = cohort(2, { event: 'Pageview' });

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

let dir: TempDir;
let open: Pipeline[];

beforeEach(async () => {
  dir = await tempDir();
  open = [];
});

afterEach(async () => {
  for (const pipeline of open) await pipeline.close();
  await dir.remove();
});

async function start(store: Store, plans: MapPlans, options: Partial<IngestOptions> = {}): Promise<Pipeline> {
  const pipeline = await openIngestPipeline({ store, plans, contexts: new MapContexts(), now: () => T0, ...options });
  open.push(pipeline);
  return pipeline;
}

describe('owners holding states packed (--decoded-states)', () => {
  it('answer as owners keeping every state decoded: users interleaved through one decoded state, then a restart', async () => {
    const cohorts = [ANY_PAGEVIEW, cohort(3, { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } }), cohort(4, { event: 'Click', frequency: { less_than: 2 } })];
    const answers = async (decodedStates: number): Promise<unknown[]> => {
      const store = new MemoryStore();
      const options = { decodedStates };
      let pipeline = await start(store, new MapPlans(ORG, cohorts), options);
      const out: unknown[] = [];
      for (let n = 1; n <= 24; n++) {
        // Four users in turn: with one decoded state, each append finds its user's state packed.
        const result = await pipeline.append({ org: ORG, user: userId(n % 4), events: [event(n, n % 3 === 0 ? 'Click' : 'Pageview')] });
        out.push(result.memberships);
        if (n === 12) {
          await pipeline.close();
          pipeline = await start(store, new MapPlans(ORG, cohorts), options);
        }
      }
      for (let u = 0; u < 4; u++) out.push(await pipeline.membershipsOf(ORG, userId(u)));
      return out;
    };
    const decoded = await answers(Number.POSITIVE_INFINITY);
    expect(decoded).toContainEqual([2, 3]);
    expect(await answers(1)).toEqual(decoded);
  });
});

describe('durability', () => {
  it('an acknowledged append is stored with its transitions: it survives closing and reopening LevelDB', async () => {
    const store = await openLevelStore(dir.path);
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]), { fsync: true });
    const first = await pipeline.append({ org: ORG, user: U1, events: [event(1)] });
    const second = await pipeline.append({ org: ORG, user: U1, events: [event(2, 'Click')] });
    expect(first.memberships).toEqual([2]);
    expect(second.memberships).toEqual([2]);
    expect(first.events[0]).toMatchObject({ id: eventId(1), user_id: U1, name: 'Pageview', seq: expect.any(Number) });
    await pipeline.close();
    await store.close();

    const reopened = await openLevelStore(dir.path);
    try {
      const stored = await readUserEvents(reopened, ORG, U1);
      expect(stored.map((e) => e.id)).toEqual([eventId(1), eventId(2)]);
      expect(stored[0]).toEqual(first.events[0]);
      // The transitions log holds the transitions with the id of the event that caused them; an event without any has
      // no entry, and the partition's last sequence is kept apart (server/store/layout.ts).
      const partition = partitionIndex(ORG, U1, pipeline.partitions);
      const log = await collect(readTransitionLog(reopened));
      expect(log).toEqual([
        { cursor: 1, entry: { org: ORG, user: U1, event_id: eventId(1), transitions: [{ cohort: 2, kind: 'entered', time: T0 + 1000 }], at: expect.any(Number) } },
      ]);
      expect(await lastSeq(reopened, partition)).toBe(second.events[0]?.seq);
    } finally {
      await reopened.close();
    }
  });

  it('commits the extra ops of a request in the same batch', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, []));
    await pipeline.append({ org: ORG, user: U1, events: [event(1)], extraOps: [{ type: 'put', key: 'test!extra', value: 7 }] });
    expect(await store.get('test!extra')).toBe(7);
  });
});

describe('bursts: arrival order and exact counts (E1, D19)', () => {
  it('1,000 concurrent appends for one user: 1,000 events in arrival order, the cohort entered once at the 1000th', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [PAGEVIEWS_1000]));
    const results = await Promise.all(Array.from({ length: 1000 }, (_, i) => pipeline.append({ org: ORG, user: U1, events: [event(i)] })));
    const stored = await collect(replayUserEvents(store, ORG, U1));
    expect(stored.map((e) => e.properties['n'])).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(results.map((r) => r.events[0]?.seq)).toEqual(stored.map((e) => e.seq));
    expect(results[998]?.memberships).toEqual([]);
    expect(results[999]?.memberships).toEqual([1]);
    const log = await collect(readTransitionLog(store));
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ entry: { user: U1, event_id: results[999]?.events[0]?.id, transitions: [{ cohort: 1, kind: 'entered' }] } });
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
    expect(await pipeline.membershipsOf(ORG, U1)).toEqual([1]);
  });

  it('the same burst across 1,000 users: size 1,000, each user stored once', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]));
    await Promise.all(Array.from({ length: 1000 }, (_, i) => pipeline.append({ org: ORG, user: userId(i), events: [event(i)] })));
    expect(pipeline.audienceSize(ORG, 2)).toBe(1000);
    expect(pipeline.audienceSize(ORG, 1)).toBe(0);
    expect(await readUserEvents(store, ORG, userId(517))).toHaveLength(1);
    expect(await pipeline.membershipsOf(ORG, userId(517))).toEqual([2]);
  });

  it('keeps sizes exact as users enter and leave (a cohort that ends at the 3rd pageview)', async () => {
    const fewer = cohort(3, { event: 'Pageview', frequency: { less_than: 3 } });
    const pipeline = await start(new MemoryStore(), new MapPlans(ORG, [fewer]));
    await pipeline.append({ org: ORG, user: userId(1), events: [event(1)] });
    await pipeline.append({ org: ORG, user: userId(2), events: [event(2)] });
    expect(pipeline.audienceSize(ORG, 3)).toBe(2);
    await pipeline.append({ org: ORG, user: userId(1), events: [event(3), event(4)] });
    expect(pipeline.audienceSize(ORG, 3)).toBe(1);
    expect(await pipeline.membershipsOf(ORG, userId(1))).toEqual([]);
  });
});

describe('safe retries (D29)', () => {
  it('a stored id answers the stored record and appends nothing', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]));
    const first = await pipeline.append({ org: ORG, user: U1, events: [event(1)] });
    const retry = await pipeline.append({ org: ORG, user: U1, events: [{ ...event(1), properties: { changed: true } }, event(2)] });
    expect(retry.events[0]).toEqual(first.events[0]);
    expect(retry.events[1]?.id).toBe(eventId(2));
    expect((await readUserEvents(store, ORG, U1)).map((e) => e.properties)).toEqual([{ n: 1 }, { n: 2 }]);
    expect(pipeline.audienceSize(ORG, 2)).toBe(1);
  });

  it('an id of the minted shape carrying its event time is found without an `ei!` entry, single or in a block', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]), { foldEvery: 0 });
    // As a cluster owner receives them: the ids minted elsewhere, the events not marked `minted` (always looked up).
    const minted = (n: number): NewEvent => {
      const base = event(n);
      return { ...base, id: mintEventId(base.timeMs, eventId(n)) };
    };
    const single = await pipeline.append({ org: ORG, user: U1, events: [minted(1)] });
    const run = await pipeline.append({ org: ORG, user: U1, events: [minted(2), minted(3)] });
    const keys: string[] = [];
    for await (const [key] of store.iterate({ gte: 'ei!', lt: 'ei"' })) keys.push(key);
    expect(keys).toEqual([]);
    const retry = await pipeline.append({ org: ORG, user: U1, events: [{ ...minted(3), properties: { changed: true } }, minted(1), minted(4)] });
    expect(retry.events.slice(0, 2)).toEqual([run.events[1], single.events[0]]);
    expect((await readUserEvents(store, ORG, U1)).map((e) => e.properties)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
  });

  it('an id repeated in the same tick (across requests and within one) is appended once; all answer its record', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [PAGEVIEWS_1000]));
    const [a, b] = await Promise.all([
      pipeline.append({ org: ORG, user: U1, events: [event(1), event(1)] }),
      pipeline.append({ org: ORG, user: U1, events: [event(1)] }),
    ]);
    const stored = await readUserEvents(store, ORG, U1);
    expect(stored).toHaveLength(1);
    expect(a?.events).toEqual([stored[0], stored[0]]);
    expect(b?.events).toEqual([stored[0]]);
  });

  it('an id the caller checked (one store lookup) is still deduped against what committed after its lookup', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]));
    const hold = pipeline.holdRecentIds(); // the route's lookup happens now and finds nothing
    const first = await pipeline.append({ org: ORG, user: U1, events: [event(1)] }); // a concurrent copy commits
    const checked = await pipeline.append({ org: ORG, user: U1, events: [{ ...event(1), checked: hold.mark }, { ...event(2), checked: hold.mark }] });
    hold.release();
    expect(checked.events[0]).toEqual(first.events[0]);
    expect(checked.events[1]?.id).toBe(eventId(2));
    expect((await readUserEvents(store, ORG, U1)).map((e) => e.id)).toEqual([eventId(1), eventId(2)]);
    // Stored before the lookup: a checked event is not looked up in the store again (the caller saw it there).
    const later = pipeline.holdRecentIds();
    const fresh = await pipeline.append({ org: ORG, user: U1, events: [{ ...event(3), checked: later.mark }] });
    later.release();
    expect(fresh.events[0]?.id).toBe(eventId(3));
  });

  it('the same id for another user is another event', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, []));
    await Promise.all([
      pipeline.append({ org: ORG, user: userId(1), events: [event(1)] }),
      pipeline.append({ org: ORG, user: userId(2), events: [event(1)] }),
    ]);
    expect(await readUserEvents(store, ORG, userId(1))).toHaveLength(1);
    expect(await readUserEvents(store, ORG, userId(2))).toHaveLength(1);
  });
});

describe('restart', () => {
  it('sizes and memberships survive a restart; the partition count is the stored one', async () => {
    const store = await openLevelStore(dir.path);
    const plans = new MapPlans(ORG, [ANY_PAGEVIEW]);
    const first = await start(store, plans, { partitions: 4 });
    await Promise.all(Array.from({ length: 30 }, (_, i) => first.append({ org: ORG, user: userId(i), events: [event(i)] })));
    await first.close();
    await store.close();

    const reopened = await openLevelStore(dir.path);
    try {
      const second = await start(reopened, plans, { partitions: 8 });
      expect(second.partitions).toBe(4);
      expect(second.audienceSize(ORG, 2)).toBe(30);
      expect(await second.membershipsOf(ORG, userId(7))).toEqual([2]);
      expect(await second.membershipsOf(ORG, userId(99))).toEqual([]);
      const more = await second.append({ org: ORG, user: userId(31), events: [event(31)] });
      expect(more.events[0]?.seq).toBeGreaterThan(0);
      expect(second.audienceSize(ORG, 2)).toBe(31);
      await second.close();
    } finally {
      await reopened.close();
    }
  });
});

describe('plan changes', () => {
  it('keeps existing state usable: counts carry over a new version; new cohorts start from the next event', async () => {
    const plans = new MapPlans(ORG, [cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } })]);
    const pipeline = await start(new MemoryStore(), plans);
    await pipeline.append({ org: ORG, user: U1, events: [event(1), event(2)] });
    expect(await pipeline.membershipsOf(ORG, U1)).toEqual([]);

    plans.set(ORG, [...plans.planFor(ORG).cohorts, cohort(4, { event: 'Click' })]);
    pipeline.planChanged(ORG);
    const third = await pipeline.append({ org: ORG, user: U1, events: [event(3)] });
    expect(third.memberships).toEqual([1]);
    const click = await pipeline.append({ org: ORG, user: U1, events: [event(4, 'Click')] });
    expect(click.memberships).toEqual([1, 4]);
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
    expect(pipeline.audienceSize(ORG, 4)).toBe(1);

    // A cohort leaving the plan loses its members (and its size) at the user's next evaluation.
    plans.set(ORG, [cohort(4, { event: 'Click' })]);
    pipeline.planChanged(ORG);
    const after = await pipeline.append({ org: ORG, user: U1, events: [event(5)] });
    expect(after.memberships).toEqual([4]);
    expect(pipeline.audienceSize(ORG, 1)).toBe(0);
    expect(pipeline.audienceSize(ORG, 4)).toBe(1);
  });
});

describe('re-evaluation (D27, E20)', () => {
  it('re-evaluates users whose imported data changed without an event; users with no events are skipped (E20, E5)', async () => {
    const contexts = new MapContexts();
    const plans = new MapPlans(ORG, [cohort(5, { in_third_party_segment: { provider: 'acme', segment: 'sports' } })]);
    const pipeline = await start(new MemoryStore(), plans, { contexts });
    expect((await pipeline.append({ org: ORG, user: U1, events: [event(1)] })).memberships).toEqual([]);
    contexts.addSegment(ORG, U1, '3rd', 'acme', 'sports');
    await pipeline.reevaluate(ORG, [U1, userId(2)]);
    expect(await pipeline.membershipsOf(ORG, U1)).toEqual([5]);
    expect(await pipeline.membershipsOf(ORG, userId(2))).toEqual([]);
    expect(pipeline.audienceSize(ORG, 5)).toBe(1);
    // The context is read at each event (E13).
    expect((await pipeline.append({ org: ORG, user: U1, events: [event(2)] })).memberships).toEqual([5]);
    expect(pipeline.audienceSize(ORG, 5)).toBe(1);
  });
});

describe('imported data crosses to the owner only when it may have changed (ContextSource.contextEpoch)', () => {
  /** MapContexts counting its lookups. */
  class CountingContexts extends MapContexts {
    lookups = 0;
    override async contextFor(org: string, user: string) {
      this.lookups++;
      return super.contextFor(org, user);
    }
  }
  const SPORTS = cohort(5, { in_third_party_segment: { provider: 'acme', segment: 'sports' } });
  const PRO = cohort(6, { in_connections_import_segment: { provider: 'crm', filters: { property: 'plan', condition: { equal_to: 'pro' } } } });
  const NEWS = cohort(8, { in_third_party_segment: { provider: 'acme', segment: 'news' } });

  for (const threads of [0, 1]) {
    it(`looks a resident user's data up again only after a change or a plan change, and answers as with every lookup (--threads ${threads})`, async () => {
      const contexts = new CountingContexts();
      const plans = new MapPlans(ORG, [SPORTS, PRO, ANY_PAGEVIEW]);
      const pipeline = await start(new MemoryStore(), plans, { contexts, threads });
      contexts.addSegment(ORG, U1, '3rd', 'acme', 'sports');
      expect((await pipeline.append({ org: ORG, user: U1, events: [event(1)] })).memberships).toEqual([2, 5]);
      expect(contexts.lookups).toBe(1);
      for (let n = 2; n <= 4; n++) expect((await pipeline.append({ org: ORG, user: U1, events: [event(n)] })).memberships).toEqual([2, 5]);
      expect(contexts.lookups).toBe(1);
      // A change (the epoch moves): looked up at the next event, and the cohorts follow the new data.
      contexts.addRow(ORG, U1, 'crm', { time: T0, properties: { plan: 'pro' } });
      expect((await pipeline.append({ org: ORG, user: U1, events: [event(5)] })).memberships).toEqual([2, 5, 6]);
      expect(contexts.lookups).toBe(2);
      // Data no cohort reads yet: captured (the epoch moved) without it, since the plan does not probe it.
      contexts.addSegment(ORG, U1, '3rd', 'acme', 'news');
      expect((await pipeline.append({ org: ORG, user: U1, events: [event(6)] })).memberships).toEqual([2, 5, 6]);
      expect(contexts.lookups).toBe(3);
      // A plan that probes it, the epoch unchanged: the new version's probes are asked.
      plans.set(ORG, [SPORTS, PRO, ANY_PAGEVIEW, NEWS]);
      pipeline.planChanged(ORG);
      expect((await pipeline.append({ org: ORG, user: U1, events: [event(7)] })).memberships).toEqual([2, 5, 6, 8]);
      expect(contexts.lookups).toBe(4);
      expect((await pipeline.append({ org: ORG, user: U1, events: [event(8)] })).memberships).toEqual([2, 5, 6, 8]);
      expect(contexts.lookups).toBe(4);
      expect(pipeline.audienceSize(ORG, 8)).toBe(1);
    });
  }

  it('an owner whose state kept no context asks for the data, which is looked up and sent (needContext)', async () => {
    const contexts = new CountingContexts();
    const pipeline = await start(new MemoryStore(), new MapPlans(ORG, [SPORTS, ANY_PAGEVIEW]), { contexts });
    contexts.addSegment(ORG, U1, '3rd', 'acme', 'sports');
    expect((await pipeline.append({ org: ORG, user: U1, events: [event(1)] })).memberships).toEqual([2, 5]);
    // What a failed engine call leaves (engine segment.ts `failed`): the inline owner's state without its context.
    const owner = (pipeline as unknown as { executor: { residents: { peek(key: string): { context: unknown } | undefined } } }).executor;
    const state = owner.residents.peek(`${ORG}\u0000${U1}`);
    if (state === undefined) throw new Error('the user is not resident');
    state.context = undefined;
    expect((await pipeline.append({ org: ORG, user: U1, events: [event(2)] })).memberships).toEqual([2, 5]);
    expect(contexts.lookups).toBe(2);
    expect((await pipeline.append({ org: ORG, user: U1, events: [event(3)] })).memberships).toEqual([2, 5]);
    expect(contexts.lookups).toBe(2);
  });
});

describe('close', () => {
  it('drains queued appends, refuses new ones, and is safe to call twice', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]));
    const pending = Array.from({ length: 50 }, (_, i) => pipeline.append({ org: ORG, user: userId(i % 5), events: [event(i)] }));
    const closing = pipeline.close();
    await expect(pipeline.append({ org: ORG, user: U1, events: [event(99)] })).rejects.toThrow();
    await Promise.all([closing, pipeline.close()]);
    const results = await Promise.all(pending);
    expect(results).toHaveLength(50);
    let stored = 0;
    for (let u = 0; u < 5; u++) stored += (await readUserEvents(store, ORG, userId(u))).length;
    expect(stored).toBe(50);
  });

  it('snapshots a state newer than its snapshot for 10 minutes by default, and counts the snapshots each group wrote', async () => {
    const store = new MemoryStore();
    let now = T0;
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]), { now: () => now });
    const snapshots: number[] = [];
    pipeline.onCommitted((outcome) => snapshots.push(outcome.snapshots));
    await pipeline.append({ org: ORG, user: U1, events: [event(1)] });
    now += 9 * 60_000;
    await pipeline.append({ org: ORG, user: U1, events: [event(2)] });
    expect(await store.get(`s!${ORG}!${U1}`)).toBeUndefined();
    now += 60_000;
    const third = await pipeline.append({ org: ORG, user: U1, events: [event(3)] });
    expect(await store.get(`s!${ORG}!${U1}`)).toMatchObject({ seq: third.events[0]?.seq });
    expect(snapshots).toEqual([0, 0, 1]);
  });

  it('writes a snapshot of every user at close', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, [ANY_PAGEVIEW]), { snapshotEvery: 1_000_000 });
    const result = await pipeline.append({ org: ORG, user: U1, events: [event(1), event(2)] });
    expect(await store.get(`s!${ORG}!${U1}`)).toBeUndefined();
    await pipeline.close();
    expect(await store.get(`s!${ORG}!${U1}`)).toMatchObject({ seq: result.events[1]?.seq });
  });
});

describe('overload and failures', () => {
  it('refuses appends beyond the partition queue bound with 503 (code 5000); accepted ones are stored', async () => {
    const store = new MemoryStore();
    const pipeline = await start(store, new MapPlans(ORG, []), { partitions: 1, maxQueuedPerPartition: 10 });
    const attempts = Array.from({ length: 30 }, (_, i) => pipeline.append({ org: ORG, user: U1, events: [event(i)] }));
    const settled = await Promise.allSettled(attempts);
    const refused = settled.filter((s) => s.status === 'rejected');
    expect(refused).toHaveLength(20);
    for (const s of refused) {
      const reason = (s as PromiseRejectedResult).reason as ServiceError;
      expect(reason).toBeInstanceOf(ServiceError);
      expect(reason.status).toBe(503);
      expect(reason.code).toBe(5000);
    }
    expect(await readUserEvents(store, ORG, U1)).toHaveLength(10);
  });

  it('a failed commit rejects the tick with 500 (code 5000), stores nothing, and later appends continue exactly', async () => {
    const store = new FlakyStore();
    const pipeline = await start(store, new MapPlans(ORG, [cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } })]));
    await pipeline.append({ org: ORG, user: U1, events: [event(1)] });
    store.failNext = true;
    const failed = await pipeline.append({ org: ORG, user: U1, events: [event(2)] }).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ServiceError);
    expect((failed as ServiceError).status).toBe(500);
    expect((failed as ServiceError).code).toBe(5000);
    expect(await readUserEvents(store, ORG, U1)).toHaveLength(1);
    expect(await pipeline.membershipsOf(ORG, U1)).toEqual([]);
    const retried = await pipeline.append({ org: ORG, user: U1, events: [event(2)] });
    expect(retried.memberships).toEqual([1]);
    const seqs = (await readUserEvents(store, ORG, U1)).map((e: StoredEvent) => e.seq);
    expect(seqs).toEqual([seqs[0], (seqs[0] as number) + 1]);
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
  });
});

/** A memory store whose next batch can be made to fail. */
class FlakyStore extends MemoryStore {
  failNext = false;

  override async batch(ops: readonly BatchOp[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('disk full');
    }
    return super.batch(ops);
  }
}

describe('quiet appends and catch-ups (a cluster node replaying a partition it took over, issue 15)', () => {
  it('logs their transitions marked quiet (and replay), and fires nothing; the others stay unmarked', async () => {
    const store = new MemoryStore();
    // A plan with generations (a cohort added later is evaluated over history by a catch-up).
    let spec = { version: 1, cohorts: [ANY_PAGEVIEW], generations: new Map<number, number>() };
    const pipeline = await start(store, { planFor: () => spec } as unknown as MapPlans);
    await pipeline.append({ org: ORG, user: U1, events: [event(1)], quiet: true });
    await pipeline.append({ org: ORG, user: userId(2), events: [event(2)] });
    spec = { version: 2, cohorts: [ANY_PAGEVIEW, cohort(3, { event: 'Pageview', frequency: { less_than: 5 } })], generations: new Map([[3, 2]]) };
    pipeline.planChanged(ORG);
    await pipeline.catchUp(ORG, [U1], { quiet: true });
    await pipeline.catchUp(ORG, [userId(2)]);
    const log = (await collect(readTransitionLog(store))).map(({ entry }) => ({ user: entry.user, event: entry.event_id, replay: entry.replay, quiet: entry.quiet, cohorts: entry.transitions.map((t) => t.cohort) }));
    expect(log).toEqual([
      { user: U1, event: eventId(1), replay: true, quiet: true, cohorts: [2] },
      { user: userId(2), event: eventId(2), replay: undefined, quiet: undefined, cohorts: [2] },
      { user: U1, event: null, replay: true, quiet: true, cohorts: [3] },
      { user: userId(2), event: null, replay: true, quiet: undefined, cohorts: [3] },
    ]);
  });
});

describe('event blocks (server/domain/events/blocks.ts, fold.ts)', () => {
  /** Every stored `e!` value of a user: 'r' for a single record, 'b' for a block. */
  async function layout(store: Store, user: string): Promise<string> {
    const prefix = `e!${ORG}!${user}!`;
    const values = await store.encodedValues({ gte: prefix, lt: `e!${ORG}!${user}"` });
    return values.map((bytes) => (isEncodedBlock(bytes) ? 'b' : 'r')).join('');
  }

  it('folds single records behind the writes and stores an append of several as a block; reads, retries and recovery see the same events', async () => {
    const store = new MemoryStore();
    const cohorts = [10, 20, 24, 25].map((n, i) => cohort(i + 1, { event: 'Pageview', frequency: { greater_than_or_equal_to: n } }));
    const options = { foldEvery: 4, snapshotEvery: 3, snapshotAfterMs: 3_600_000 };
    let pipeline = await start(store, new MapPlans(ORG, cohorts), options);
    const users = [userId(1), userId(2), userId(3)];
    // Users interleaved, one event per append (as the track route appends), then one append of five.
    for (let n = 1; n <= 19; n++) for (const user of users) await pipeline.append({ org: ORG, user, events: [event(n)] });
    for (const user of users) await pipeline.append({ org: ORG, user, events: [20, 21, 22, 23, 24].map((n) => event(n)) });
    await pipeline.foldsIdle();
    expect(pipeline.stats().eventsFolded).toBeGreaterThan(0);
    for (const user of users) {
      // Folds at 4, 8, 12 and 16 events (each of the events since the last multiple); the append of five, a block of
      // its own, passes 20, and its fold takes the three single records before it.
      expect(await layout(store, user)).toBe('bbbbbb');
      expect((await readUserEvents(store, ORG, user)).map((e) => e.properties['n'])).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    }
    // D29: a retry of an id folded into a block is answered with the stored record and appends nothing.
    const retried = await pipeline.append({ org: ORG, user: U1, events: [event(6)] });
    expect(retried.events[0]?.properties).toEqual({ n: 6 });
    expect(await readUserEvents(store, ORG, U1)).toHaveLength(24);
    // Recovery from snapshots (every 3 events: most end inside a block) and the events after them: one more event
    // moves each user exactly as its count says (24 before, so into the 25 cohort and no further).
    await pipeline.close();
    pipeline = await start(store, new MapPlans(ORG, cohorts), options);
    for (const user of users) {
      expect(await pipeline.membershipsOf(ORG, user)).toEqual([1, 2, 3]);
      expect((await pipeline.append({ org: ORG, user, events: [event(25)] })).memberships).toEqual([1, 2, 3, 4]);
    }
  });
});
