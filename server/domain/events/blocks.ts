// Event blocks (server/store/README.md "Event blocks"): a run of one user's consecutive records stored as ONE value
// under the arrival index `e!{org}!{user}!{seq}`, keyed by the LAST record's sequence. A history then reads as a few
// values instead of one per event: each value read through classic-level costs a native read and a buffer on the main
// thread, which bounded the backfill (bench/README.md (5)). Blocks are written by the tick for an append of several
// events (ops.ts) and by the folder for runs of single records (fold.ts); a value is either one record or one block.
//
// Why keyed by the last sequence: every read still finds its events with the ranges it used before. A range after a
// sequence (`gt e!..!{seq}`, replays after a snapshot) meets every block holding a later event, the first one maybe
// holding earlier ones too (they are skipped); a point read of a sequence is the first key at or after it (a get of
// the exact key first: a single record, or a block's last event).
//
// The stored value is `[seqs, ends, records]`: the records' sequences, the offset just after each record in
// `records`, and the records' own stored bytes (store/values.ts) laid end to end, so a range of them is handed to an
// owner as `PackedEvents` without decoding on the reading thread. A record is a msgpack map, a block an array: the
// first byte of a stored value tells them apart.

import type { Store } from '../../store/contract.js';
import { concatValues, decodeValue, decodeValueAt } from '../../store/values.js';
import { prefixUpperBound, seqOfKey, userEventKey, userEventPrefix } from './keys.js';
import { fromRecordValue, type StoredEvent, type StoredRecordValue } from './record.js';

/** The most records one block holds (an append or a run of more writes several). */
export const MAX_BLOCK_EVENTS = 256;
/**
 * The most bytes of records one block holds: a run is split before a record that would pass it, and a record
 * larger than this alone stays a single value (an event's properties may be large: a block is read whole to answer
 * any one of its events, and LevelDB keeps values whole in memory).
 */
export const MAX_BLOCK_BYTES = 256 * 1024;

/** A block as stored: sequences ascending, `ends[i]` the offset after record i in `records`. */
export type EventBlock = readonly [seqs: readonly number[], ends: readonly number[], records: Uint8Array];

/** A stored `e!` value decoded: one record (as stored: record.ts `StoredRecordValue`) or one block. */
export type StoredEventValue = StoredRecordValue | EventBlock;

export function isEventBlock(value: StoredEventValue): value is EventBlock {
  return Array.isArray(value);
}

/** Whether stored bytes of an `e!` value hold a block (a msgpack array; a record is a map). */
export function isEncodedBlock(bytes: Uint8Array): boolean {
  const first = bytes[0] as number;
  return (first >= 0x90 && first <= 0x9f) || first === 0xdc || first === 0xdd;
}

/** How many records the stored bytes of an `e!` value hold (a block's sequences say; a record is one). */
export function recordCount(bytes: Uint8Array): number {
  return isEncodedBlock(bytes) ? readBlock(bytes)[0].length : 1;
}

/**
 * A stored block's parts, as `decodeValue` gives them: read here for the shape the store writes (an array of two
 * arrays of numbers and the records' binary, answered as a view of `bytes`), else by msgpackr. Reading a history's
 * blocks on the main thread (a tick's or the sweep's reads, ingest/state/load.ts) went through msgpackr and the
 * store's search of every block's bytes for `__proto_` keys, which a block's top level cannot hold.
 */
export function readBlock(bytes: Uint8Array): EventBlock {
  return readBlockParts(bytes) ?? decodeValue<EventBlock>(bytes);
}

function readBlockParts(bytes: Uint8Array): EventBlock | undefined {
  if (bytes[0] !== 0x93) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = { offset: 1 };
  const seqs = readNumbers(bytes, view, at);
  const ends = seqs === undefined ? undefined : readNumbers(bytes, view, at);
  if (ends === undefined) return undefined;
  const token = bytes[at.offset++];
  let length: number;
  if (token === 0xc4) length = bytes[at.offset++] as number;
  else if (token === 0xc5) {
    length = view.getUint16(at.offset);
    at.offset += 2;
  } else if (token === 0xc6) {
    length = view.getUint32(at.offset);
    at.offset += 4;
  } else return undefined;
  // A block is exactly its three parts (anything else: msgpackr decides, and fails where it would).
  if (at.offset + length !== bytes.length) return undefined;
  // A plain view, as the store's decoder answers binary (not a Buffer, whatever `bytes` is).
  return [seqs as number[], ends, new Uint8Array(bytes.buffer, bytes.byteOffset + at.offset, length)];
}

/** An array of numbers at `at.offset` (moved past it), or undefined for anything else or bytes that end too soon. */
function readNumbers(bytes: Uint8Array, view: DataView, at: { offset: number }): number[] | undefined {
  const token = bytes[at.offset++] as number;
  let size: number;
  if (token >= 0x90 && token <= 0x9f) size = token - 0x90;
  else if (token === 0xdc && at.offset + 2 <= bytes.length) {
    size = view.getUint16(at.offset);
    at.offset += 2;
  } else return undefined;
  const out = new Array<number>(size);
  for (let i = 0; i < size; i++) {
    const offset = at.offset;
    if (offset >= bytes.length) return undefined;
    const t = bytes[offset] as number;
    let width: number;
    let value: number;
    if (t < 0x80) {
      width = 1;
      value = t;
    } else if (t === 0xcc && offset + 2 <= bytes.length) {
      width = 2;
      value = bytes[offset + 1] as number;
    } else if (t === 0xcd && offset + 3 <= bytes.length) {
      width = 3;
      value = view.getUint16(offset + 1);
    } else if (t === 0xce && offset + 5 <= bytes.length) {
      width = 5;
      value = view.getUint32(offset + 1);
    } else if (t === 0xcb && offset + 9 <= bytes.length) {
      width = 9;
      value = view.getFloat64(offset + 1);
    } else return undefined;
    out[i] = value;
    at.offset = offset + width;
  }
  return out;
}

