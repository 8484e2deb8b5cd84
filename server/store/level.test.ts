// Hooks the LevelDB Store into the shared contract suite, plus what only a disk store has: reopening and locking.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeStoreContract } from '../../test/support/store-contract.js';
import { prefixEnd, skipKeysOf } from './contract.js';
import { byteOrderBelow, openLevelStore, StoreLockedError } from './level.js';

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

  it('Snappy-compresses the tables it writes only when asked (serve --store-compression); a directory written either way reads the same with the other setting', async () => {
    const root = await mkdtemp(join(tmpdir(), 'audience-level-compression-'));
    const keys = Array.from({ length: 400 }, (_, i) => `k!${String(i).padStart(3, '0')}`);
    const valueOf = (i: number) => `${'abc'.repeat(1500)}${i}`;
    /** The bytes of the directory's tables once what was written is in one (reopening writes the log out as a table). */
    const written = async (compression: boolean): Promise<{ dir: string; tableBytes: number }> => {
      const dir = join(root, String(compression));
      const store = await openLevelStore(dir, { compression });
      await store.batch(keys.map((key, i) => ({ type: 'put' as const, key, value: valueOf(i) })));
      await store.close();
      await (await openLevelStore(dir, { compression })).close();
      let tableBytes = 0;
      for (const name of await readdir(dir)) if (name.endsWith('.ldb')) tableBytes += (await stat(join(dir, name))).size;
      return { dir, tableBytes };
    };
    try {
      const compressed = await written(true);
      const plain = await written(false);
      // 400 values of ~4.5 KB each: ~1.8 MB as they are, a few KB compressed.
      expect(plain.tableBytes).toBeGreaterThan(400 * 4500);
      expect(compressed.tableBytes).toBeLessThan(plain.tableBytes / 10);
      for (const [dir, compression] of [[compressed.dir, false], [plain.dir, true]] as const) {
        const store = await openLevelStore(dir, { compression });
        expect(await store.getMany(keys)).toEqual(keys.map((_, i) => valueOf(i)));
        await store.close();
      }
    } finally {
      await rm(root, { recursive: true, force: true });
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

  it('byteOrderBelow orders strings as their UTF-8 bytes (LevelDB), astral characters above U+E000-U+FFFF', () => {
    const pieces = ['a', 'z', '~', '\u00e9', '\u07ff', '\u0800', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1f600}', '\u{10ffff}'];
    let seed = 7;
    const pick = (): string => pieces[(seed = (seed * 1103515245 + 12345) % 2147483648) % pieces.length] as string;
    const strings = Array.from({ length: 400 }, (_, i) => Array.from({ length: 1 + (i % 4) }, pick).join(''));
    for (let i = 1; i < strings.length; i++) {
      const [a, b] = [strings[i - 1] as string, strings[i] as string];
      expect(byteOrderBelow(a, b), `${JSON.stringify(a)} < ${JSON.stringify(b)}`).toBe(Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0);
    }
    // JavaScript's < alone gets this pair wrong: U+E000 is EE 80 80 in UTF-8, U+10000 is F0 90 80 80.
    expect('\u{10000}' < '\ue000').toBe(true);
    expect(byteOrderBelow('\ue000', '\u{10000}')).toBe(true);
  });

  it('skipKeys answers as a seek per key does, over groups of every length around its read and seek sizes', async () => {
    const { store, cleanup } = await openTemp();
    try {
      // Group g has sizes[g] keys; names mix ASCII, U+E000-U+FFFF and astral characters, so byte order matters.
      const sizes = [1, 2, 63, 64, 65, 1, 255, 256, 257, 3, 600, 1, 1, 40, 2, 70];
      const marks = ['a', '\uf000', '\u{1f600}', 'b'];
      const name = (g: number): string => `s!${marks[g % marks.length]}${String(g).padStart(3, '0')}!`;
      const ops = sizes.flatMap((keys, g) => Array.from({ length: keys }, (_, k) => ({ type: 'put' as const, key: `${name(g)}${String(k).padStart(4, '0')}`, value: 0 })));
      for (let i = 0; i < ops.length; i += 500) await store.batch(ops.slice(i, i + 500));
      const nextGroup = (k: string): string => prefixEnd(k.slice(0, k.lastIndexOf('!') + 1));
      const range = { gte: 's!', lt: prefixEnd('s!') };
      const all = await store.skipKeys(range, nextGroup, 1000);
      expect(all).toHaveLength(sizes.length);
      expect(all).toEqual(await skipKeysOf(store, range, nextGroup, 1000));
      // From inside groups and up to every limit.
      for (const from of [...all, `${name(6)}0100`, `${name(10)}0599`]) {
        for (const limit of [1, 2, 5, 16]) {
          const part = { gte: from, lt: range.lt };
          expect(await store.skipKeys(part, nextGroup, limit)).toEqual(await skipKeysOf(store, part, nextGroup, limit));
        }
      }
    } finally {
      await cleanup();
    }
  });
});
