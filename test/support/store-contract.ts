// The one test suite every Store implementation passes (server/store/contract.ts); each implementation's test file
// is a two-line hookup. Stores that can reopen (LevelDB) also get the persistence cases.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../server/store/contract.js';
import { prefixEnd } from '../../server/store/contract.js';
import { concatValues, decodeValue, decodeValues } from '../../server/store/values.js';
import { fromKeyPart, key, keyPart, scanPrefix, seqPart } from '../../server/store/layout.js';

export interface OpenedStore {
  readonly store: Store;
  /** Closes nothing: opens the same data again after the caller closed `store` (persistent stores only). */
  readonly reopen?: () => Promise<Store>;
  readonly cleanup: () => Promise<void>;
}

async function collect<T>(entries: AsyncIterable<readonly [string, T]>): Promise<Array<readonly [string, T]>> {
  const out: Array<readonly [string, T]> = [];
  for await (const entry of entries) out.push(entry);
  return out;
}

const keysOf = (entries: ReadonlyArray<readonly [string, unknown]>) => entries.map(([k]) => k);

export function describeStoreContract(name: string, open: () => Promise<OpenedStore>): void {
  describe(`Store contract: ${name}`, () => {
    let opened: OpenedStore;
    let store: Store;

    beforeEach(async () => {
      opened = await open();
      store = opened.store;
    });
    afterEach(async () => {
      await opened.cleanup();
    });

    describe('values', () => {
      const samples: Record<string, unknown> = {
        object: { a: 1, b: 'two', c: true, d: null },
        array: [1, 'x', false, null, [2, 3], { y: 4 }],
        nested: { level1: { level2: { level3: [{ deep: 'yes', n: -1.25 }] } } },
        bytes: new Uint8Array([0, 1, 2, 253, 254, 255]),
        integer: 42,
        negative: -7,
        zero: 0,
        float: 3.141592653589793,
        large: 2 ** 53 - 1,
        string: 'hello, wörld ✓',
        empty: '',
        yes: true,
        no: false,
        nothing: null,
      };

      for (const [label, value] of Object.entries(samples)) {
        it(`round-trips ${label}`, async () => {
          await store.batch([{ type: 'put', key: `v!${label}`, value }]);
          expect(await store.get(`v!${label}`)).toEqual(value);
        });
      }

      it('returns Uint8Array values as byte arrays', async () => {
        await store.batch([{ type: 'put', key: 'v!bytes', value: new Uint8Array([9, 8, 7]) }]);
        const read = await store.get<Uint8Array>('v!bytes');
        expect(read).toBeInstanceOf(Uint8Array);
        expect(Array.from(read ?? [])).toEqual([9, 8, 7]);
      });

      it('answers undefined for a missing key', async () => {
        expect(await store.get('v!missing')).toBeUndefined();
      });

      it('getMany answers in key order of the request, undefined for missing ones', async () => {
        await store.batch([
          { type: 'put', key: 'g!a', value: 'A' },
          { type: 'put', key: 'g!c', value: { c: 3 } },
        ]);
        expect(await store.getMany(['g!c', 'g!b', 'g!a'])).toEqual([{ c: 3 }, undefined, 'A']);
        expect(await store.getMany([])).toEqual([]);
      });

      it('returns copies: changing a read value or the written one changes nothing stored', async () => {
        const written = { list: [1, 2], inner: { n: 1 } };
        await store.batch([{ type: 'put', key: 'v!copy', value: written }]);
        written.list.push(3);
        written.inner.n = 99;
        const first = await store.get<{ list: number[]; inner: { n: number } }>('v!copy');
        expect(first).toEqual({ list: [1, 2], inner: { n: 1 } });
        first?.list.push(4);
        if (first) first.inner.n = 100;
        expect(await store.get('v!copy')).toEqual({ list: [1, 2], inner: { n: 1 } });
        const [entry] = await collect(store.iterate<{ list: number[] }>({ gte: 'v!copy', lte: 'v!copy' }));
        entry?.[1].list.push(5);
        expect(await store.get('v!copy')).toEqual({ list: [1, 2], inner: { n: 1 } });
      });
    });

    describe('batch', () => {
      it('applies puts and deletes together', async () => {
        await store.batch([
          { type: 'put', key: 'b!1', value: 1 },
          { type: 'put', key: 'b!2', value: 2 },
        ]);
        await store.batch([
          { type: 'del', key: 'b!1' },
          { type: 'put', key: 'b!3', value: 3 },
        ]);
        expect(await store.getMany(['b!1', 'b!2', 'b!3'])).toEqual([undefined, 2, 3]);
      });

      it('lets a later operation on the same key win', async () => {
        await store.batch([
          { type: 'put', key: 'b!x', value: 'first' },
          { type: 'put', key: 'b!x', value: 'second' },
          { type: 'put', key: 'b!y', value: 'kept?' },
          { type: 'del', key: 'b!y' },
          { type: 'del', key: 'b!z' },
          { type: 'put', key: 'b!z', value: 'back' },
        ]);
        expect(await store.getMany(['b!x', 'b!y', 'b!z'])).toEqual(['second', undefined, 'back']);
      });

      it('accepts the sync option and an empty batch', async () => {
        await store.batch([{ type: 'put', key: 'b!sync', value: true }], { sync: true });
        await store.batch([]);
        expect(await store.get('b!sync')).toBe(true);
      });

      it('deleting a missing key is not an error', async () => {
        await store.batch([{ type: 'del', key: 'b!never' }]);
        expect(await store.get('b!never')).toBeUndefined();
      });

      it('overwrites a value and iterates it once', async () => {
        await store.batch([{ type: 'put', key: 'b!o', value: 1 }]);
        await store.batch([{ type: 'put', key: 'b!o', value: 2 }]);
        expect(await collect(store.iterate({ gte: 'b!', lt: prefixEnd('b!') }))).toEqual([['b!o', 2]]);
      });
    });

    describe('ranges', () => {
      beforeEach(async () => {
        await store.batch(['a', 'b', 'c', 'd', 'e'].map((k) => ({ type: 'put' as const, key: `r!${k}`, value: k })));
        await store.batch([
          { type: 'put', key: 'q!z', value: 'before' },
          { type: 'put', key: 's!a', value: 'after' },
        ]);
      });

      it('gte/lte are inclusive, gt/lt exclusive', async () => {
        expect(keysOf(await collect(store.iterate({ gte: 'r!b', lte: 'r!d' })))).toEqual(['r!b', 'r!c', 'r!d']);
        expect(keysOf(await collect(store.iterate({ gt: 'r!b', lt: 'r!d' })))).toEqual(['r!c']);
        expect(keysOf(await collect(store.iterate({ gt: 'r!b', lte: 'r!d' })))).toEqual(['r!c', 'r!d']);
      });

      it('yields values with their keys, in key order', async () => {
        expect(await collect(store.iterate({ gte: 'r!', lt: prefixEnd('r!') }))).toEqual([
          ['r!a', 'a'],
          ['r!b', 'b'],
          ['r!c', 'c'],
          ['r!d', 'd'],
          ['r!e', 'e'],
        ]);
      });

      it('reverse walks from the upper bound down', async () => {
        expect(keysOf(await collect(store.iterate({ gte: 'r!b', lt: 'r!e', reverse: true })))).toEqual([
          'r!d',
          'r!c',
          'r!b',
        ]);
      });

      it('limit counts from the start of the walk, in either direction', async () => {
        expect(keysOf(await collect(store.iterate({ gte: 'r!', lt: prefixEnd('r!'), limit: 2 })))).toEqual([
          'r!a',
          'r!b',
        ]);
        const lastTwo = await collect(store.iterate({ gte: 'r!', lt: prefixEnd('r!'), limit: 2, reverse: true }));
        expect(keysOf(lastTwo)).toEqual(['r!e', 'r!d']);
        expect(await collect(store.iterate({ gte: 'r!', lt: prefixEnd('r!'), limit: 0 }))).toEqual([]);
      });

      it('an iteration reads the store as it was when it began (a snapshot, as a LevelDB iterator reads)', async () => {
        const seen: (readonly [string, unknown])[] = [];
        for await (const entry of store.iterate({ gte: 'r!', lt: prefixEnd('r!') })) {
          if (seen.length === 0) {
            await store.batch([{ type: 'put', key: 'r!e', value: 'E' }, { type: 'del', key: 'r!c' }, { type: 'put', key: 'r!bb', value: 'new' }]);
          }
          seen.push(entry);
        }
        expect(seen).toEqual([['r!a', 'a'], ['r!b', 'b'], ['r!c', 'c'], ['r!d', 'd'], ['r!e', 'e']]);
      });

      it('an unbounded range covers every key', async () => {
        expect(keysOf(await collect(store.iterate({})))).toEqual(['q!z', 'r!a', 'r!b', 'r!c', 'r!d', 'r!e', 's!a']);
      });

      it('an empty range yields nothing', async () => {
        expect(await collect(store.iterate({ gt: 'r!c', lt: 'r!c' }))).toEqual([]);
        expect(await collect(store.iterate({ gte: 'x!', lt: prefixEnd('x!') }))).toEqual([]);
      });

      it('stopping early leaves the store usable', async () => {
        for await (const [k] of store.iterate({ gte: 'r!' })) {
          expect(k).toBe('r!a');
          break;
        }
        expect(await store.get('r!e')).toBe('e');
      });

      it('encodedValues answers the range\'s values as stored bytes, in order, limit and reverse as iterate', async () => {
        await store.batch([{ type: 'put', key: 'r!f', value: { n: 6, bytes: new Uint8Array([1, 2]) } }]);
        const values = await store.encodedValues({ gt: 'r!c', lt: prefixEnd('r!') });
        expect(values.every((value) => value instanceof Uint8Array)).toBe(true);
        expect(values.map((value) => decodeValue(value))).toEqual(['d', 'e', { n: 6, bytes: new Uint8Array([1, 2]) }]);
        expect(decodeValues(concatValues(values))).toEqual(['d', 'e', { n: 6, bytes: new Uint8Array([1, 2]) }]);
        expect((await store.encodedValues({ gte: 'r!', lt: prefixEnd('r!'), limit: 2 })).map((v) => decodeValue(v))).toEqual(['a', 'b']);
        expect((await store.encodedValues({ gte: 'r!', lt: 'r!c', reverse: true })).map((v) => decodeValue(v))).toEqual(['b', 'a']);
        expect(await store.encodedValues({ gte: 'r!', lt: prefixEnd('r!'), limit: 0 })).toEqual([]);
        expect(await store.encodedValues({ gte: 'x!', lt: prefixEnd('x!') })).toEqual([]);
      });

      it('encodedEntries answers each value of the range as stored bytes with its key, limit and reverse as iterate', async () => {
        const entries = await store.encodedEntries({ gt: 'r!b', lt: prefixEnd('r!') });
        expect(entries.map(([key, value]) => [key, decodeValue(value)])).toEqual([['r!c', 'c'], ['r!d', 'd'], ['r!e', 'e']]);
        expect(entries.map(([, value]) => value)).toEqual(await store.encodedValues({ gt: 'r!b', lt: prefixEnd('r!') }));
        expect((await store.encodedEntries({ gte: 'r!', lt: prefixEnd('r!'), reverse: true, limit: 2 })).map(([key]) => key)).toEqual(['r!e', 'r!d']);
        expect(await store.encodedEntries({ gte: 'r!', lt: prefixEnd('r!'), limit: 0 })).toEqual([]);
      });

      it('encodedValues reads past one native read\'s worth of bytes', async () => {
        const big = 'x'.repeat(100_000);
        await store.batch(Array.from({ length: 30 }, (_, i) => ({ type: 'put' as const, key: `w!${String(i).padStart(2, '0')}`, value: { i, big } })));
        const values = await store.encodedValues({ gte: 'w!', lt: prefixEnd('w!') });
        expect(values.map((value) => decodeValue<{ i: number }>(value).i)).toEqual(Array.from({ length: 30 }, (_, i) => i));
        expect(await store.encodedValues({ gte: 'w!', lt: prefixEnd('w!'), limit: 25 })).toHaveLength(25);
      });

      it('skipKeys seeks from each key to the first at or after next(key), within the range and the limit', async () => {
        await store.batch(['p!u1!1', 'p!u1!2', 'p!u2!1', 'p!u3!1', 'p!u3!2', 'p!u4!1'].map((k) => ({ type: 'put' as const, key: k, value: 0 })));
        const nextUser = (k: string): string => prefixEnd(`${k.slice(0, k.lastIndexOf('!'))}!`);
        expect(await store.skipKeys({ gte: 'p!', lt: prefixEnd('p!') }, nextUser, 10)).toEqual(['p!u1!1', 'p!u2!1', 'p!u3!1', 'p!u4!1']);
        expect(await store.skipKeys({ gte: 'p!u1"', lt: prefixEnd('p!') }, nextUser, 2)).toEqual(['p!u2!1', 'p!u3!1']);
        expect(await store.skipKeys({ gte: 'p!', lt: 'p!u3!2' }, nextUser, 10)).toEqual(['p!u1!1', 'p!u2!1', 'p!u3!1']);
        expect(await store.skipKeys({ gte: 'p!', lt: prefixEnd('p!') }, nextUser, 0)).toEqual([]);
        expect(await store.skipKeys({ gte: 'x!', lt: prefixEnd('x!') }, nextUser, 5)).toEqual([]);
      });

      it('skipKeys finds every group whatever their sizes: runs of small groups, then large ones, then small again', async () => {
        // 300 groups: 1 to 3 keys each, then 40 groups of 300 keys, then 200 groups of 2 (what a history in blocks and
        // one stored per event look like to a sweep listing users).
        const sizes = [...Array.from({ length: 300 }, (_, g) => 1 + (g % 3)), ...Array.from({ length: 40 }, () => 300), ...Array.from({ length: 200 }, () => 2)];
        const name = (g: number): string => `g!${String(g).padStart(4, '0')}!`;
        const ops = sizes.flatMap((keys, g) => Array.from({ length: keys }, (_, k) => ({ type: 'put' as const, key: `${name(g)}${String(k).padStart(4, '0')}`, value: 0 })));
        for (let i = 0; i < ops.length; i += 1000) await store.batch(ops.slice(i, i + 1000));
        const nextGroup = (k: string): string => prefixEnd(k.slice(0, k.lastIndexOf('!') + 1));
        const all = await store.skipKeys({ gte: 'g!', lt: prefixEnd('g!') }, nextGroup, 10_000);
        expect(all).toEqual(sizes.map((_, g) => `${name(g)}0000`));
        // In pieces, as a sweep lists its batches: each one after the last group of the one before.
        const pieces: string[] = [];
        for (let from = 'g!'; ; ) {
          const piece = await store.skipKeys({ gte: from, lt: prefixEnd('g!') }, nextGroup, 37);
          pieces.push(...piece);
          if (piece.length < 37) break;
          from = nextGroup(piece[piece.length - 1] as string);
        }
        expect(pieces).toEqual(all);
      });
    });

    describe('prefix scans with the layout helpers', () => {
      it('scanPrefix selects exactly the entries of one parent, not of a longer prefix or sibling', async () => {
        await store.batch([
          { type: 'put', key: key('c', 'org1', 'x'), value: 1 },
          { type: 'put', key: key('c', 'org1', 'y'), value: 2 },
          { type: 'put', key: key('c', 'org10', 'z'), value: 3 },
          { type: 'put', key: key('cc', 'org1', seqPart(1)), value: 4 },
          { type: 'put', key: key('c', 'org2', 'w'), value: 5 },
        ]);
        const prefix = scanPrefix('c', 'org1');
        const found = await collect(store.iterate({ gte: prefix, lt: prefixEnd(prefix) }));
        expect(found).toEqual([
          ['c!org1!x', 1],
          ['c!org1!y', 2],
        ]);
        const all = await collect(store.iterate({ gte: scanPrefix('c'), lt: prefixEnd(scanPrefix('c')) }));
        expect(keysOf(all)).toEqual(['c!org1!x', 'c!org1!y', 'c!org10!z', 'c!org2!w']);
      });

      it('seqPart keys sort numerically', async () => {
        const numbers = [10, 2, 255, 1, 4096, 0, 2 ** 40];
        await store.batch(numbers.map((n) => ({ type: 'put' as const, key: key('n', seqPart(n)), value: n })));
        const found = await collect(store.iterate<number>({ gte: scanPrefix('n'), lt: prefixEnd(scanPrefix('n')) }));
        expect(found.map(([, v]) => v)).toEqual([...numbers].sort((a, b) => a - b));
      });

      it('keyPart keeps free-form parts inside their own prefix', async () => {
        await store.batch([
          { type: 'put', key: key('a', 'org', keyPart('tag!x'), 'id'), value: 'escaped' },
          { type: 'put', key: key('a', 'org', keyPart('tag'), 'id'), value: 'plain' },
        ]);
        const prefix = scanPrefix('a', 'org', keyPart('tag'));
        expect(await collect(store.iterate({ gte: prefix, lt: prefixEnd(prefix) }))).toEqual([['a!org!tag!id', 'plain']]);
      });
    });

    describe('keys beyond ASCII', () => {
      it('a prefix scan finds keys whose next character is an emoji or any other code point', async () => {
        const raw = ['a!b', 'a!\u{1F600}', 'a!\uffff', 'a!\ue000', 'a!z'];
        await store.batch(raw.map((k, i) => ({ type: 'put' as const, key: k, value: i })));
        const found = await collect(store.iterate({ gte: 'a!', lt: prefixEnd('a!') }));
        expect(found.map(([, v]) => v).sort()).toEqual([0, 1, 2, 3, 4]);
      });

      it('keyPart makes free-form parts ASCII, so both stores order them alike, and fromKeyPart reverses it', async () => {
        const values = ['\u{1F600}', '\ue000', 'plain', 'per%cent', 'bang!', '\ud800', 'é'];
        await store.batch(values.map((v, i) => ({ type: 'put' as const, key: key('f', keyPart(v)), value: i })));
        const found = await collect(store.iterate<number>({ gte: scanPrefix('f'), lt: prefixEnd(scanPrefix('f')) }));
        expect(found.map(([k]) => k)).toEqual([...found.map(([k]) => k)].sort());
        for (const [k, i] of found) {
          expect(k).toMatch(/^[\x20-\x7e]+$/);
          expect(fromKeyPart(k.slice(2))).toBe(values[i]);
        }
        expect(found).toHaveLength(values.length);
      });
    });

    describe('close', () => {
      it('rejects reads and writes once closed', async () => {
        await store.batch([{ type: 'put', key: 'z!1', value: 1 }]);
        await store.close();
        await expect(store.get('z!1')).rejects.toThrow();
        await expect(store.batch([{ type: 'put', key: 'z!2', value: 2 }])).rejects.toThrow();
      });
    });

    describe('persistence', () => {
      it('keeps data across close and reopen (when the store can reopen)', async () => {
        await store.batch([
          { type: 'put', key: 'p!1', value: { kept: [1, 2, 3] } },
          { type: 'put', key: 'p!2', value: new Uint8Array([4, 5]) },
          { type: 'put', key: 'p!3', value: 'deleted next' },
        ]);
        await store.batch([{ type: 'del', key: 'p!3' }], { sync: true });
        if (opened.reopen === undefined) {
          expect(await store.get('p!1')).toEqual({ kept: [1, 2, 3] });
          return;
        }
        await store.close();
        const again = await opened.reopen();
        try {
          const found = await collect(again.iterate({ gte: 'p!', lt: prefixEnd('p!') }));
          expect(keysOf(found)).toEqual(['p!1', 'p!2']);
          expect(found[0]?.[1]).toEqual({ kept: [1, 2, 3] });
          expect(Array.from(found[1]?.[1] as Uint8Array)).toEqual([4, 5]);
        } finally {
          await again.close();
        }
      });
    });
  });
}
