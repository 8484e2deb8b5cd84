// How every store value is encoded (msgpack, plain maps, no shared record structures: each value decodes on its own,
// in any process, any thread and any order). LevelDB keeps these bytes as they are (level.ts), and a range read
// in bytes (`Store.encodedValues`) hands them on unchanged: a worker thread decodes them, the main thread does not.

import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** The stored bytes of a value (throws where the codec cannot encode it, e.g. a map of more than 65,535 keys). */
export function encodeValue(value: unknown): Uint8Array {
  return packr.pack(value) as Uint8Array;
}

/** A stored value. Read through a plain Uint8Array view, so binary values come back as Uint8Array, not Buffer. */
export function decodeValue<T>(bytes: Uint8Array): T {
  return packr.unpack(plain(bytes)) as T;
}

/** Encoded values laid one after another (`concatValues`), decoded in order. */
export function decodeValues<T>(bytes: Uint8Array): T[] {
  if (bytes.byteLength === 0) return [];
  return packr.unpackMultiple(plain(bytes)) as T[];
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
