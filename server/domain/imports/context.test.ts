import { describe, expect, it } from 'vitest';
import type { RangeOptions, Store } from '../../store/contract.js';
import { MemoryStore } from '../../store/memory.js';
import { Imports } from './index.js';
import type { ResolveUser } from './index.js';

const resolve: ResolveUser = async (refs, write) => write(refs.map((ref) => ('user_id' in ref ? ref.user_id : `u-${ref.alias.id}`)), []);

async function setup(store: Store = new MemoryStore()) {
  let next = 0;
  const imports = Imports.open(store, { newId: () => `id-${++next}`, now: () => 1000 });
  const third = await imports.createImport('org1', 'ws1', { name: 'T', code: 'acme', relation: '3rd', kind: 'segments' });
  const second = await imports.createImport('org1', 'ws1', { name: 'S', code: 'partner', relation: '2nd', kind: 'segments' });
  const crm = await imports.createImport('org1', 'ws1', {
    name: 'CRM', code: 'crm', relation: '2nd', kind: 'connections', schema: { plan: 'string' },
  });
  for (const imported of [third, second]) {
    await imports.createSegment('org1', imported.id, { name: 'Sports', code: 'sports' });
    await imports.createSegment('org1', imported.id, { name: 'News', code: 'news' });
  }
  return { imports, third, second, crm };
}

