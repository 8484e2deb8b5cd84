// The one store contract every part of the service writes through: point reads, atomic batches, ordered ranges.
// Implementations: LevelDB (server/store/level.ts) and memory (server/store/memory.ts); one shared contract suite.

import { encodeValue } from './values.js';

/** Keys are strings and sort by UTF-16 code unit order (the same as byte order for the ASCII keys we write). */
export type BatchOp =
  | { readonly type: 'put'; readonly key: string; readonly value: unknown }
  | { readonly type: 'del'; readonly key: string };

export interface RangeOptions {
  readonly gt?: string;
  readonly gte?: string;
  readonly lt?: string;
  readonly lte?: string;
  readonly reverse?: boolean;
  readonly limit?: number;
}

export interface SkipRange {
  readonly gte: string;
  readonly lt: string;
}

export interface BatchOptions {
  /** fsync before resolving (power-loss durability); without it, a resolved batch survives a process crash. */
  readonly sync?: boolean;
}

export interface Store {
  /** The stored value (a structured-clone-like copy), or undefined. */
  get<T = unknown>(key: string): Promise<T | undefined>;
  getMany<T = unknown>(keys: readonly string[]): Promise<Array<T | undefined>>;
  /** Applies every operation or none. Resolves once the batch is durable against a process crash. */
  batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void>;
  /** Entries in key order (or reverse) within the range. */
  iterate<T = unknown>(range: RangeOptions): AsyncIterable<readonly [string, T]>;
  /**
   * The range's values as stored bytes (values.ts), in key order, without their keys: for bulk reads another thread
   * decodes (history replays), so the reading thread neither decodes nor re-encodes them.
   */
  encodedValues(range: RangeOptions): Promise<Uint8Array[]>;
  /** As `encodedValues`, each value with its key (a re-layout of stored bytes: server/domain/events/fold.ts). */
  encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>>;
  /**
   * A skip scan: up to `limit` keys of [gte, lt), the first one at or after `gte`, each next one the first at or
   * after `next(previous)` (which must be above it). One iterator, where a loop of `iterate` calls would open one per
   * key: what lists the users of an organization in the events index (the LevelDB store reads its keys a few hundred
   * at a time and seeks past long groups).
   */
  skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]>;
  /**
   * The store's own estimate of the memory it holds outside the JavaScript heap (LevelDB: its memtables and block
   * cache, `leveldb.approximate-memory-usage`), for /metrics and the memory bench; absent where it cannot tell.
   */
  memoryBytes?(): number | undefined;
  close(): Promise<void>;
}

/** `skipKeys` through `iterate`, one range read per key (memory, overlays). */
export async function skipKeysOf(store: Store, range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
  const keys: string[] = [];
  let from = range.gte;
  while (keys.length < limit) {
    let found: string | undefined;
    for await (const [key] of store.iterate({ gte: from, lt: range.lt, limit: 1 })) found = key;
    if (found === undefined) break;
    keys.push(found);
    from = next(found);
  }
  return keys;
}

/** `encodedValues` for stores that keep values decoded (memory, overlays): each value of the range encoded. */
export async function encodedValuesOf(store: Store, range: RangeOptions): Promise<Uint8Array[]> {
  return (await encodedEntriesOf(store, range)).map(([, value]) => value);
}

/** `encodedEntries` for stores that keep values decoded (memory, overlays). */
export async function encodedEntriesOf(store: Store, range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
  const entries: Array<readonly [string, Uint8Array]> = [];
  for await (const [key, value] of store.iterate(range)) entries.push([key, encodeValue(value)]);
  return entries;
}

/**
 * An upper bound (for `lt`) above every key that starts with `prefix`, in UTF-16 order (memory) and in UTF-8 byte
 * order (LevelDB) alike: the prefix with its last character incremented. The prefix must end in printable ASCII,
 * as every scan prefix of server/store/layout.ts does (they end with the separator).
 */
export function prefixEnd(prefix: string): string {
  const last = prefix.charCodeAt(prefix.length - 1);
  if (!(last >= 0x20 && last < 0x7e)) throw new RangeError(`a scan prefix must end in printable ASCII: ${JSON.stringify(prefix)}`);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
