// D40: the users' state cache is bounded in bytes (not only in entries), evicts the least recently used entries, and
// an evicted user is loaded again from the store with the same result.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../store/memory.js';
import { MapContexts, MapPlans, ORG, T0, cohort, event, userId } from '../../../test/support/ingest.js';
import { openIngestPipeline } from '../pipeline.js';
import { StateCache, entryBytes, fromMemberCodes, toMemberCodes, type CachedUser } from './cache.js';

function entry(n: number, stateBytes: number): CachedUser {
  return {
    org: ORG,
    user: userId(n),
    partition: 0,
    size: stateBytes,
    memberships: [1, 2],
    seq: n,
    count: 1,
    mark: 0,
    dirty: false,
    unsnapshotted: 0,
    dirtySince: 0,
    ctxEpoch: -1,
    ctxVersion: -1,
  };
}

describe("a cached user's member codes", () => {
  it('are kept as one character per code when every code fits in 16 bits, else as the numbers, and read back the same', () => {
    const many = Array.from({ length: 10_000 }, (_, i) => i * 6);
    for (const codes of [[], [1, 2, 3], [0, 255], [1, 256, 65_535], many]) {
      const kept = toMemberCodes(codes);
      expect(typeof kept).toBe('string');
      expect(kept.length).toBe(codes.length);
      expect(fromMemberCodes(kept)).toEqual(codes);
    }
    for (const codes of [[1, 65_536], [-1, 2], [1.5], [...many, 70_000]]) {
      const kept = toMemberCodes(codes);
      expect(kept).toBe(codes);
      expect(fromMemberCodes(kept)).toEqual(codes);
    }
    // As a string they count 2 bytes a code towards the bound, as numbers 8.
    const asText = entryBytes({ ...entry(0, 0), memberships: toMemberCodes([1, 2, 3, 4]) });
    expect(entryBytes({ ...entry(0, 0), memberships: [1, 2, 3, 4] }) - asText).toBe(24);
  });
});

describe('StateCache byte bound (D40)', () => {
  it('never holds more bytes than its bound, evicting the least recently used entries first', () => {
    const one = entryBytes(entry(0, 1000));
    const bound = one * 3 + 10;
    const evicted: string[] = [];
    const cache = new StateCache(1_000_000, (gone) => evicted.push(gone.user), bound);
    for (let n = 1; n <= 3; n++) cache.set(entry(n, 1000));
    expect(cache.bytes).toBe(one * 3);
    cache.get(`${ORG}\u0000${userId(1)}`); // 1 is now the most recently used: 2 is the oldest
    cache.set(entry(4, 1000));
    expect(evicted).toEqual([userId(2)]);
    for (let n = 5; n <= 200; n++) {
      cache.set(entry(n, 500 + (n % 7) * 300));
      expect(cache.bytes).toBeLessThanOrEqual(bound);
    }
    expect(cache.size).toBeGreaterThan(1);
    let sum = 0;
    for (const held of cache.values()) sum += entryBytes(held);
    expect(cache.bytes).toBe(sum);
  });

  it('a replaced or deleted entry gives its bytes back', () => {
    const cache = new StateCache(10, () => undefined, 1_000_000);
    cache.set(entry(1, 4000));
    cache.set(entry(1, 100));
    expect(cache.bytes).toBe(entryBytes(entry(1, 100)));
    cache.delete(`${ORG}\u0000${userId(1)}`);
    expect(cache.bytes).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('a pipeline whose cache holds almost nothing computes the same memberships and sizes as one that keeps every state', async () => {
    const TWO_PAGEVIEWS = cohort(1, { event: 'Pageview', frequency: { greater_than_or_equal_to: 2 } });
    const THREE_CLICKS = cohort(2, { event: 'Click', frequency: { greater_than_or_equal_to: 3 } });
    const run = async (cacheBytes: number) => {
      const pipeline = await openIngestPipeline({
        store: new MemoryStore(),
        plans: new MapPlans(ORG, [TWO_PAGEVIEWS, THREE_CLICKS]),
        contexts: new MapContexts(),
        now: () => T0,
        partitions: 2,
        cacheBytes,
      });
      const answers: (readonly number[])[] = [];
      let n = 0;
      for (let round = 0; round < 5; round++) {
        for (let u = 0; u < 6; u++) {
          n += 1;
          const name = (u + round) % 2 === 0 ? 'Pageview' : 'Click';
          answers.push((await pipeline.append({ org: ORG, user: userId(u), events: [event(n, name)] })).memberships);
        }
      }
      const sizes = [pipeline.audienceSize(ORG, 1), pipeline.audienceSize(ORG, 2)];
      const members = [];
      for (let u = 0; u < 6; u++) members.push(await pipeline.membershipsOf(ORG, userId(u)));
      const held = (pipeline as unknown as { cache: StateCache }).cache.size;
      await pipeline.close();
      return { held, result: { answers, sizes, members } };
    };
    const roomy = await run(1 << 30);
    const tiny = await run(1);
    expect(roomy.held).toBe(6);
    expect(tiny.held).toBe(1);
    expect(tiny.result).toEqual(roomy.result);
    expect(roomy.result.sizes).toEqual([6, 3]);
  });
});
