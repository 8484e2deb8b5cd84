// Groups of ticks (server/ingest/README.md "Overlap"): a user's items wait for its uncommitted group, answers come
// only after their own batch is written, batches are written in build order, the groups that waited behind a write
// share the next batch (tick/writer.ts), minted ids skip the D29 lookup, and a failed batch fails only its own group.

import { afterEach, describe, expect, it } from 'vitest';
import { readUserEvents } from '../../domain/events/index.js';
import { clientIdKey } from '../../domain/events/keys.js';
import { ServiceError } from '../../errors.js';
import type { BatchOp } from '../../store/contract.js';
import { MemoryStore } from '../../store/memory.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, userId } from '../../../test/support/ingest.js';
import { openIngestPipeline, type Pipeline } from '../pipeline.js';
import { sizeJournalKey } from '../keys.js';
import { AudienceSizes } from './sizes.js';

const U1 = userId(1);
const U2 = userId(2);
const U3 = userId(3);
const TWO_PAGEVIEWS = cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } });
const A_PAGEVIEW = cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 1 } });

/** A memory store whose batches wait until released, one at a time, and can be made to fail; it counts lookups. */
class GatedStore extends MemoryStore {
  held: { ops: readonly BatchOp[]; release: () => void; fail: (error: Error) => void }[] = [];
  gated = false;
  lookedUp: string[] = [];

  /** Batches it refuses (after the gate). */
  refuse: ((ops: readonly BatchOp[]) => boolean) | undefined;
  batches: (readonly BatchOp[])[] = [];

  override async batch(ops: readonly BatchOp[]): Promise<void> {
    this.batches.push(ops);
    if (this.gated) {
      await new Promise<void>((resolve, reject) => this.held.push({ ops, release: resolve, fail: reject }));
    }
    if (this.refuse?.(ops) === true) throw new Error('refused');
    return super.batch(ops);
  }

  override async getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    this.lookedUp.push(...keys);
    return super.getMany<T>(keys);
  }
}

let open: { store: GatedStore; pipeline: Pipeline }[] = [];

afterEach(async () => {
  for (const { store, pipeline } of open) {
    // A test that failed with a batch held must not hold the close up.
    store.gated = false;
    for (const held of store.held.splice(0)) held.release();
    await pipeline.close();
  }
  open = [];
});

async function start(store: GatedStore, cohorts = [TWO_PAGEVIEWS], partitions?: number): Promise<Pipeline> {
  const pipeline = await openIngestPipeline({
    store,
    plans: new MapPlans(ORG, cohorts),
    contexts: new MapContexts(),
    now: () => T0,
    ...(partitions === undefined ? {} : { partitions }),
  });
  open.push({ store, pipeline });
  return pipeline;
}

