// Events storage (D29, ARCHITECTURE "The ingest path"): batch builders, reads by time with from/to and the 1000 cap,
// replay in arrival order, safe-retry ids, the partition log, snapshots, partitioning.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../store/contract.js';
import { MemoryStore } from '../../store/memory.js';
import { eventOps, partitionSeqOps, snapshotOps } from './ops.js';
import { logKey, partitionOf } from './keys.js';
import {
  findByClientId,
  hasEvents,
  lastSeq,
  readSnapshot,
  readUserEventPage,
  readUserEvents,
  replayUserEvents,
} from './read.js';
import type { EventRecord, StoredEvent } from './record.js';
import { toEngineEvent, toWireRecord } from './record.js';

const ORG = 'a0000000-0000-4000-8000-0000000000e1';
const OTHER_ORG = 'a0000000-0000-4000-8000-0000000000e2';
const U1 = 'b0000000-0000-4000-8000-0000000000e1';
const U2 = 'b0000000-0000-4000-8000-0000000000e2';
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

let store: Store;
let nextSeq: Map<number, number>;

beforeEach(() => {
  store = new MemoryStore();
  nextSeq = new Map();
});

const eventId = (n: number) => `e0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function record(user: string, n: number, timeMs: number, name = 'Pageview'): EventRecord {
  return { id: eventId(n), user_id: user, name, time: new Date(timeMs).toISOString(), properties: { n } };
}

/** A record as the pipeline stores it at `seq` (its time parsed once, on arrival). */
function stored(event: EventRecord, seq: number): StoredEvent {
  return { ...event, seq, timeMs: Date.parse(event.time) };
}

/** Writes events as the pipeline would: each gets the partition's next sequence; one batch for all. */
async function track(events: Array<{ org?: string; event: EventRecord; partition?: number }>): Promise<number[]> {
  const ops = [];
  const seqs: number[] = [];
  for (const { org = ORG, event, partition = 0 } of events) {
    const seq = (nextSeq.get(partition) ?? 0) + 1;
    nextSeq.set(partition, seq);
    seqs.push(seq);
    ops.push(...eventOps({ org, event: stored(event, seq) }), ...partitionSeqOps(partition, seq));
  }
  await store.batch(ops);
  return seqs;
}

const numbers = (events: readonly StoredEvent[]) => events.map((event) => event.properties['n']);

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe('readUserEvents (D29)', () => {
  it('answers ascending time, ties in arrival order, whatever the arrival order', async () => {
    await track([
      { event: record(U1, 1, T0 + 3000) },
      { event: record(U1, 2, T0 + 1000) },
      { event: record(U1, 3, T0 + 2000) },
      { event: record(U1, 4, T0 + 1000) },
      { event: record(U1, 5, T0 - 5000) },
    ]);
    expect(numbers(await readUserEvents(store, ORG, U1))).toEqual([5, 2, 4, 3, 1]);
  });

  it('from is exclusive and to inclusive', async () => {
    await track([1, 2, 3, 4, 5].map((n) => ({ event: record(U1, n, T0 + n * 1000) })));
    expect(numbers(await readUserEvents(store, ORG, U1, { from: T0 + 2000 }))).toEqual([3, 4, 5]);
    expect(numbers(await readUserEvents(store, ORG, U1, { to: T0 + 2000 }))).toEqual([1, 2]);
    expect(numbers(await readUserEvents(store, ORG, U1, { from: T0 + 1000, to: T0 + 4000 }))).toEqual([2, 3, 4]);
    expect(numbers(await readUserEvents(store, ORG, U1, { from: T0 + 1999, to: T0 + 2000 }))).toEqual([2]);
    expect(await readUserEvents(store, ORG, U1, { from: T0 + 4000, to: T0 + 2000 })).toEqual([]);
    expect(await readUserEvents(store, ORG, U1, { from: T0 + 3000, to: T0 + 3000 })).toEqual([]);
  });

  it('answers at most 1000, the oldest after from; the next page starts after the last time', async () => {
    const events = Array.from({ length: 1500 }, (_, i) => ({ event: record(U1, i, T0 + (1500 - i) * 10) }));
    await track(events);
    const first = await readUserEvents(store, ORG, U1);
    expect(first).toHaveLength(1000);
    expect(first[0]?.timeMs).toBe(T0 + 10);
    expect(first[999]?.timeMs).toBe(T0 + 10_000);
    const second = await readUserEvents(store, ORG, U1, { from: first[999]?.timeMs as number });
    expect(second).toHaveLength(500);
    expect(second[0]?.timeMs).toBe(T0 + 10_010);
    expect(await readUserEvents(store, ORG, U1, { limit: 5000 })).toHaveLength(1000);
    expect(numbers(await readUserEvents(store, ORG, U1, { limit: 2 }))).toEqual([1499, 1498]);
  });

  it('pages by cursor through events sharing the boundary millisecond, each once, within from/to (D39)', async () => {
    // Five events in one millisecond between one before and one after: pages of 2 split the tie twice.
    await track([
      { event: record(U1, 0, T0) },
      ...[1, 2, 3, 4, 5].map((n) => ({ event: record(U1, n, T0 + 1) })),
      { event: record(U1, 6, T0 + 2) },
    ]);
    const seen: unknown[][] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await readUserEventPage(store, ORG, U1, { from: T0, to: T0 + 1, limit: 2, cursor });
      seen.push(numbers(result.events));
      cursor = result.next;
      if (cursor === undefined) break;
    }
    expect(seen).toEqual([[1, 2], [3, 4], [5]]);
    const exact = await readUserEventPage(store, ORG, U1, { limit: 7 });
    expect(exact.events).toHaveLength(7);
    expect(exact.next).toBeUndefined();
    await expect(readUserEventPage(store, ORG, U1, { cursor: 'bogus' })).rejects.toBeInstanceOf(RangeError);
  });

  it('reads one user of one organization only', async () => {
    await track([
      { event: record(U1, 1, T0) },
      { event: record(U2, 2, T0) },
      { org: OTHER_ORG, event: record(U1, 3, T0) },
    ]);
    expect(numbers(await readUserEvents(store, ORG, U1))).toEqual([1]);
    expect(numbers(await readUserEvents(store, OTHER_ORG, U1))).toEqual([3]);
    expect(await readUserEvents(store, ORG, 'b0000000-0000-4000-8000-0000000000ff')).toEqual([]);
  });

  it('orders times before 1970 and far in the future correctly', async () => {
    await track([
      { event: record(U1, 1, Date.parse('2300-01-01T00:00:00Z')) },
      { event: record(U1, 2, Date.parse('1969-12-31T23:59:59.999Z')) },
      { event: record(U1, 3, Date.parse('0001-01-01T00:00:00Z')) },
      { event: record(U1, 4, 0) },
    ]);
    expect(numbers(await readUserEvents(store, ORG, U1))).toEqual([3, 2, 4, 1]);
    expect(numbers(await readUserEvents(store, ORG, U1, { from: -1 }))).toEqual([4, 1]);
  });

  it('answers each record whole, its user, sequence and ISO time rebuilt from its key and timeMs, at any year D3 accepts', async () => {
    const times = ['0000-01-01T00:00:00.000Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'];
    const events = times.map((time, i) => ({ ...record(U1, i + 1, Date.parse(time)), session_id: eventId(100 + i), ...(i % 2 === 0 ? { view_id: eventId(200 + i) } : {}) }));
    const seqs = await track(events.map((event) => ({ event })));
    const expected = events.map((event, i) => stored(event, seqs[i] as number));
    expect((await readUserEvents(store, ORG, U1)).map(toWireRecord).map((wire) => wire.time)).toEqual(times);
    expect(await readUserEvents(store, ORG, U1)).toEqual(expected);
    expect(await collect(replayUserEvents(store, ORG, U1))).toEqual(expected);
    for (const event of expected) expect(await findByClientId(store, ORG, U1, event.id)).toEqual(event);
  });

  it('stores the record with its sequence and epoch-ms time; the wire form drops them', async () => {
    const event = { ...record(U1, 1, T0), session_id: eventId(100) };
    const [seq] = await track([{ event }]);
    const [stored] = await readUserEvents(store, ORG, U1);
    expect(stored).toEqual({ ...event, seq, timeMs: T0 });
    expect(toWireRecord(stored as StoredEvent)).toEqual(event);
    expect(toEngineEvent(stored as StoredEvent)).toEqual({
      name: 'Pageview',
      time: T0,
      properties: { n: 1 },
      session_id: eventId(100),
      view_id: null,
    });
  });
});

describe('replayUserEvents and hasEvents', () => {
  it('replays a user in arrival order, not time order, and after a sequence', async () => {
    const seqs = await track([
      { event: record(U1, 1, T0 + 3000) },
      { event: record(U2, 2, T0) },
      { event: record(U1, 3, T0 + 1000) },
      { event: record(U1, 4, T0 + 2000) },
    ]);
    expect(numbers(await collect(replayUserEvents(store, ORG, U1)))).toEqual([1, 3, 4]);
    expect(numbers(await collect(replayUserEvents(store, ORG, U1, seqs[2])))).toEqual([4]);
    expect(await hasEvents(store, ORG, U1)).toBe(true);
    expect(await hasEvents(store, OTHER_ORG, U1)).toBe(false);
  });
});

describe('findByClientId (D29 safe retries)', () => {
  it("finds the stored record of a user's event id, and nothing for other users or ids", async () => {
    await track([{ event: record(U1, 1, T0) }, { event: record(U2, 2, T0) }]);
    expect((await findByClientId(store, ORG, U1, eventId(1)))?.properties).toEqual({ n: 1 });
    expect(await findByClientId(store, ORG, U1, eventId(2))).toBeUndefined();
    expect(await findByClientId(store, OTHER_ORG, U1, eventId(1))).toBeUndefined();
    expect(await findByClientId(store, ORG, U1, eventId(9))).toBeUndefined();
  });
});

describe('partition sequences (recovery)', () => {
  it('lastSeq of a data directory written before ps! is its last log key; with both, the larger', async () => {
    // Before this layout every event had a log entry and there was no ps! key.
    await store.batch([{ type: 'put', key: logKey(3, 41), value: { kind: 'transitions', org: ORG, user: U1, transitions: [] } }]);
    expect(await lastSeq(store, 3)).toBe(41);
    await store.batch(partitionSeqOps(3, 40));
    expect(await lastSeq(store, 3)).toBe(41);
    await store.batch(partitionSeqOps(3, 45));
    expect(await lastSeq(store, 3)).toBe(45);
  });

  it('lastSeq is the highest sequence of the partition, 0 when empty', async () => {
    expect(await lastSeq(store, 0)).toBe(0);
    await track(Array.from({ length: 20 }, (_, i) => ({ event: record(U1, i, T0) })));
    await track([{ event: record(U1, 99, T0), partition: 2 }]);
    expect(await lastSeq(store, 0)).toBe(20);
    expect(await lastSeq(store, 2)).toBe(1);
    expect(await lastSeq(store, 1)).toBe(0);
  });
});

describe('snapshots', () => {
  it('round-trip a user state stamped with its sequence; a later snapshot replaces it', async () => {
    expect(await readSnapshot(store, ORG, U1)).toBeUndefined();
    await store.batch(snapshotOps(ORG, U1, 42, { slots: [1, 2] }));
    expect(await readSnapshot(store, ORG, U1)).toEqual({ seq: 42, state: { slots: [1, 2] } });
    await store.batch(snapshotOps(ORG, U1, 50, { slots: [3] }));
    expect(await readSnapshot(store, ORG, U1)).toEqual({ seq: 50, state: { slots: [3] } });
  });
});

describe('partitionOf', () => {
  it('is stable, within range, and spreads users', () => {
    const counts = new Array<number>(8).fill(0);
    for (let i = 0; i < 8000; i++) {
      const user = `b0000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
      const partition = partitionOf(ORG, user, 8);
      expect(partitionOf(ORG, user, 8)).toBe(partition);
      counts[partition] = (counts[partition] ?? 0) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(700);
    // Pinned to FNV-1a("o!u") = 0xb9ae1a08: changing the hash would move stored users to other partitions.
    expect(partitionOf('o', 'u', 2 ** 32)).toBe(0xb9ae1a08);
    expect(partitionOf('o', 'u', 1000)).toBe(0xb9ae1a08 % 1000);
    // Over UTF-16 code units, as the hash of the joined string was (values from that form).
    expect(partitionOf('a0000000-0000-4000-8000-000000000001', 'b0000000-0000-4000-8000-00000000002a', 2 ** 32)).toBe(0x7f3d695d);
    expect(partitionOf('org', 'Zoë 🙂', 2 ** 32)).toBe(0xe6246acf);
  });
});
