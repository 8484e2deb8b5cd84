// Reads ahead of the organization's queue (read-ahead.ts): calls that miss the cache read the store as they arrive,
// together, instead of one after another at their turns; a read that a commit overtook is not used.

import { describe, expect, it } from 'vitest';
import { Identity } from './identity.js';
import { CountingStore, sequentialIds } from '../../../test/support/identity.js';

const ORG = 'a0000000-0000-4000-8000-0000000000a1';
const user = (i: number) => `b0000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const alias = (i: number, priority = 1) => ({ tag: 'email', id: `person${i}@example.com`, priority });

/** A store where users 0..n-1 are each bound to alias(i), written by another instance (so a new one knows nothing). */
async function seeded(n: number): Promise<CountingStore> {
  const store = new CountingStore();
  const writer = new Identity(store, { newId: sequentialIds(1) });
  for (let i = 0; i < n; i++) await writer.identify(ORG, user(i), [alias(i)]);
  store.reads = 0;
  store.keysRead = 0;
  store.batches = 0;
  return store;
}

describe('identity reads ahead of its queue (D28)', () => {
  it('calls of one turn that miss the cache share one store read and answer as if run one by one', async () => {
    const store = await seeded(30);
    const identity = new Identity(store, { newId: sequentialIds(2) });
    const answers = await Promise.all(Array.from({ length: 30 }, (_, i) => identity.resolveForTrack(ORG, { aliases: [alias(i)] })));
    expect(answers).toEqual(Array.from({ length: 30 }, (_, i) => ({ userId: user(i), created: false })));
    expect(store.reads).toBe(1);
    expect(store.keysRead).toBe(30);
    expect(store.batches).toBe(0);
    // Cached since: the same calls read nothing.
    await Promise.all(Array.from({ length: 30 }, (_, i) => identity.resolveForTrack(ORG, { aliases: [alias(i)] })));
    expect(store.reads).toBe(1);
  });

  it('the user a call names by id is read ahead too', async () => {
    const store = await seeded(10);
    const identity = new Identity(store, { newId: sequentialIds(3) });
    const answers = await Promise.all(Array.from({ length: 11 }, (_, i) => identity.resolveForTrack(ORG, { user_id: user(i) })));
    // User 10 was never recorded: its call records it.
    expect(answers).toEqual(Array.from({ length: 11 }, (_, i) => ({ userId: user(i), created: i === 10 })));
    expect(store.reads).toBe(1);
    expect(store.batches).toBe(1);
    expect(await identity.userExists(ORG, user(10))).toBe(true);
  });

  it('a read overtaken by a commit is read again: the later call sees the earlier call write', async () => {
    const store = await seeded(3);
    // A cache of one entry, so that what the commit wrote is evicted again before the last call's turn.
    const identity = new Identity(store, { newId: sequentialIds(4), cacheSize: 1 });
    // identify moves alias(1) from user 1 to user 0 (alias(0) is known and wins on priority); the track of alias(2)
    // then evicts alias(1) from the cache; the track of alias(1) read it in the same turn as the others, before the
    // move was committed, so what it read then must not be used.
    const [moved, other, tracked] = await Promise.all([
      identity.identify(ORG, user(0), [alias(0, 0), alias(1, 5)]),
      identity.resolveForTrack(ORG, { aliases: [alias(2)] }),
      identity.resolveForTrack(ORG, { aliases: [alias(1)] }),
    ]);
    expect(moved).toBe(user(0));
    expect(other).toEqual({ userId: user(2), created: false });
    expect(tracked).toEqual({ userId: user(0), created: false });
    // The shared read, then the two calls after the commit each read again.
    expect(store.reads).toBe(3);
  });

  it('a failed read ahead is not an answer: the call reads at its turn and meets the error there', async () => {
    const store = await seeded(1);
    const identity = new Identity(store, { newId: sequentialIds(5) });
    let failures = 1;
    const getMany = store.getMany.bind(store);
    store.getMany = <T>(keys: readonly string[]) => (failures-- > 0 ? Promise.reject(new Error('disk gone')) : getMany<T>(keys));
    expect(await identity.resolveForTrack(ORG, { aliases: [alias(0)] })).toEqual({ userId: user(0), created: false });
    failures = 2;
    await expect(identity.resolveForTrack(ORG, { aliases: [alias(7)] })).rejects.toThrow('disk gone');
    // A store that throws instead of rejecting: the same, and the process goes on.
    let throwing = 1;
    store.getMany = <T>(keys: readonly string[]) => {
      if (throwing-- > 0) throw new Error('thrown');
      return getMany<T>(keys);
    };
    const cold = new Identity(store, { newId: sequentialIds(6) });
    expect(await cold.resolveForTrack(ORG, { aliases: [alias(0)] })).toEqual({ userId: user(0), created: false });
    expect(throwing).toBe(-1); // the read ahead threw, the read at its turn answered
  });
});