describe('engine lookups (E13, E14, D27)', () => {
  it('answers per relation, provider (the import code) and segment code', async () => {
    const { imports, third, second } = await setup();
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    await imports.loadMembers('org1', second.id, 'news', { add: [{ user_id: 'a' }] }, resolve);
    const ctx = await imports.contextFor('org1', 'a');
    expect(ctx.inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
    expect(ctx.inImportedSegment('2nd', 'acme', 'sports')).toBe(false);
    expect(ctx.inImportedSegment('3rd', 'acme', 'news')).toBe(false);
    expect(ctx.inImportedSegment('2nd', 'partner', 'news')).toBe(true);
    expect(ctx.inImportedSegment('3rd', 'partner', 'news')).toBe(false);
    expect(ctx.inImportedSegment('3rd', third.id, 'sports')).toBe(false);
    expect(ctx.connectionRows('acme')).toEqual([]);
  });

  it('keeps users and organizations apart', async () => {
    const { imports, third } = await setup();
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    const other = await imports.createImport('org2', 'ws2', { name: 'T', code: 'acme', relation: '3rd', kind: 'segments' });
    await imports.createSegment('org2', other.id, { name: 'Sports', code: 'sports' });
    expect((await imports.contextFor('org1', 'b')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    expect((await imports.contextFor('org2', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
  });

  it('answers connection rows of the import named by its code, by time ascending', async () => {
    const { imports, crm } = await setup();
    await imports.loadRows('org1', crm.id, [
      { user_id: 'a', time: 3000, properties: { plan: 'c' } },
      { user_id: 'a', time: 1000, properties: { plan: 'a' } },
      { user_id: 'a', time: 2000, properties: { plan: 'b' } },
    ], resolve);
    const ctx = await imports.contextFor('org1', 'a');
    expect(ctx.connectionRows('crm').map((row) => [row.time, row.properties.plan])).toEqual([[1000, 'a'], [2000, 'b'], [3000, 'c']]);
    expect(ctx.connectionRows(crm.id)).toEqual([]);
  });

  it('reads a user with one prefix scan of memberships and one of rows', async () => {
    const memory = new MemoryStore();
    const scans: string[] = [];
    const counting: Store = {
      get: (key) => memory.get(key),
      getMany: (keys) => memory.getMany(keys),
      batch: (ops) => memory.batch(ops),
      iterate: (range) => {
        scans.push((range.gte ?? range.gt ?? '').split('!')[0] ?? '');
        return memory.iterate(range);
      },
      encodedValues: (range) => memory.encodedValues(range),
      encodedEntries: (range) => memory.encodedEntries(range),
      skipKeys: (range, next, limit) => memory.skipKeys(range, next, limit),
      close: () => memory.close(),
    };
    const { imports, third, crm } = await setup(counting);
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    await imports.loadRows('org1', crm.id, [{ user_id: 'a', properties: {} }], resolve);
    scans.length = 0;
    await imports.contextFor('org1', 'a');
    expect(scans.sort()).toEqual(['mb', 'mr']);
  });

  it('serves a cached context synchronously until the user’s data changes', async () => {
    const { imports, third, crm } = await setup();
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    const first = await imports.contextFor('org1', 'a');
    expect(imports.cachedContextFor('org1', 'a')).toBe(first);
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
    await imports.loadRows('org1', crm.id, [{ user_id: 'a', properties: { plan: 'p' } }], resolve);
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    expect((await imports.contextFor('org1', 'a')).connectionRows('crm')).toHaveLength(1);
    await imports.deleteSegmentByCode('org1', third.id, 'sports');
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
  });

  it('a read that overlaps a write is not cached, so no stale context outlives the write', async () => {
    const memory = new MemoryStore();
    let gate: Promise<void> | undefined;
    let snapshots = 0;
    let bothTaken: () => void = () => undefined;
    const taken = new Promise<void>((resolve) => (bothTaken = resolve));
    const gated: Store = {
      get: (key) => memory.get(key),
      getMany: (keys) => memory.getMany(keys),
      batch: (ops) => memory.batch(ops),
      // Like a LevelDB iterator: reads its snapshot first; while gated, then waits before answering.
      iterate: <T>(range: RangeOptions) => {
        const wait = gate;
        return (async function* () {
          const entries: Array<readonly [string, T]> = [];
          for await (const entry of memory.iterate<T>(range)) entries.push(entry);
          if (wait !== undefined) {
            if (++snapshots === 2) bothTaken();
            await wait;
          }
          yield* entries;
        })();
      },
      encodedValues: (range) => memory.encodedValues(range),
      encodedEntries: (range) => memory.encodedEntries(range),
      skipKeys: (range, next, limit) => memory.skipKeys(range, next, limit),
      close: () => memory.close(),
    };
    const { imports, third } = await setup(gated);
    let release: () => void = () => undefined;
    gate = new Promise((resolve) => (release = resolve));
    const reading = imports.contextFor('org1', 'a');
    gate = undefined;
    await taken;
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'a' }] }, resolve);
    release();
    expect((await reading).inImportedSegment('3rd', 'acme', 'sports')).toBe(false);
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    expect((await imports.contextFor('org1', 'a')).inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
  });

  it('D40: evicts the least recently used contexts beyond the cache bytes; 0 bytes caches nothing', async () => {
    // An entry of a user without imported data costs 96 bytes plus its key's ('org1\u0000a': 6 characters) 12: 108.
    const small = Imports.open(new MemoryStore(), { contextCacheBytes: 250 });
    await small.contextFor('org1', 'a');
    await small.contextFor('org1', 'b');
    small.cachedContextFor('org1', 'a');
    await small.contextFor('org1', 'c');
    expect(small.cachedContextFor('org1', 'b')).toBeUndefined();
    expect(small.cachedContextFor('org1', 'a')).toBeDefined();
    expect(small.cachedContextFor('org1', 'c')).toBeDefined();
    const none = Imports.open(new MemoryStore(), { contextCacheBytes: 0 });
    await none.contextFor('org1', 'a');
    expect(none.cachedContextFor('org1', 'a')).toBeUndefined();
  });

  it('D40: counts a context by what it holds; users without imported data share one empty context', async () => {
    const imports = Imports.open(new MemoryStore(), { contextCacheBytes: 250 });
    expect(await imports.contextFor('org1', 'a')).toBe(await imports.contextFor('org1', 'b'));
    const third = await imports.createImport('org1', 'ws1', { name: 'T', code: 'acme', relation: '3rd', kind: 'segments' });
    await imports.createSegment('org1', third.id, { name: 'Sports', code: 'sports' });
    await imports.loadMembers('org1', third.id, 'sports', { add: [{ user_id: 'm' }] }, resolve);
    // 'm' holds a membership: its entry alone is over the bound (kept: the entry just set always is), so 'a' goes.
    await imports.contextFor('org1', 'a');
    const member = await imports.contextFor('org1', 'm');
    expect(member.inImportedSegment('3rd', 'acme', 'sports')).toBe(true);
    expect(imports.cachedContextFor('org1', 'a')).toBeUndefined();
    expect(imports.cachedContextFor('org1', 'm')).toBe(member);
  });
});
