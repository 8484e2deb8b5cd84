// Test helpers of the domain areas (identity, events, schemas): deterministic ids, a store that counts writes and a
// dump of one organization's identity keys. Imported by tests only.

import type { BatchOp, BatchOptions, RangeOptions, SkipRange, Store } from '../../server/store/contract.js';
import { MemoryStore } from '../../server/store/memory.js';
import { scanPrefix } from '../../server/store/layout.js';
import { createRng } from '../differential/random.js';

/** UUID v4-shaped ids from a counter: `…-4000-8000-00000000000n`, distinct per `space`. */
export function sequentialIds(space = 0): () => string {
  let next = 0;
  return () => {
    next++;
    return `${space.toString(16).padStart(8, '0')}-0000-4000-8000-${next.toString(16).padStart(12, '0')}`;
  };
}

/** A Store that delegates and counts the batches written through it, the reads (get, getMany) and the keys they read. */
export class CountingStore implements Store {
  batches = 0;
  reads = 0;
  keysRead = 0;
  constructor(readonly inner: Store = new MemoryStore()) {}
  get<T>(key: string): Promise<T | undefined> {
    this.reads++;
    this.keysRead++;
    return this.inner.get<T>(key);
  }
  getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>> {
    this.reads++;
    this.keysRead += keys.length;
    return this.inner.getMany<T>(keys);
  }
  batch(ops: readonly BatchOp[], options?: BatchOptions): Promise<void> {
    this.batches++;
    return this.inner.batch(ops, options);
  }
  iterate<T>(range: RangeOptions): AsyncIterable<readonly [string, T]> {
    return this.inner.iterate<T>(range);
  }
  encodedValues(range: RangeOptions): Promise<Uint8Array[]> {
    return this.inner.encodedValues(range);
  }

  encodedEntries(range: RangeOptions): Promise<Array<readonly [string, Uint8Array]>> {
    return this.inner.encodedEntries(range);
  }
  skipKeys(range: SkipRange, next: (key: string) => string, limit: number): Promise<string[]> {
    return this.inner.skipKeys(range, next, limit);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** Every entry under `prefix!org!`, as a key -> value object. */
export async function dumpPrefix(store: Store, prefix: string, org: string): Promise<Record<string, unknown>> {
  const start = scanPrefix(prefix, org);
  const out: Record<string, unknown> = {};
  for await (const [key, value] of store.iterate({ gte: start, lt: start.slice(0, -1) + '"' })) out[key] = value;
  return out;
}

/** The shared seeded PRNG (mulberry32) for reproducible "random" tests. */
export const seededRandom = (seed: number): (() => number) => createRng(seed).next;
