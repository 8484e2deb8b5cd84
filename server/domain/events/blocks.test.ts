// Event blocks and folds (blocks.ts, fold.ts; server/store/README.md "Event blocks"): a user's history stored as
// single records, as blocks written by an append of several events, and as runs of single records folded later,
// reads the same through every read of the events area: by time (D29, D39 pages), in arrival order after a
// sequence (recovery), by event id (D29 retries), and in bounded chunks of stored bytes (backfill replays), on the
// memory store and on LevelDB (which hands stored bytes back as they are).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../store/contract.js';
import { MemoryStore } from '../../store/memory.js';
import { decodeValue, decodeValues, encodeValue } from '../../store/values.js';
import { STORE_KINDS, openTestStore } from '../../../test/support/stores.js';
import { readHistoryChunk, findStoredIds } from '../../ingest/state/load.js';
import { isEncodedBlock, isEventBlock, MAX_BLOCK_BYTES, MAX_BLOCK_EVENTS, blockOfEncoded, blockParts, readBlock, type EventBlock, type StoredEventValue } from './blocks.js';
import { foldOps } from './fold.js';
import { userEventPrefix, prefixUpperBound, seqOfKey } from './keys.js';
import { pushEventOps, pushEventRunOps } from './ops.js';
import { findByClientId, readUserEventPage, readUserEvents, replayUserEvents } from './read.js';
import { toEngineEvent, toRecordValue, unpackEngineEvents, type StoredEvent, type StoredRecordValue } from './record.js';

const ORG = 'a0000000-0000-4000-8000-0000000000b1';
const USER = 'b0000000-0000-4000-8000-0000000000b1';
const OTHER = 'b0000000-0000-4000-8000-0000000000b2';
const T0 = Date.parse('2026-11-20T12:00:00.000Z');

