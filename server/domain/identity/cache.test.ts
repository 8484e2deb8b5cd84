// The identity lookup cache: bounded, least recently used evicted first.

import { describe, expect, it } from 'vitest';
import { BoundedCache } from './cache.js';

describe('BoundedCache', () => {
  it('evicts the least recently used entry beyond its capacity', () => {
    const cache = new BoundedCache<string | null>(2);
    cache.set('a', 'A');
    cache.set('b', null);
    expect(cache.get('a')).toBe('A');
    cache.set('c', 'C');
    expect(cache.has('b')).toBe(false);
    expect(cache.get('a')).toBe('A');
    expect(cache.get('c')).toBe('C');
    expect(cache.size).toBe(2);
  });

  it('keeps null as a cached value, distinct from a missing key', () => {
    const cache = new BoundedCache<string | null>(4);
    cache.set('known-absent', null);
    expect(cache.get('known-absent')).toBeNull();
    expect(cache.get('never-seen')).toBeUndefined();
  });
});
