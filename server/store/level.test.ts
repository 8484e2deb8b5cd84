// Hooks the LevelDB Store into the shared contract suite, plus what only a disk store has: reopening and locking.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeStoreContract } from '../../test/support/store-contract.js';
import { openLevelStore, StoreLockedError } from './level.js';

async function openTemp() {
  const dir = await mkdtemp(join(tmpdir(), 'audience-level-'));
  const store = await openLevelStore(dir);
  const opened: Array<{ close(): Promise<void> }> = [store];
  return {
    dir,
    store,
    reopen: async () => {
      const again = await openLevelStore(dir);
      opened.push(again);
      return again;
    },
    cleanup: async () => {
      for (const s of opened) await s.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

describeStoreContract('level', openTemp);

describe('LevelDB store', () => {
  it('refuses a second open of a directory in use with StoreLockedError', async () => {
    const { dir, cleanup } = await openTemp();
    try {
      const second = openLevelStore(dir);
      await expect(second).rejects.toBeInstanceOf(StoreLockedError);
      await expect(second).rejects.toThrow(`data directory is in use: ${dir}`);
    } finally {
      await cleanup();
    }
  });

  it('opens the directory again once the holder closed it', async () => {
    const { dir, store, cleanup } = await openTemp();
    try {
      await store.batch([{ type: 'put', key: 'k!1', value: { n: 1 } }]);
      await store.close();
      const again = await openLevelStore(dir);
      expect(await again.get('k!1')).toEqual({ n: 1 });
      await again.close();
    } finally {
      await cleanup();
    }
  });

  it('writes a batch of puts and deletes as one; one still pending when the store starts closing is written first, one given after is refused', async () => {
    const { dir, store, cleanup } = await openTemp();
    try {
      await store.batch([
        { type: 'put', key: 'k!1', value: { n: 1 } },
        { type: 'put', key: 'k!2', value: new Uint8Array([1, 2, 3]) },
      ]);
      const during = store.batch([
        { type: 'del', key: 'k!1' },
        { type: 'put', key: 'k!3', value: 'three' },
      ]);
      const closing = store.close();
      await during;
      await closing;
      await expect(store.batch([{ type: 'put', key: 'k!4', value: 4 }])).rejects.toThrow();
      const again = await openLevelStore(dir);
      expect(await again.getMany(['k!1', 'k!2', 'k!3', 'k!4'])).toEqual([undefined, new Uint8Array([1, 2, 3]), 'three', undefined]);
      await again.close();
    } finally {
      await cleanup();
    }
  });

  it("reports LevelDB's memory estimate, which grows with what the memtable holds, and none once closed", async () => {
    const { store, cleanup } = await openTemp();
    try {
      const before = store.memoryBytes?.();
      expect(before).toBeGreaterThanOrEqual(0);
      const value = 'x'.repeat(1000);
      await store.batch(Array.from({ length: 1000 }, (_, i) => ({ type: 'put' as const, key: `k!${i}`, value })));
      // A million bytes of values went into the memtable (64 MiB, not yet written out as a table).
      expect(store.memoryBytes?.()).toBeGreaterThan((before as number) + 1_000_000);
      await store.close();
      expect(store.memoryBytes?.()).toBeUndefined();
    } finally {
      await cleanup();
    }
  });
});