/** The n-th event of a user at `seq`; times go back and forth so that time order differs from arrival order. */
function event(user: string, n: number, seq: number): StoredEvent {
  const timeMs = T0 + ((n * 7919) % 101) * 1000;
  return { id: `${user.slice(0, 8)}-${n}`, user_id: user, name: n % 3 === 0 ? 'Click' : 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: { n, __proto__x: n }, seq };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

/** Every stored `e!` value of the user: 'r' for a record, the number of records for a block. */
async function layout(store: Store, user: string): Promise<(string | number)[]> {
  const prefix = userEventPrefix(ORG, user);
  const values = await store.encodedValues({ gte: prefix, lt: prefixUpperBound(prefix) });
  return values.map((bytes) => (isEncodedBlock(bytes) ? decodeValue<EventBlock>(bytes)[0].length : 'r'));
}

/**
 * Writes the user's history in appends of the given sizes (seqs interleaved with another user's single events, as a
 * partition's sequences are), and answers the records in arrival order.
 */
async function write(store: Store, appends: readonly number[], options: { older?: boolean; from?: number } = {}): Promise<StoredEvent[]> {
  const mine: StoredEvent[] = [];
  let seq = options.from ?? 0;
  let n = seq;
  for (const size of appends) {
    const ops: Parameters<typeof pushEventOps>[0] = [];
    const run: StoredEvent[] = [];
    for (let i = 0; i < size; i++) run.push(event(USER, ++n, ++seq));
    pushEventRunOps(ops, ORG, run);
    pushEventOps(ops, ORG, event(OTHER, n, ++seq));
    await store.batch(options.older === true ? asOlderLayout(ops, run) : ops);
    mine.push(...run);
  }
  return mine;
}

/**
 * The user's `e!` writes of `run` as they were before record.ts `RecordValue`: whole records, singly and in blocks.
 */
function asOlderLayout(ops: Parameters<typeof pushEventOps>[0], run: readonly StoredEvent[]): Parameters<typeof pushEventOps>[0] {
  const bySeq = new Map(run.map((record) => [record.seq, record]));
  return ops.map((op) => {
    if (op.type !== 'put' || !op.key.startsWith(userEventPrefix(ORG, USER))) return op;
    const value = op.value as StoredEventValue;
    if (!isEventBlock(value)) return { ...op, value: bySeq.get(seqOfKey(op.key)) };
    return { ...op, value: blockOfEncoded(value[0], value[0].map((seq) => encodeValue(bySeq.get(seq)))) };
  });
}

/**
 * What every read answers for these records, compared with what the store answers; `older` the sequences of those
 * written before `RecordValue` (whole records: packed as they are).
 */
async function expectReads(store: Store, records: readonly StoredEvent[], older: ReadonlySet<number> = new Set()): Promise<void> {
  const byTime = [...records].sort((a, b) => a.timeMs - b.timeMs || a.seq - b.seq);
  expect(await readUserEvents(store, ORG, USER)).toEqual(byTime);
  // D39 pages of 7 follow each other through blocks.
  const paged: StoredEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await readUserEventPage(store, ORG, USER, { limit: 7, ...(cursor === undefined ? {} : { cursor }) });
    paged.push(...page.events);
    cursor = page.next;
  } while (cursor !== undefined);
  expect(paged).toEqual(byTime);
  // In arrival order after every sequence (a snapshot's end falls anywhere, inside a block too).
  for (const after of [0, ...records.filter((_, i) => i % 7 === 0 || i > records.length - 4).map((record) => record.seq)]) {
    expect(await collect(replayUserEvents(store, ORG, USER, after))).toEqual(records.filter((record) => record.seq > after));
  }
  // Every id finds its record (D29), one by one and all at once.
  for (const record of records.filter((_, i) => i % 5 === 0 || i > records.length - 4)) expect(await findByClientId(store, ORG, USER, record.id)).toEqual(record);
  const found = await findStoredIds(store, records.map((record) => ({ org: ORG, user: USER, id: record.id })));
  expect(found.size).toBe(records.length);
  // Chunks of stored bytes of every size, from every sequence, up to the last (or an earlier) sequence.
  const last = records[records.length - 1]?.seq ?? 0;
  for (const limit of [1, 3, 40, 1000]) {
    for (const until of [last, Number.MAX_SAFE_INTEGER]) {
      // Packed as stored (record.ts `RecordValue`): the chunk's last sequence says where the next one starts.
      const read: StoredRecordValue[] = [];
      let after = 0;
      for (let rounds = 0; rounds < 1000; rounds++) {
        const chunk = await readHistoryChunk(store, ORG, USER, after, limit, until);
        const events = decodeValues<StoredRecordValue>(chunk.events.bytes);
        expect(events).toHaveLength(chunk.events.count);
        // The owners' reader gives what the whole records give, either layout.
        expect(unpackEngineEvents(chunk.events)).toEqual(records.slice(read.length, read.length + events.length).map(toEngineEvent));
        expect(chunk.events.count).toBeLessThanOrEqual(limit);
        read.push(...events);
        if (chunk.events.count > 0) expect(chunk.lastSeq).toBe(records[read.length - 1]?.seq);
        after = chunk.lastSeq;
        if (chunk.done) break;
      }
      expect(read).toEqual(records.map((record) => (older.has(record.seq) ? record : toRecordValue(record))));
    }
  }
}