/** Where record `i` of a block starts in its records' bytes (where the one before it ends). */
const startOf = (ends: readonly number[], i: number): number => (i === 0 ? 0 : (ends[i - 1] as number));

/** Record `i` of a user's block, decoded. */
const recordOf = ([seqs, ends, records]: EventBlock, i: number, user: string): StoredEvent =>
  fromRecordValue(decodeValueAt<StoredRecordValue>(records, startOf(ends, i), ends[i] as number), user, seqs[i] as number);

/**
 * How a run of consecutive records is stored, given each record's stored bytes: as parts [start, end) of at most
 * MAX_BLOCK_EVENTS records and MAX_BLOCK_BYTES (a part of one record is stored as the record itself).
 */
export function blockParts(sizes: readonly number[]): Array<readonly [start: number, end: number]> {
  const parts: Array<readonly [number, number]> = [];
  let start = 0;
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) {
    const size = sizes[i] as number;
    if (i > start && (i - start >= MAX_BLOCK_EVENTS || bytes + size > MAX_BLOCK_BYTES)) {
      parts.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += size;
  }
  if (sizes.length > start) parts.push([start, sizes.length]);
  return parts;
}

/** The block of records already in their stored bytes, with their sequences (one part of `blockParts`). */
export function blockOfEncoded(seqs: readonly number[], encoded: readonly Uint8Array[]): EventBlock {
  const ends: number[] = [];
  let end = 0;
  for (const bytes of encoded) ends.push((end += bytes.byteLength));
  if (seqs.length !== encoded.length || seqs.length < 2 || seqs.length > MAX_BLOCK_EVENTS || end > MAX_BLOCK_BYTES) {
    throw new RangeError(`a block holds 2 to ${MAX_BLOCK_EVENTS} records of at most ${MAX_BLOCK_BYTES} bytes, one sequence each`);
  }
  return [seqs.slice(), ends, concatValues(encoded)];
}

/** The records of a user's stored value under `key` with a sequence after `afterSeq`, decoded, in order. */
export function recordsOf(key: string, value: StoredEventValue, user: string, afterSeq: number): StoredEvent[] {
  if (!isEventBlock(value)) {
    const seq = seqOfKey(key);
    return seq > afterSeq ? [fromRecordValue(value, user, seq)] : [];
  }
  const out: StoredEvent[] = [];
  value[0].forEach((seq, i) => {
    if (seq > afterSeq) out.push(recordOf(value, i, user));
  });
  return out;
}

/** Records of a block still in their stored bytes, laid end to end (a view of the stored value). */
export interface EncodedRun {
  readonly bytes: Uint8Array;
  readonly count: number;
  /** The last record's sequence (undefined when count is 0). */
  readonly lastSeq: number | undefined;
}

/**
 * The records of a stored block (its bytes, `isEncodedBlock`) with a sequence after `afterSeq`, at most `limit`,
 * without decoding a record: the block's sequences say which. A range read after a sequence meets at most one block
 * holding records at or before it, its first value.
 */
export function blockRun(bytes: Uint8Array, afterSeq: number, limit: number): EncodedRun {
  const [seqs, ends, records] = readBlock(bytes);
  let first = 0;
  while (first < seqs.length && (seqs[first] as number) <= afterSeq) first++;
  const last = Math.min(seqs.length, first + Math.max(0, limit));
  if (last <= first) return { bytes: records.subarray(0, 0), count: 0, lastSeq: undefined };
  return {
    bytes: records.subarray(startOf(ends, first), ends[last - 1] as number),
    count: last - first,
    lastSeq: seqs[last - 1] as number,
  };
}

/**
 * A user's stored records at the given sequences (the answer in the same order; undefined where none is stored):
 * one `getMany` of the exact keys (a single record, or the last record of a block), then, for the sequences inside
 * a block, one seek each to the first key at or after them, a found block serving every later sequence it holds.
 */
export async function readEventsBySeq(store: Store, org: string, user: string, seqs: readonly number[]): Promise<Array<StoredEvent | undefined>> {
  const values = await store.getMany<StoredEventValue>(seqs.map((seq) => userEventKey(org, user, seq)));
  const out: Array<StoredEvent | undefined> = new Array(seqs.length);
  const inside: number[] = [];
  values.forEach((value, i) => {
    const seq = seqs[i] as number;
    if (value === undefined) inside.push(i);
    else out[i] = recordAt(value, seq, user, seq);
  });
  if (inside.length === 0) return out;
  inside.sort((a, b) => (seqs[a] as number) - (seqs[b] as number));
  const upper = prefixUpperBound(userEventPrefix(org, user));
  let block: EventBlock | undefined;
  for (const i of inside) {
    const seq = seqs[i] as number;
    if (block === undefined || seq > (block[0].at(-1) as number)) {
      block = undefined;
      for await (const [, value] of store.iterate<StoredEventValue>({ gte: userEventKey(org, user, seq), lt: upper, limit: 1 })) {
        if (isEventBlock(value)) block = value;
      }
    }
    if (block !== undefined) out[i] = recordAt(block, seq, user);
  }
  return out;
}

/** The record of sequence `seq` in a user's stored value (a single record's sequence is its key's), if it holds it. */
function recordAt(value: StoredEventValue, seq: number, user: string, keySeq?: number): StoredEvent | undefined {
  if (!isEventBlock(value)) return keySeq === seq ? fromRecordValue(value, user, seq) : undefined;
  const i = value[0].indexOf(seq);
  return i < 0 ? undefined : recordOf(value, i, user);
}
