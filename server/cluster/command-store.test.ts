// The store a cluster node's control plane writes through (issue 15): inside a command its batches are held and read
// back (point reads and ranges, forward and reverse, with limits and deletes), then written in one batch with the
// command's sequence; outside a command it is the store itself. And the command scope: the same command gives the same
// time, ids and bytes on every node, outside it they are the wall clock and random.

import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory.js';
import { decodeValue } from '../store/values.js';
import { CommandStore, CONTROL_SEQ_KEY } from './command-store.js';
import { inCommandScope, scopedClock, scopedId, scopedRandomBytes } from './scope.js';

async function collect(store: CommandStore, range: Parameters<CommandStore['iterate']>[0]): Promise<string[]> {
  const out: string[] = [];
  for await (const [key, value] of store.iterate<string>(range)) out.push(`${key}=${value}`);
  return out;
}

describe('the command store', () => {
  it('holds a command\'s writes, reads them back over the stored ones, and commits them with the sequence at once', async () => {
    const inner = new MemoryStore();
    await inner.batch(['a', 'b', 'd', 'f'].map((k) => ({ type: 'put' as const, key: `x!${k}`, value: k })));
    const store = new CommandStore(inner);
    expect(await store.appliedSeq()).toBe(0);
    store.begin();
    await inCommandScope(7, 0, new Uint8Array(16), async () => {
      await store.batch([
        { type: 'put', key: 'x!c', value: 'c' },
        { type: 'del', key: 'x!d' },
        { type: 'put', key: 'x!b', value: 'B' },
        { type: 'put', key: 'x!g', value: 'g' },
      ]);
      expect(await store.get('x!b')).toBe('B');
      expect(await store.get('x!d')).toBeUndefined();
      expect(await store.getMany(['x!a', 'x!c', 'x!d'])).toEqual(['a', 'c', undefined]);
      expect(await collect(store, { gte: 'x!', lt: 'x"' })).toEqual(['x!a=a', 'x!b=B', 'x!c=c', 'x!f=f', 'x!g=g']);
      expect(await collect(store, { gte: 'x!', lt: 'x"', reverse: true, limit: 3 })).toEqual(['x!g=g', 'x!f=f', 'x!c=c']);
      expect(await collect(store, { gt: 'x!b', lt: 'x!g', limit: 2 })).toEqual(['x!c=c', 'x!f=f']);
      expect((await store.encodedValues({ gt: 'x!a', lt: 'x"' })).map((bytes) => decodeValue(bytes))).toEqual(['B', 'c', 'f', 'g']);
      expect(await store.skipKeys({ gte: 'x!', lt: 'x"' }, (k) => `${k}~`, 3)).toEqual(['x!a', 'x!b', 'x!c']);
      // Nothing reached the store yet.
      expect(await inner.get('x!c')).toBeUndefined();
    });
    // Outside the command the store is read as it is.
    expect(await store.get('x!c')).toBeUndefined();
    await store.commit(7);
    expect(await inner.get('x!c')).toBe('c');
    expect(await inner.get('x!d')).toBeUndefined();
    expect(await inner.get(CONTROL_SEQ_KEY)).toBe(7);
    expect(await store.appliedSeq()).toBe(7);
    await store.batch([{ type: 'put', key: 'x!h', value: 'h' }]);
    expect(await inner.get('x!h')).toBe('h');
  });

  it('commits the sequence of a command that wrote nothing', async () => {
    const store = new CommandStore(new MemoryStore());
    store.begin();
    await store.commit(3);
    expect(await store.appliedSeq()).toBe(3);
  });
});

describe('the command scope', () => {
  it('gives the same time, ids and bytes for the same command, and the wall clock and random ones outside', async () => {
    const seed = new Uint8Array(16).fill(9);
    const run = () => inCommandScope(1, 1_700_000_000_000, seed, async () => [scopedClock.now().getTime(), scopedId(), scopedId(), scopedRandomBytes(40).toString('hex')] as const);
    const first = await run();
    expect(await run()).toEqual(first);
    expect(first[0]).toBe(1_700_000_000_000);
    expect(first[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(first[1]).not.toBe(first[2]);
    expect(first[3]).toHaveLength(80);
    const other = await inCommandScope(1, 0, new Uint8Array(16).fill(1), async () => scopedId());
    expect(other).not.toBe(first[1]);
    expect(scopedId()).not.toBe(scopedId());
    expect(Math.abs(scopedClock.now().getTime() - Date.now())).toBeLessThan(1000);
  });

  it('closes with the command: work it started that runs later sees the wall clock', async () => {
    let later: Promise<number> | undefined;
    await inCommandScope(1, 5, new Uint8Array(16), async () => {
      later = new Promise((resolve) => setImmediate(() => resolve(scopedClock.now().getTime())));
    });
    expect(await later).toBeGreaterThan(1_000_000);
  });
});