for (const kind of STORE_KINDS) {
  describe(`event blocks on the ${kind} store`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;
    beforeEach(async () => {
      ({ store, cleanup } = await openTestStore(kind, 'audience-blocks-'));
    });
    afterEach(async () => cleanup());

    it('stores an append of several events as blocks of at most MAX_BLOCK_EVENTS, and one alone as its record', async () => {
      const records = await write(store, [1, 5, 1, MAX_BLOCK_EVENTS + 3, 2]);
      expect(await layout(store, USER)).toEqual(['r', 5, 'r', MAX_BLOCK_EVENTS, 3, 2]);
      expect(await layout(store, OTHER)).toEqual(['r', 'r', 'r', 'r', 'r']);
      await expectReads(store, records);
    });

    it('folds runs of single records into blocks, leaves blocks and lone records, and reads the same after', async () => {
      const records = await write(store, [1, 1, 1, 4, 1, 1, 1, 1, 1, 3, 1]);
      expect(await layout(store, USER)).toEqual(['r', 'r', 'r', 4, 'r', 'r', 'r', 'r', 'r', 3, 'r']);
      await expectReads(store, records);
      const last = records[records.length - 1] as StoredEvent;
      const fold = await foldOps(store, { org: ORG, user: USER, throughSeq: last.seq, events: records.length });
      expect(fold.folded).toBe(8);
      await store.batch(fold.ops);
      expect(await layout(store, USER)).toEqual([3, 4, 5, 3, 'r']);
      await expectReads(store, records);
      // Nothing left to fold; the other user's records were not touched.
      expect((await foldOps(store, { org: ORG, user: USER, throughSeq: last.seq, events: records.length })).ops).toEqual([]);
      expect(await layout(store, OTHER)).toHaveLength(11);
    });

    it('stores a record without its user, sequence and ISO time, which its key and timeMs give', async () => {
      const [record] = await write(store, [1]);
      const [bytes] = await store.encodedValues({ gte: userEventPrefix(ORG, USER), lt: prefixUpperBound(userEventPrefix(ORG, USER)) });
      expect(Object.keys(decodeValue<object>(bytes as Uint8Array)).sort()).toEqual(['id', 'name', 'properties', 'timeMs']);
      expect(await readUserEvents(store, ORG, USER)).toEqual([record]);
    });

    it('reads records stored whole (before RecordValue), single and in blocks, beside new ones, and folds them together', async () => {
      const olderRecords = await write(store, [1, 1, 4, 1], { older: true });
      const records = [...olderRecords, ...(await write(store, [1, 3, 1, 1], { from: 20 }))];
      const older = new Set(olderRecords.map((record) => record.seq));
      expect(await layout(store, USER)).toEqual(['r', 'r', 4, 'r', 'r', 3, 'r', 'r']);
      expect(decodeValue<StoredEvent>((await store.encodedValues({ gte: userEventPrefix(ORG, USER), limit: 1 }))[0] as Uint8Array)).toEqual(records[0]);
      await expectReads(store, records, older);
      const last = records[records.length - 1] as StoredEvent;
      const fold = await foldOps(store, { org: ORG, user: USER, throughSeq: last.seq, events: records.length });
      await store.batch(fold.ops);
      expect(await layout(store, USER)).toEqual([2, 4, 2, 3, 2]);
      await expectReads(store, records, older);
    });

    it('folds only the latest events asked for, and runs longer than a block into several', async () => {
      const records = await write(store, Array.from({ length: MAX_BLOCK_EVENTS + 120 }, () => 1));
      const last = records[records.length - 1] as StoredEvent;
      // The last 10: one block of 10 after the singles before them.
      const recent = await foldOps(store, { org: ORG, user: USER, throughSeq: last.seq, events: 10 });
      await store.batch(recent.ops);
      expect((await layout(store, USER)).slice(-2)).toEqual(['r', 10]);
      // Through an earlier sequence: the events after it are not read.
      const middle = records[99] as StoredEvent;
      const earlier = await foldOps(store, { org: ORG, user: USER, throughSeq: middle.seq, events: 50 });
      await store.batch(earlier.ops);
      expect(earlier.folded).toBe(50);
      const all = await foldOps(store, { org: ORG, user: USER, throughSeq: last.seq, events: records.length });
      await store.batch(all.ops);
      expect(all.folded).toBe(50 + MAX_BLOCK_EVENTS + 10);
      expect(await layout(store, USER)).toEqual([50, 50, MAX_BLOCK_EVENTS, 10, 10]);
      await expectReads(store, records);
    });
  });
}

