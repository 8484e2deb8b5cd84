// planCatchUps with histories read ahead (a sweep's scan, handed over with `pipeline.catchUp`): a catch-up uses the
// history its item brought when that still ends at the user's last sequence with as many events as its state has
// seen, and reads the store again otherwise (an event stored since, a cut read), so the replayed events are always
// the stored ones.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory.js';
import type { BatchOp, RangeOptions, Store } from '../store/contract.js';
import { pushEventOps } from '../domain/events/ops.js';
import type { RecordValue, StoredEvent } from '../domain/events/record.js';
import { decodeValues } from '../store/values.js';
import { readHistoryChunk, type HistoryChunk } from '../ingest/state/load.js';
import { toPlanInfo } from '../ingest/plan-info.js';
import type { CatchUpItem } from '../ingest/lanes/lane.js';
import { cohort } from '../../test/support/ingest.js';
import { planCatchUps, type CatchUpCandidate } from './catchup.js';

const ORG = 'a0000000-0000-4000-8000-0000000000c1';
const USER = 'b0000000-0000-4000-8000-0000000000c1';
const T0 = Date.parse('2026-11-20T12:00:00.000Z');
const LIMITS = { inline: 2000, budget: 8000, taskEvents: 8192 };
// Cohort 7 has generation 2: a state marked 1 is behind it.
const PLAN = toPlanInfo({ version: 2, cohorts: [cohort(7, { and: [{ event: 'Pageview' }] })], generations: new Map([[7, 2]]) });

function record(n: number): StoredEvent {
  const timeMs = T0 + n * 1000;
  return { id: `e-${n}`, user_id: USER, name: 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: { n }, seq: n };
}

/** A memory store that counts the range reads of stored values (a history read is one). */
class CountingStore extends MemoryStore {
  reads = 0;

  override encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    this.reads++;
    return super.encodedValues(range);
  }

  override encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    this.reads++;
    return super.encodedEntries(range);
  }
}

/** A store holding the user's events 1..n. */
async function storeWith(n: number): Promise<{ store: CountingStore; reads: () => number }> {
  const store = new CountingStore();
  const ops: BatchOp[] = [];
  for (let i = 1; i <= n; i++) pushEventOps(ops, ORG, record(i));
  await store.batch(ops);
  return { store, reads: () => store.reads };
}

function candidate(count: number, seq: number, history?: HistoryChunk): CatchUpCandidate {
  const item: CatchUpItem = { kind: 'catchup', org: ORG, user: USER, ...(history === undefined ? {} : { history }), resolve: () => undefined, reject: () => undefined };
  return { org: ORG, user: USER, key: `${ORG}\0${USER}`, items: [item], count, mark: 1, seq };
}

/** The sequence of a replayed record: `record(n)`'s id names it (a stored record carries none, record.ts `RecordValue`). */
const seqOf = (event: RecordValue): number => Number(event.id.slice('e-'.length));

async function replayed(store: Store, of: CatchUpCandidate): Promise<{ events: RecordValue[]; chunk: unknown }> {
  const decision = (await planCatchUps(store, LIMITS, [of], { planOf: () => PLAN })).get(of.key);
  if (decision?.kind !== 'inline') throw new Error(`expected an inline catch-up, got ${decision?.kind}`);
  const events = decision.catchup.events as HistoryChunk['events'];
  return { events: decodeValues<RecordValue>(events.bytes), chunk: events };
}

describe('a catch-up with its history read ahead', () => {
  it('uses the history read ahead when it ends at the state last sequence, without reading again', async () => {
    const { store, reads } = await storeWith(5);
    const ahead = await readHistoryChunk(store, ORG, USER, 0, LIMITS.inline + 1);
    const before = reads();
    const { events, chunk } = await replayed(store, candidate(5, 5, ahead));
    expect(chunk).toBe(ahead.events);
    expect(reads()).toBe(before);
    expect(events.map(seqOf)).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads the store again when an event was stored after the history was read', async () => {
    const { store, reads } = await storeWith(5);
    const ahead = await readHistoryChunk(store, ORG, USER, 0, LIMITS.inline + 1);
    const more: BatchOp[] = [];
    pushEventOps(more, ORG, record(6));
    await store.batch(more);
    const before = reads();
    const { events } = await replayed(store, candidate(6, 6, ahead));
    expect(reads()).toBe(before + 1);
    expect(events.map(seqOf)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('reads the store again when the history brought holds as many events but ends at another sequence', async () => {
    // As many events, other ones (the oldest removed, a newer one stored since the read): no writer removes events
    // today (a fold re-lays records, removing none), so the count alone would do; the check holds on the sequence too.
    const { store, reads } = await storeWith(5);
    const ahead = await readHistoryChunk(store, ORG, USER, 0, LIMITS.inline + 1);
    const changed: BatchOp[] = [];
    pushEventOps(changed, ORG, record(6));
    await store.batch([...changed, ...(await store.encodedEntries({ gte: `e!${ORG}!${USER}!`, lt: `e!${ORG}!${USER}"`, limit: 1 })).map(([key]) => ({ type: 'del' as const, key }))]);
    const before = reads();
    const { events } = await replayed(store, candidate(5, 6, ahead));
    expect(reads()).toBe(before + 1);
    expect(events.map(seqOf)).toEqual([2, 3, 4, 5, 6]);
  });

  it('reads the store again when the history brought is missing, cut short or counts other events than the state', async () => {
    const { store, reads } = await storeWith(4);
    const whole = await readHistoryChunk(store, ORG, USER, 0, LIMITS.inline + 1);
    const cut = await readHistoryChunk(store, ORG, USER, 0, 2);
    expect(cut.done).toBe(false);
    const miscounted: HistoryChunk = { ...whole, events: { ...whole.events, count: 3 } };
    const cases: (HistoryChunk | undefined)[] = [undefined, cut, miscounted];
    for (const history of cases) {
      const before = reads();
      const { events, chunk } = await replayed(store, candidate(4, 4, history));
      expect(reads()).toBe(before + 1);
      expect(chunk).not.toBe(cut.events);
      expect(chunk).not.toBe(miscounted.events);
      expect(events.map(seqOf)).toEqual([1, 2, 3, 4]);
    }
  });
});
