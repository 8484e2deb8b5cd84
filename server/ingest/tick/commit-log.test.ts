// The transitions log and the reactions' outbox written with the events (D37, D38): one t! entry per step that moved
// someone, a pending delivery per firing reaction in commit order, every_time on page loads of members, none for
// catch-ups, nothing when the batch fails.

import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import type { BatchOp } from '../../store/contract.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, eventId, userId } from '../../../test/support/ingest.js';
import { openIngestPipeline, type Pipeline } from '../pipeline.js';
import { readTransitionLog } from '../../domain/reactions/log.js';
import { reactionsKeys, type Delivery, type FiringReaction, type ReactionLookup } from '../../domain/reactions/contract.js';
import type { Committed } from './commit-log.js';

const CLICKERS = cohort(1, { event: 'Click' });
const THREE_VIEWS = cohort(2, { event: 'Pageview', frequency: { greater_than_or_equal_to: 3 } });

class Reactions implements ReactionLookup {
  constructor(private readonly list: readonly (FiringReaction & { org: string })[]) {}
  firing(org: string, code: number): readonly FiringReaction[] {
    return this.list.filter((r) => r.org === org && r.cohort.code === code);
  }
  hasEveryTime(org: string): boolean {
    return this.list.some((r) => r.org === org && r.trigger === 'every_time');
  }
}

const reaction = (id: string, trigger: FiringReaction['trigger'], code: number) => ({
  org: ORG,
  id,
  trigger,
  cohort: { id: `cohort-${code}`, code, name: `Cohort ${code}` },
});

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

async function deliveries(store: MemoryStore, reactionId: string): Promise<Delivery[]> {
  const prefix = reactionsKeys.deliveryPrefix(reactionId);
  const out: Delivery[] = [];
  for await (const [, value] of store.iterate<Delivery>({ gte: prefix, lt: prefix.slice(0, -1) + '"' })) out.push(value);
  return out;
}

let open: Pipeline[] = [];
afterEach(async () => {
  for (const pipeline of open) await pipeline.close();
  open = [];
});

async function start(store: MemoryStore, lookup: ReactionLookup): Promise<{ pipeline: Pipeline; outcomes: Committed[] }> {
  const pipeline = await openIngestPipeline({ store, plans: new MapPlans(ORG, [CLICKERS, THREE_VIEWS]), contexts: new MapContexts(), now: () => T0, reactions: lookup });
  open.push(pipeline);
  const outcomes: Committed[] = [];
  pipeline.onCommitted((outcome) => outcomes.push(outcome));
  return { pipeline, outcomes };
}

describe('the transitions log and the outbox (D37, D38)', () => {
  it('an entry fires on_entry, a page load of a member fires every_time; ids follow commit order; listeners hear it', async () => {
    const store = new MemoryStore();
    const lookup = new Reactions([reaction('r-entry', 'on_entry', 1), reaction('r-exit', 'on_exit', 1), reaction('r-every', 'every_time', 2)]);
    const { pipeline, outcomes } = await start(store, lookup);
    const U1 = userId(1);
    // Three page views: the third enters cohort 2 (its page load fires nothing: the user was not in before it).
    await pipeline.append({ org: ORG, user: U1, events: [event(1), event(2), event(3)] });
    await pipeline.append({ org: ORG, user: U1, events: [event(4, 'Click'), event(5)] });

    const log = await collect(readTransitionLog(store));
    expect(log.map(({ cursor, entry }) => [cursor, entry.event_id, entry.transitions.map((t) => `${t.kind}:${t.cohort}`)])).toEqual([
      [1, eventId(3), ['entered:2']],
      [2, eventId(4), ['entered:1']],
    ]);
    const entry = await deliveries(store, 'r-entry');
    expect(entry.map((d) => d.body)).toEqual([
      { id: 'dlv_00000000000001', reaction_id: 'r-entry', trigger: 'on_entry', cohort: { id: 'cohort-1', code: 1, name: 'Cohort 1' }, user_id: U1, time: new Date(T0 + 4000).toISOString(), event_id: eventId(4) },
    ]);
    expect(entry[0]).toMatchObject({ status: 'pending', attempts: 0, created_at: T0, next_at: T0 });
    // The fifth event is a page load of a member of cohort 2 (since the third).
    expect((await deliveries(store, 'r-every')).map((d) => [d.body.id, d.body.event_id])).toEqual([['dlv_00000000000002', eventId(5)]]);
    expect(await deliveries(store, 'r-exit')).toEqual([]);
    expect(await store.get(reactionsKeys.pending('r-every', 2))).toBe(U1);
    expect(await store.get(reactionsKeys.outboxSeq())).toBe(2);
    expect(await store.get(reactionsKeys.logCursor())).toBe(2);
    // Stored in the log's compact form (domain/reactions/log.ts): [org, user, event_id, at, moves, time].
    expect(await store.get(reactionsKeys.logEntry(2))).toEqual([ORG, U1, eventId(4), T0, [1], T0 + 4000]);
    expect(outcomes.flatMap((o) => o.log.map((l) => l.cursor))).toEqual([1, 2]);
    expect(outcomes.flatMap((o) => [...o.reactions])).toEqual(['r-entry', 'r-every']);
  });

  it('cursors go on after a restart; a failed batch writes nothing and takes back its cursors', async () => {
    const store = new MemoryStore();
    const lookup = new Reactions([reaction('r-entry', 'on_entry', 1)]);
    const first = await start(store, lookup);
    await first.pipeline.append({ org: ORG, user: userId(1), events: [event(1, 'Click')] });
    await first.pipeline.close();
    open = [];

    const second = await start(store, lookup);
    const batch = store.batch.bind(store);
    let fail = true;
    store.batch = async (ops: readonly BatchOp[]) => {
      if (fail) {
        fail = false;
        throw new Error('disk on fire');
      }
      return batch(ops);
    };
    await expect(second.pipeline.append({ org: ORG, user: userId(2), events: [event(2, 'Click')] })).rejects.toMatchObject({ code: 5000 });
    await second.pipeline.append({ org: ORG, user: userId(3), events: [event(3, 'Click')] });
    const log = await collect(readTransitionLog(store));
    expect(log.map((l) => [l.cursor, l.entry.user])).toEqual([
      [1, userId(1)],
      [2, userId(3)],
    ]);
    expect((await deliveries(store, 'r-entry')).map((d) => [d.body.id, d.body.user_id])).toEqual([
      ['dlv_00000000000001', userId(1)],
      ['dlv_00000000000002', userId(3)],
    ]);
  });
});
