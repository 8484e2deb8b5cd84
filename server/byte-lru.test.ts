// The one LRU behind the state, context, schema and identity caches (D40): bounded in bytes and entries, least recently used
// evicted first, a read making an entry the most recent.

import { describe, expect, it } from 'vitest';
import { ByteLru } from './byte-lru.js';

const lru = (maxBytes: number, maxEntries?: number) => {
  const evicted: string[] = [];
  const cache = new ByteLru<number>(maxBytes, (_key, value) => value, { ...(maxEntries === undefined ? {} : { maxEntries }), onEvict: (_value, key) => evicted.push(key) });
  return { cache, evicted };
};

describe('ByteLru', () => {
  it('evicts the least recently used past the byte bound; a get makes an entry the most recent, peek does not', () => {
    const { cache, evicted } = lru(10);
    cache.set('a', 3);
    cache.set('b', 3);
    cache.set('c', 3);
    expect(cache.get('a')).toBe(3);
    expect(cache.peek('b')).toBe(3);
    cache.set('d', 3); // 12 bytes: b is the least recently used
    expect(evicted).toEqual(['b']);
    expect([...cache.values()]).toEqual([3, 3, 3]);
    expect(['a', 'b', 'c', 'd'].map((key) => cache.has(key))).toEqual([true, false, true, true]);
    expect(cache.bytes).toBe(9);
    cache.set('e', 5); // c then a go
    expect(evicted).toEqual(['b', 'c', 'a']);
    expect(cache.size).toBe(2);
    expect(cache.bytes).toBe(8);
  });

  it('bounds entries; keeps the entry just set even when it alone exceeds the bytes; values run oldest first', () => {
    const { cache, evicted } = lru(100, 2);
    cache.set('a', 1);
    cache.set('b', 2);
    cache.get('a');
    cache.set('c', 3);
    expect(evicted).toEqual(['b']);
    expect([...cache.values()]).toEqual([1, 3]);
    cache.set('big', 500);
    expect(evicted).toEqual(['b', 'a', 'c']);
    expect(cache.get('big')).toBe(500);
    expect(cache.bytes).toBe(500);
  });

  it('set replaces a key (bytes recounted, now the most recent); delete and clear tell no eviction', () => {
    const { cache, evicted } = lru(10);
    cache.set('a', 2);
    cache.set('b', 2);
    cache.set('a', 4);
    expect([...cache.values()]).toEqual([2, 4]);
    expect(cache.bytes).toBe(6);
    cache.delete('b');
    cache.delete('missing');
    expect([...cache.values()]).toEqual([4]);
    cache.set('c', 1);
    cache.get('a');
    expect([...cache.values()]).toEqual([1, 4]);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
    expect([...cache.values()]).toEqual([]);
    cache.set('d', 1);
    expect([...cache.values()]).toEqual([1]);
    expect(evicted).toEqual([]);
  });

  it('a key set again grows in place: the others are evicted oldest first, never the entry just set', () => {
    const { cache, evicted } = lru(10);
    cache.set('a', 3);
    cache.set('b', 3);
    cache.set('c', 3);
    cache.set('c', 4); // the most recent already: 10 bytes, nothing evicted
    expect(cache.bytes).toBe(10);
    expect(evicted).toEqual([]);
    cache.set('a', 6); // a moves to the end; 13 bytes: b goes
    expect(evicted).toEqual(['b']);
    expect([...cache.values()]).toEqual([4, 6]);
    expect(cache.bytes).toBe(10);
    cache.set('a', 8); // 12 bytes: c goes
    expect(evicted).toEqual(['b', 'c']);
    expect([...cache.values()]).toEqual([8]);
    expect(cache.bytes).toBe(8);
    expect(cache.size).toBe(1);
    cache.set('a', 20); // alone past the bound: kept
    expect(cache.get('a')).toBe(20);
    expect(cache.bytes).toBe(20);
  });

  it('values keeps going when the caller deletes the entry it was given', () => {
    const { cache } = lru(100);
    for (const [key, value] of [['a', 1], ['b', 2], ['c', 3]] as const) cache.set(key, value);
    const seen: number[] = [];
    for (const value of cache.values()) {
      seen.push(value);
      cache.delete(['a', 'b', 'c'][value - 1] as string);
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(cache.size).toBe(0);
  });

  it('bounded in entries alone (the identity caches): null is a cached value, distinct from a missing key', () => {
    const cache = new ByteLru<string | null>(Infinity, () => 0, { maxEntries: 2 });
    cache.set('a', 'A');
    cache.set('b', null);
    expect(cache.get('b')).toBeNull();
    expect(cache.get('never-seen')).toBeUndefined();
    expect(cache.get('a')).toBe('A'); // now the most recent: b is the least
    cache.set('c', 'C');
    expect(cache.has('b')).toBe(false);
    expect([...cache.values()]).toEqual(['A', 'C']);
    cache.set('a', 'A2'); // replaced in place, most recent again
    expect([...cache.values()]).toEqual(['C', 'A2']);
    expect(cache.size).toBe(2);
  });
});
