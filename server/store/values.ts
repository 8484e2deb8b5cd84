// How every store value is encoded (msgpack, plain maps, no shared record structures: each value decodes on its own,
// in any process, any thread and any order; keys `__proto_...` escaped so that every key reads back as written,
// server/msgpack-keys.ts). LevelDB keeps these bytes as they are (level.ts), and a range read
// in bytes (`Store.encodedValues`) hands them on unchanged: a worker thread decodes them, the main thread does not.

import { Packr } from 'msgpackr';
import { packKeepingKeys, restoreKeys } from '../msgpack-keys.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

const pack = (value: unknown): Uint8Array => packr.pack(value) as Uint8Array;

/** The stored bytes of a value (throws where the codec cannot encode it, e.g. a map of more than 65,535 keys). */
export function encodeValue(value: unknown): Uint8Array {
  return packKeepingKeys(pack, value);
}

/** A stored value. Read through a plain Uint8Array view, so binary values come back as Uint8Array, not Buffer. */
export function decodeValue<T>(bytes: Uint8Array): T {
  return restoreKeys(bytes, packr.unpack(plain(bytes)) as T);
}

/** Encoded values laid one after another (`concatValues`), decoded in order. */
export function decodeValues<T>(bytes: Uint8Array): T[] {
  if (bytes.byteLength === 0) return [];
  return restoreKeys(bytes, packr.unpackMultiple(plain(bytes)) as T[]);
}

/** The one value stored in `bytes` from `start` to `end` (exclusive), as `decodeValue` reads it. */
export function decodeValueAt<T>(bytes: Uint8Array, start: number, end: number): T {
  const value = packr.unpack(plain(bytes), { start, end }) as T;
  return restoreKeys(bytes, value, start, end);
}

/** The first value stored in `bytes` from `start` on (more may follow it), and the offset just after it. */
export function decodeFirstValue<T>(bytes: Uint8Array, start: number): { value: T; end: number } {
  const rest = plain(bytes).subarray(start);
  let value: unknown;
  let end = -1;
  packr.unpackMultiple(rest, (first: unknown, _from?: number, to?: number) => {
    value = first;
    end = start + (to as number);
    return false;
  });
  if (end < 0) throw new Error('no value to decode');
  return { value: restoreKeys(bytes, value as T, start, end), end };
}

/** Encoded values in one buffer of their own, one after another. */
export function concatValues(values: readonly Uint8Array[]): Uint8Array {
  let length = 0;
  for (const value of values) length += value.byteLength;
  const out = new Uint8Array(length);
  let offset = 0;
  for (const value of values) {
    out.set(value, offset);
    offset += value.byteLength;
  }
  return out;
}

function plain(bytes: Uint8Array): Uint8Array {
  return bytes.constructor === Uint8Array ? bytes : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
