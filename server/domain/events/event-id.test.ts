import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { mintEventId, mintedTime, needsIdIndex } from './event-id.js';
import type { BatchOp } from '../../store/contract.js';
import { eventOps, pushEventRunOps } from './ops.js';
import { newEvent, toStoredEvent, type StoredEvent } from './record.js';

const UUID_V7_MARKED = /^[0-9a-f]{8}-[0-9a-f]{4}-7a7e-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const ORG = 'a0000000-0000-4000-8000-000000000001';
const USER = 'b0000000-0000-4000-8000-000000000002';

describe('minted event ids (D29, event-id.ts)', () => {
  it('are UUIDs of version 7 with the mark, carrying the time given and the random half of the UUID given', () => {
    const time = Date.UTC(2026, 10, 29, 2, 10, 0, 123);
    const random = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const id = mintEventId(time, random);
    expect(id).toMatch(UUID_V7_MARKED);
    expect(id).toBe(`${time.toString(16).padStart(12, '0').slice(0, 8)}-${time.toString(16).padStart(12, '0').slice(8)}-7a7e-a165-70867728950e`);
    expect(mintedTime(id)).toBe(time);
    // The variant bits are 10 whatever the source's were; the source's other bits are kept.
    expect(mintEventId(time, '0f8fad5b-d9cb-469f-f165-70867728950e').slice(19)).toBe('b165-70867728950e');
    expect(mintEventId(0, randomUUID())).toMatch(/^00000000-0000-7a7e-/);
    expect(mintEventId(2 ** 48 - 1, randomUUID())).toMatch(/^ffffffff-ffff-7a7e-/);
  });

  it('fall back to the UUID given where the shape cannot hold the time or the source is no UUID', () => {
    const random = randomUUID();
    expect(mintEventId(-1, random)).toBe(random); // before 1970 (D3 accepts years from 0000)
    expect(mintEventId(2 ** 48, random)).toBe(random);
    expect(mintEventId(1.5, random)).toBe(random);
    expect(mintEventId(1000, 'not-a-uuid')).toBe('not-a-uuid');
  });

  it('read their time back only from the lowercase minted shape', () => {
    const id = mintEventId(1_700_000_000_000, randomUUID());
    expect(mintedTime(id)).toBe(1_700_000_000_000);
    expect(mintedTime(id.toUpperCase())).toBeUndefined();
    expect(mintedTime(randomUUID())).toBeUndefined();
    expect(mintedTime(id.replace('-7a7e-', '-7a7f-'))).toBeUndefined();
    expect(mintedTime(`${id}0`)).toBeUndefined();
  });

  it('need no id index entry only when they carry their own event time', () => {
    const id = mintEventId(5000, randomUUID());
    expect(needsIdIndex(id, 5000)).toBe(false);
    expect(needsIdIndex(id, 5001)).toBe(true);
    expect(needsIdIndex(randomUUID(), 5000)).toBe(true);
  });

  it('are what newEvent gives an event without an id; a client id is kept as given', () => {
    const fields = { name: 'Pageview', time: '2026-11-29T02:10:00.123Z', timeMs: Date.parse('2026-11-29T02:10:00.123Z'), properties: {} };
    const minted = newEvent(fields, randomUUID);
    expect(minted.id).toMatch(UUID_V7_MARKED);
    expect(mintedTime(minted.id)).toBe(fields.timeMs);
    expect(minted.minted).toBe(true);
    const client = randomUUID();
    expect(newEvent({ ...fields, id: client }, randomUUID).id).toBe(client);
  });
});

describe("an event's writes (ops.ts) and its id index", () => {
  const stored = (id: string | undefined, timeMs: number, seq: number): StoredEvent => {
    const fields = { name: 'Pageview', time: new Date(timeMs).toISOString(), timeMs, properties: {} };
    return toStoredEvent(USER, newEvent(id === undefined ? fields : { ...fields, id }, randomUUID), seq);
  };
  const idKeys = (ops: readonly { key: string }[]) => ops.filter((op) => op.key.startsWith('ei!')).map((op) => op.key);

  it('leave out `ei!` for an id minted with the event time, alone or in a run, and keep it for every other id', () => {
    const t = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    const minted = stored(undefined, t, 1);
    const client = stored(randomUUID(), t, 2);
    const mintedElsewhen = stored(mintEventId(t + 1, randomUUID()), t, 3);
    const backdated = stored(undefined, Date.UTC(1960, 0, 1), 4); // before 1970: minted as a plain UUID, indexed
    expect(idKeys(eventOps({ org: ORG, event: minted }))).toEqual([]);
    expect(idKeys(eventOps({ org: ORG, event: client }))).toHaveLength(1);
    expect(idKeys(eventOps({ org: ORG, event: mintedElsewhen }))).toHaveLength(1);
    expect(idKeys(eventOps({ org: ORG, event: backdated }))).toHaveLength(1);
    const run: BatchOp[] = [];
    pushEventRunOps(run, ORG, [minted, client, mintedElsewhen, backdated]);
    expect(idKeys(run).length).toBe(3);
    expect(run.filter((op) => op.key.startsWith('et!'))).toHaveLength(4);
  });
});
