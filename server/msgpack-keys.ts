// Map keys that msgpack carries as written. msgpackr reads a map key `__proto__` as `__proto_` (so that decoding
// cannot set an object's prototype), which loses data: `__proto__` is a valid event property name (D29: `[a-z0-9_]+`)
// and a valid imported property name, so a tracked event's properties would read back renamed, and a partition owner
// would segment an event whose `properties.__proto__` had become `properties.__proto_`.
//
// The fix is an escape of the keys msgpackr could confuse: a key of the form `__proto` + one or more `_` + any number
// of NUL characters is written with one NUL more, and a key of that form read back with at least one NUL loses one.
// The escaped keys are never `__proto__`, so msgpackr renames none of them, and every key reads back as written.
// Bytes written before (no escape) read as they always did: a NUL never appears in a valid property name. The escape
// costs nothing on the usual path: a search of the encoded bytes for `__proto_` (a native memory search) decides
// whether the value is walked at all.

import { Packr } from 'msgpackr';
import { setOwn } from './own-keys.js';

const MARK = Buffer.from('__proto_', 'latin1');
const ESCAPABLE = /^__proto_+\0*$/;
const ESCAPED = /^__proto_+\0+$/;
const indexOf = Buffer.prototype.indexOf;

/**
 * Whether encoded bytes (from `start` to `end`, by default all) may hold a key this module escapes or restores (one
 * starting with `__proto_`). A range that ends before the buffer does is searched through a view of the range alone:
 * the native search cannot be told where to stop, and searching on to the buffer's end made reading each value of a
 * long replay cost as much as the rest of the replay (quadratic in its length).
 */
export function mayHoldProtoKeys(bytes: Uint8Array, start = 0, end = bytes.byteLength): boolean {
  if (end < bytes.byteLength) return indexOf.call(bytes.subarray(start, end), MARK) >= 0;
  return indexOf.call(bytes, MARK, start) >= 0;
}

/** `pack(value)`, unless `value` holds a key `__proto_...`: then it is packed with those keys escaped. */
export function packKeepingKeys<B extends Uint8Array>(pack: (value: unknown) => B, value: unknown): B {
  const bytes = pack(value);
  if (!mayHoldProtoKeys(bytes)) return bytes;
  const escaped = mapKeys(value, escapeKey);
  return escaped === value ? bytes : pack(escaped);
}

/**
 * `value` as decoded by msgpackr from `bytes` (from `start` to `end`, by default all), with escaped keys restored
 * (the same value when there are none).
 */
export function restoreKeys<T>(bytes: Uint8Array, value: T, start?: number, end?: number): T {
  // A string or number holds no key: nothing to search for (the engine reader decodes non-ASCII strings one by one).
  if (typeof value !== 'object' || value === null) return value;
  return mayHoldProtoKeys(bytes, start, end) ? (mapKeys(value, restoreKey) as T) : value;
}

/** msgpack with plain maps (read as objects), no record structures, every key kept: the cluster's messages. */
export interface PlainCodec {
  pack(value: unknown): Buffer;
  unpack(bytes: Uint8Array): unknown;
}

export function plainCodec(): PlainCodec {
  const packr = new Packr({ useRecords: false, mapsAsObjects: true });
  const pack = (value: unknown): Buffer => packr.pack(value);
  return {
    pack: (value) => packKeepingKeys(pack, value),
    unpack: (bytes) => restoreKeys(bytes, packr.unpack(bytes) as unknown),
  };
}

function escapeKey(key: string): string {
  return ESCAPABLE.test(key) ? `${key}\0` : key;
}

function restoreKey(key: string): string {
  return ESCAPED.test(key) ? key.slice(0, -1) : key;
}

/**
 * `value` with `rename` applied to the keys of every plain object inside it (through arrays and plain objects;
 * binary, dates and class instances are left whole). Copies only what changed; answers `value` itself when nothing
 * did. A key renamed to `__proto__` becomes an own property, as JSON.parse makes it.
 */
export function mapKeys(value: unknown, rename: (key: string) => string): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const mapped = mapKeys(item, rename);
      if (mapped !== item) {
        out ??= value.slice();
        out[i] = mapped;
      }
    }
    return out ?? value;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  const names = new Array<string>(keys.length);
  const items = new Array<unknown>(keys.length);
  let changed = false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = object[key];
    names[i] = rename(key);
    items[i] = mapKeys(item, rename);
    if (names[i] !== key || items[i] !== item) changed = true;
  }
  if (!changed) return value;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    setOwn(out, name, items[i]);
  }
  return out;
}
