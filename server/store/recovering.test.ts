// RecoveringStore (server/store/level.ts) over an injected store that fails like LevelDB on a full disk: once a write
// fails, that handle refuses every later write (a sticky error) until it is closed and opened again, and opening
// fails while the disk is full. The real thing on a real full disk: test/e2e/full-disk.test.ts.

import { describe, expect, it } from 'vitest';
import type { BatchOp, BatchOptions, RangeOptions, SkipRange, Store } from './contract.js';
import { MemoryStore } from './memory.js';
import { RecoveringStore } from './level.js';

class Disk {
  readonly data = new MemoryStore();
  full = false;
  opens = 0;
  closes = 0;
  open = async (): Promise<Store> => {
    if (this.full) throw new Error('IO error: No space left on device (open)');
    this.opens += 1;
    return new StickyHandle(this);
  };
}

class StickyHandle implements Store {
  private sticky: Error | undefined;
  private closed = false;
  constructor(private readonly disk: Disk) {}
  get<T>(key: string) {
    this.check();
    return this.disk.data.get<T>(key);
  }
  getMany<T>(keys: readonly string[]) {
    this.check();
    return this.disk.data.getMany<T>(keys);
  }
  async batch(ops: readonly BatchOp[], _options?: BatchOptions): Promise<void> {
    this.check();
    if (this.disk.full) this.sticky ??= new Error('IO error: No space left on device');
    if (this.sticky) throw this.sticky;
    await this.disk.data.batch(ops);
  }
  iterate<T>(range: RangeOptions) {
    this.check();
    return this.disk.data.iterate<T>(range);
  }
  encodedValues(range: RangeOptions) {
    this.check();
    return this.disk.data.encodedValues(range);
  }
  encodedEntries(range: RangeOptions) {
    this.check();
    return this.disk.data.encodedEntries(range);
  }
  skipKeys(range: SkipRange, next: (key: string) => string, limit: number) {
    this.check();
    return this.disk.data.skipKeys(range, next, limit);
  }
  async close(): Promise<void> {
    this.closed = true;
    this.disk.closes += 1;
  }
  private check(): void {
    if (this.closed) throw new Error('handle closed');
  }
}

const put = (key: string, value: unknown): BatchOp => ({ type: 'put', key, value });

async function setup(room: { value: boolean } = { value: true }) {
  const disk = new Disk();
  const lines: string[] = [];
  const store = new RecoveringStore(await disk.open(), { open: disk.open, hasRoom: async () => room.value, log: (line) => lines.push(line) });
  return { disk, store, lines, room };
}

describe('RecoveringStore', () => {
  it('writes again once the disk has room, without a restart, keeping every acknowledged write and none that failed', async () => {
    const { disk, store, lines } = await setup();
    await store.batch([put('a', 1)]);
    disk.full = true;
    await expect(store.batch([put('b', 2)])).rejects.toThrow('No space left');
    await expect(store.batch([put('c', 3)])).rejects.toThrow('No space left');
    disk.full = false;
    await store.batch([put('d', 4)]);
    await store.batch([put('e', 5)]);
    expect(await store.getMany(['a', 'b', 'c', 'd', 'e'])).toEqual([1, undefined, undefined, 4, 5]);
    expect(disk.opens).toBe(2);
    // One line with the error for the burst, one when it ends with the count of the others.
    expect(lines.filter((line) => line.includes('No space left'))).toHaveLength(1);
    expect(lines).toContain('store: writes work again (1 more failure(s) of the same kind)');
    await store.close();
  });

  it('keeps serving reads from the failed handle while there is no room to reopen, and reopens once there is', async () => {
    const room = { value: false };
    const { disk, store } = await setup(room);
    await store.batch([put('a', 1)]);
    disk.full = true;
    await expect(store.batch([put('b', 2)])).rejects.toThrow('No space left');
    disk.full = false; // freed, but not yet enough room by statfs
    await expect(store.batch([put('b', 2)])).rejects.toThrow('no room');
    expect(disk.closes).toBe(0);
    expect(await store.get('a')).toBe(1);
    expect([...(await collect(store))]).toEqual([['a', 1]]);
    room.value = true;
    await store.batch([put('b', 2)]);
    expect(disk.closes).toBe(1);
    expect(await store.getMany(['a', 'b'])).toEqual([1, 2]);
    await store.close();
  });

  it('survives a reopen that fails (still full): the next operation opens again', async () => {
    const { disk, store } = await setup();
    await store.batch([put('a', 1)]);
    disk.full = true;
    await expect(store.batch([put('b', 2)])).rejects.toThrow('No space left');
    await expect(store.batch([put('b', 2)])).rejects.toThrow('(open)');
    await expect(store.get('a')).rejects.toThrow('(open)');
    disk.full = false;
    expect(await store.get('a')).toBe(1);
    await store.batch([put('b', 2)]);
    expect(await store.getMany(['a', 'b'])).toEqual([1, 2]);
    await store.close();
    await expect(store.get('a')).rejects.toThrow('closed');
  });

  it('reopens once for concurrent writers', async () => {
    const { disk, store } = await setup();
    disk.full = true;
    await expect(store.batch([put('x', 0)])).rejects.toThrow('No space left');
    disk.full = false;
    await Promise.all(Array.from({ length: 5 }, (_, i) => store.batch([put(`k${i}`, i)])));
    expect(disk.opens).toBe(2);
    expect(await store.getMany(['k0', 'k4', 'x'])).toEqual([0, 4, undefined]);
    await store.close();
  });
});

async function collect(store: Store) {
  const entries: Array<readonly [string, unknown]> = [];
  for await (const entry of store.iterate({})) entries.push(entry);
  return entries;
}