describe('the block format', () => {
  const blockOf = (records: readonly StoredEvent[]): EventBlock => blockOfEncoded(records.map((record) => record.seq), records.map((record) => encodeValue(record)));

  it('tells a block from a record by its first byte, whatever the record holds', () => {
    const records = [event(USER, 1, 1), event(USER, 2, 2)];
    for (const record of records) expect(isEncodedBlock(encodeValue(record))).toBe(false);
    expect(isEncodedBlock(encodeValue(blockOf(records)))).toBe(true);
    expect(isEncodedBlock(encodeValue(blockOf(Array.from({ length: 20 }, (_, i) => event(USER, i, i + 1)))))).toBe(true);
  });

  it('refuses a block of one record, one too long or too large, and sequences that do not match the records', () => {
    const one = encodeValue(event(USER, 1, 1));
    expect(() => blockOfEncoded([1], [one])).toThrow(RangeError);
    expect(() => blockOfEncoded([1, 2], [one])).toThrow(RangeError);
    expect(() => blockOfEncoded(Array.from({ length: MAX_BLOCK_EVENTS + 1 }, (_, i) => i), Array.from({ length: MAX_BLOCK_EVENTS + 1 }, () => one))).toThrow(RangeError);
    const half = new Uint8Array(MAX_BLOCK_BYTES / 2 + 1);
    expect(() => blockOfEncoded([1, 2], [half, half])).toThrow(RangeError);
  });

  it('reads a stored block\'s parts as msgpackr does, for every width of sequence, count and size, and other shapes through msgpackr', () => {
    const widths = [0, 5, 127, 128, 255, 256, 65_535, 65_536, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];
    for (const count of [2, 15, 16, 17, MAX_BLOCK_EVENTS]) {
      for (const size of [1, 200, 300, 70_000]) {
        const base = widths[(count + size) % widths.length] as number;
        const seqs = Array.from({ length: count }, (_, i) => Math.min(Number.MAX_SAFE_INTEGER, base + i * 97));
        const records = Uint8Array.from({ length: Math.min(size * count, MAX_BLOCK_BYTES) }, (_, i) => i % 251);
        const ends = Array.from({ length: count }, (_, i) => Math.floor(((i + 1) * records.length) / count));
        const stored = encodeValue([seqs, ends, records]);
        // LevelDB answers Buffers: the same parts from either.
        for (const bytes of [stored, Buffer.from(stored)]) {
          const read = readBlock(bytes);
          expect(read).toStrictEqual(decodeValue<EventBlock>(bytes));
          expect(read[2].constructor).toBe(Uint8Array);
        }
      }
    }
    // Shapes the store does not write for a block are msgpackr's to read (or to fail).
    for (const odd of [[[-1, 2], [1, 2], new Uint8Array(2)], [[1.5, 2], [1, 2], new Uint8Array(2)], [[1, 2], [1, 2], 'text'], [[1, 2], [1, 2]], [[1, 2], [1, 2], new Uint8Array(2), 4]]) {
      expect(readBlock(encodeValue(odd))).toStrictEqual(decodeValue(encodeValue(odd)));
    }
    const cut = encodeValue([[1, 2], [3, 4], new Uint8Array(4)]).subarray(0, 8);
    expect(() => readBlock(cut)).toThrow();
  });

  it('splits a run into parts of at most MAX_BLOCK_EVENTS records and MAX_BLOCK_BYTES, a larger record alone', () => {
    expect(blockParts([])).toEqual([]);
    expect(blockParts([10])).toEqual([[0, 1]]);
    expect(blockParts(Array.from({ length: MAX_BLOCK_EVENTS * 2 + 1 }, () => 10))).toEqual([[0, MAX_BLOCK_EVENTS], [MAX_BLOCK_EVENTS, MAX_BLOCK_EVENTS * 2], [MAX_BLOCK_EVENTS * 2, MAX_BLOCK_EVENTS * 2 + 1]]);
    const third = Math.floor(MAX_BLOCK_BYTES / 3);
    expect(blockParts([third, third, third, third, 10])).toEqual([[0, 3], [3, 5]]);
    expect(blockParts([10, MAX_BLOCK_BYTES + 1, 10, 10])).toEqual([[0, 1], [1, 2], [2, 4]]);
  });
});

describe('large records', () => {
  it('are stored in blocks within MAX_BLOCK_BYTES, one larger alone, by an append and by a fold, and read the same', async () => {
    const store = new MemoryStore();
    const big = (n: number, seq: number, bytes: number): StoredEvent => ({ ...event(USER, n, seq), properties: { n, text: 'x'.repeat(bytes) } });
    // A quarter of the bound less what the record's other fields take: four fit in a block, five do not.
    const quarter = Math.floor(MAX_BLOCK_BYTES / 4) - 300;
    // One append: four quarters (a block), a fifth and a small one (a block), one too large alone, one small alone.
    const appended = [1, 2, 3, 4, 5].map((n) => big(n, n, quarter)).concat([big(6, 6, 10), big(7, 7, MAX_BLOCK_BYTES), big(8, 8, 10)]);
    const ops: Parameters<typeof pushEventOps>[0] = [];
    pushEventRunOps(ops, ORG, appended);
    await store.batch(ops);
    expect(await layout(store, USER)).toEqual([4, 2, 'r', 'r']);
    // Singles folded: the same split (the fifth quarter alone: the large record after it does not fit with it).
    const singles = [9, 10, 11, 12, 13].map((n) => big(n, n, quarter)).concat([big(14, 14, MAX_BLOCK_BYTES), big(15, 15, 10), big(16, 16, 10)]);
    for (const record of singles) {
      const single: Parameters<typeof pushEventOps>[0] = [];
      pushEventOps(single, ORG, record);
      await store.batch(single);
    }
    const fold = await foldOps(store, { org: ORG, user: USER, throughSeq: 16, events: singles.length });
    await store.batch(fold.ops);
    expect(fold.folded).toBe(6);
    expect(await layout(store, USER)).toEqual([4, 2, 'r', 'r', 4, 'r', 'r', 2]);
    await expectReads(store, [...appended, ...singles]);
  });
});