/** Lets pending callbacks and immediates run (the pipeline starts a group on the next turn). */
async function turns(count = 5): Promise<void> {
  for (let i = 0; i < count; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

describe('groups and overlap', () => {
  it('answers only after its own batch is written; a user in an uncommitted group waits (E1); batches go in build order', async () => {
    const store = new GatedStore();
    const pipeline = await start(store);
    store.gated = true;
    const answered: string[] = [];
    const first = pipeline.append({ org: ORG, user: U1, events: [event(1)] }).then((r) => (answered.push('u1a'), r));
    await turns();
    expect(store.held).toHaveLength(1);
    const second = pipeline.append({ org: ORG, user: U1, events: [event(2)] }).then((r) => (answered.push('u1b'), r));
    const other = pipeline.append({ org: ORG, user: U2, events: [event(3)] }).then((r) => (answered.push('u2'), r));
    await turns();
    // U2's group was built meanwhile but waits in the write chain; nothing is answered before its batch is written.
    expect(store.held).toHaveLength(1);
    expect(answered).toEqual([]);
    (store.held.shift() as { release: () => void }).release();
    await turns();
    expect(answered).toEqual(['u1a']);
    // U2's batch is written next; U1's second item waited for its first group and joins a later group.
    expect(store.held).toHaveLength(1);
    expect(store.held[0]?.ops.some((op) => op.key.includes(U2))).toBe(true);
    expect(store.held[0]?.ops.some((op) => op.key.includes(U1))).toBe(false);
    store.gated = false;
    for (const held of store.held.splice(0)) held.release();
    const [a, b, c] = await Promise.all([first, second, other]);
    expect(a.memberships).toEqual([]);
    expect(b.memberships).toEqual([1]);
    expect(c.memberships).toEqual([]);
    expect(((b.events[0]?.seq ?? 0) > (a.events[0]?.seq ?? 0))).toBe(true);
    expect((await readUserEvents(store, ORG, U1)).map((e) => e.id)).toEqual([event(1).id, event(2).id]);
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
  });

  it('D29: an id the server minted is not looked up, yet a later retry that carries it answers the stored record', async () => {
    const store = new GatedStore();
    const pipeline = await start(store);
    const minted = { ...event(1), minted: true };
    const stored = await pipeline.append({ org: ORG, user: U1, events: [minted] });
    expect(store.lookedUp).not.toContain(clientIdKey(ORG, U1, minted.id));
    const retried = await pipeline.append({ org: ORG, user: U1, events: [event(1)] });
    expect(store.lookedUp).toContain(clientIdKey(ORG, U1, minted.id));
    expect(retried.events).toEqual(stored.events);
    expect(await readUserEvents(store, ORG, U1)).toHaveLength(1);
  });

  it('a failed batch fails only its own group (500, code 5000); the group built meanwhile commits and counts stay exact', async () => {
    const store = new GatedStore();
    const pipeline = await start(store);
    await pipeline.append({ org: ORG, user: U2, events: [event(1)] });
    store.gated = true;
    const failing = pipeline.append({ org: ORG, user: U1, events: [event(2)] }).catch((error: unknown) => error);
    await turns();
    const next = pipeline.append({ org: ORG, user: U2, events: [event(3)] });
    await turns();
    (store.held.shift() as { fail: (error: Error) => void }).fail(new Error('disk full'));
    store.gated = false;
    await turns();
    for (const held of store.held.splice(0)) held.release();
    const failed = await failing;
    expect(failed).toBeInstanceOf(ServiceError);
    expect((failed as ServiceError).status).toBe(500);
    expect((failed as ServiceError).code).toBe(5000);
    expect((await next).memberships).toEqual([1]);
    expect(await readUserEvents(store, ORG, U1)).toHaveLength(0);
    expect(pipeline.audienceSize(ORG, 1)).toBe(1);
    const again = await pipeline.append({ org: ORG, user: U1, events: [event(2)] });
    expect(again.memberships).toEqual([]);
    expect(await pipeline.membershipsOf(ORG, U1)).toEqual([]);
  });

  /** One partition: three users entering one cohort; U1's batch is held while U2's and U3's groups are built. */
  async function behindOneWrite(store: GatedStore, pipeline: Pipeline, answered: string[]): Promise<Promise<unknown>[]> {
    store.gated = true;
    store.batches = []; // not the partition count written when the pipeline opened
    const appends = [pipeline.append({ org: ORG, user: U1, events: [event(1)] }).then(() => answered.push('u1'))];
    await turns();
    appends.push(pipeline.append({ org: ORG, user: U2, events: [event(2)] }).then(() => answered.push('u2')));
    await turns();
    appends.push(pipeline.append({ org: ORG, user: U3, events: [event(3)] }).then(() => answered.push('u3')));
    await turns();
    // Two more groups were built; they wait behind U1's write and are not written yet.
    expect(store.held).toHaveLength(1);
    expect(store.batches).toHaveLength(1);
    return appends.map((append) => append.catch((error: unknown) => error));
  }

  it('the groups built while a batch is written share the next one, commit in build order, and count sizes on (D19)', async () => {
    const store = new GatedStore();
    const pipeline = await start(store, [A_PAGEVIEW], 1);
    const answered: string[] = [];
    const appends = await behindOneWrite(store, pipeline, answered);
    (store.held.shift() as { release: () => void }).release();
    await turns();
    expect(answered).toEqual(['u1']);
    // ONE batch holds both groups, U2's writes before U3's.
    expect(store.held).toHaveLength(1);
    const shared = store.held[0]?.ops ?? [];
    const firstOf = (user: string): number => shared.findIndex((op) => op.key.includes(user));
    expect(firstOf(U2)).toBeGreaterThanOrEqual(0);
    expect(firstOf(U3)).toBeGreaterThan(firstOf(U2));
    // Each group counts the partition's counter (U3's on U2's, which is not committed yet); the batch writes it once,
    // in one journal entry after U1's batch's.
    const counters = shared.filter((op) => op.key.startsWith('sz'));
    expect(counters).toEqual([{ type: 'put', key: sizeJournalKey(1), value: [ORG, [1, 0, 0, 3]] }]);
    store.gated = false;
    (store.held.shift() as { release: () => void }).release();
    await Promise.all(appends);
    expect(answered).toEqual(['u1', 'u2', 'u3']);
    expect(store.batches).toHaveLength(2);
    expect(pipeline.audienceSize(ORG, 1)).toBe(3);
    expect((await AudienceSizes.load(store)).total(ORG, 1, 0)).toBe(3);
  });

  it('a shared batch that fails is written again one group at a time: only the group whose writes fail is refused', async () => {
    const store = new GatedStore();
    const pipeline = await start(store, [A_PAGEVIEW], 1);
    const answered: string[] = [];
    const appends = await behindOneWrite(store, pipeline, answered);
    store.refuse = (ops) => ops.some((op) => op.key.includes(U2));
    store.gated = false;
    (store.held.shift() as { release: () => void }).release();
    const [first, second, third] = await Promise.all(appends);
    expect(first).toBe(1);
    expect(second).toBeInstanceOf(ServiceError);
    expect((second as ServiceError).code).toBe(5000);
    expect(answered).toEqual(['u1', 'u3']);
    expect(third).toBe(2);
    // U1's batch, the shared one (refused), U2's alone (refused), U3's alone.
    expect(store.batches.map((ops) => [U1, U2, U3].filter((user) => ops.some((op) => op.key.includes(user))))).toEqual([[U1], [U2, U3], [U2], [U3]]);
    expect(await readUserEvents(store, ORG, U2)).toHaveLength(0);
    expect((await readUserEvents(store, ORG, U3)).map((e) => e.id)).toEqual([event(3).id]);
    // U3's counter was counted again without U2's.
    expect((await AudienceSizes.load(store)).total(ORG, 1, 0)).toBe(2);
    expect(pipeline.audienceSize(ORG, 1)).toBe(2);
    store.refuse = undefined;
    await pipeline.append({ org: ORG, user: U2, events: [event(2)] });
    expect(pipeline.audienceSize(ORG, 1)).toBe(3);
  });
});
