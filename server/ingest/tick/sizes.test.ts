// Live audience size counters (D19) as stored: a journal entry per store batch, folded into the base every
// `foldEvery` entries in the same atomic batch; loading gives back exactly the counts in memory, whatever batches
// failed on the way (tick/sizes.ts).

import { describe, expect, it } from 'vitest';
import { createRng } from '../../../test/differential/random.js';
import { MemoryStore } from '../../store/memory.js';
import { prefixEnd } from '../../store/contract.js';
import { SIZES_PREFIX, SIZE_JOURNAL_PREFIX, sizeJournalKey, sizeKey } from '../keys.js';
import { AudienceSizes, PendingCounts, SizeDeltas, type SizeCounter } from './sizes.js';

const ORG = 'org-a';
const OTHER = 'org-b';

async function keysUnder(store: MemoryStore, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const [key] of store.iterate({ gte: prefix, lt: prefixEnd(prefix) })) keys.push(key);
  return keys;
}

/** One store batch of groups, as tick/writer.ts writes it: count each, write the counters once, then apply. */
async function writeBatch(store: MemoryStore, sizes: AudienceSizes, groups: readonly { partition: number; deltas: SizeDeltas }[], fail = false): Promise<void> {
  const pending = new PendingCounts();
  for (const { partition, deltas } of groups) sizes.count(partition, deltas, pending);
  const counts = sizes.batchOps(pending);
  if (fail) return;
  await store.batch(counts.ops);
  counts.written();
  for (const { partition, deltas } of groups) sizes.apply(partition, deltas);
}

function deltas(...changes: readonly [org: string, code: number, gen: number, delta: number][]): SizeDeltas {
  const made = new SizeDeltas();
  for (const [org, code, gen, delta] of changes) made.add(org, code, gen, delta);
  return made;
}

describe('a tick\'s size deltas', () => {
  it('sums the changes of each (organization, cohort, generation) once, in the order first changed', () => {
    const made = deltas([ORG, 1, 0, 1], [ORG, 1, 2, -1], [OTHER, 1, 0, 1], [ORG, 1, 0, 1], [ORG, 7, 0, -1], [ORG, 1, 2, -1], [ORG, 1, 1, 1]);
    expect(made.deltas.map(({ org, code, gen, delta }) => [org, code, gen, delta])).toEqual([
      [ORG, 1, 0, 2],
      [ORG, 1, 2, -2],
      [OTHER, 1, 0, 1],
      [ORG, 7, 0, -1],
      [ORG, 1, 1, 1],
    ]);
  });
});

describe('size counters in the store (D19)', () => {
  it('a batch writes one journal entry for every counter it changed, its groups counted on each other', async () => {
    const store = new MemoryStore();
    const sizes = new AudienceSizes(4);
    await writeBatch(store, sizes, [
      { partition: 0, deltas: deltas([ORG, 1, 0, 1], [ORG, 2, 0, 1], [OTHER, 1, 3, 1]) },
      { partition: 0, deltas: deltas([ORG, 1, 0, 1]) },
      { partition: 5, deltas: deltas([ORG, 1, 0, 1]) },
    ]);
    expect(await keysUnder(store, SIZES_PREFIX)).toEqual([]);
    expect(await store.get(sizeJournalKey(0))).toEqual([ORG, [1, 0, 0, 2, 2, 0, 0, 1, 1, 5, 0, 1], OTHER, [1, 0, 3, 1]]);
    // A batch that changes no counter writes no entry.
    await writeBatch(store, sizes, [{ partition: 0, deltas: deltas([ORG, 1, 0, 0]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([sizeJournalKey(0)]);
    const loaded = await AudienceSizes.load(store);
    expect(loaded.total(ORG, 1, 0)).toBe(3);
    expect(loaded.total(ORG, 2, 0)).toBe(1);
    expect(loaded.total(OTHER, 1, 3)).toBe(1);
  });

  it('every foldEvery entries a batch writes the counters changed since the last fold into the base and deletes the journal', async () => {
    const store = new MemoryStore();
    const sizes = new AudienceSizes(3);
    for (let i = 0; i < 3; i++) await writeBatch(store, sizes, [{ partition: i, deltas: deltas([ORG, 1, 0, 1]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([0, 1, 2].map(sizeJournalKey));
    // The fourth batch folds: its own change goes straight into the base with the three journaled counters.
    await writeBatch(store, sizes, [{ partition: 0, deltas: deltas([ORG, 1, 0, 1], [ORG, 7, 2, 1]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([]);
    expect(await store.get(sizeKey(ORG, 1, 0))).toEqual([0, 2]);
    expect(await store.get(sizeKey(ORG, 1, 1))).toEqual([0, 1]);
    expect(await store.get(sizeKey(ORG, 1, 2))).toEqual([0, 1]);
    expect(await store.get(sizeKey(ORG, 7, 0))).toEqual([2, 1]);
    // The journal goes on after the fold; a reopened store goes on where it stopped and folds what it found.
    await writeBatch(store, sizes, [{ partition: 1, deltas: deltas([ORG, 1, 0, -1]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([sizeJournalKey(3)]);
    const reopened = await AudienceSizes.load(store, 3);
    expect(reopened.total(ORG, 1, 0)).toBe(3);
    await writeBatch(store, reopened, [{ partition: 2, deltas: deltas([ORG, 1, 0, 1]) }]);
    await writeBatch(store, reopened, [{ partition: 2, deltas: deltas([ORG, 1, 0, 1]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([3, 4, 5].map(sizeJournalKey));
    await writeBatch(store, reopened, [{ partition: 3, deltas: deltas([ORG, 1, 0, 1]) }]);
    expect(await keysUnder(store, SIZE_JOURNAL_PREFIX)).toEqual([]);
    expect(await store.get(sizeKey(ORG, 1, 1))).toEqual([0, 0]);
    expect(await store.get(sizeKey(ORG, 1, 2))).toEqual([0, 3]);
    expect(await store.get(sizeKey(ORG, 1, 3))).toEqual([0, 1]);
    expect((await AudienceSizes.load(store)).total(ORG, 1, 0)).toBe(6);
  });

  it('loads counters stored without a journal, including bare numbers written before generations', async () => {
    const store = new MemoryStore();
    await store.batch([
      { type: 'put', key: sizeKey(ORG, 1, 0), value: 4 },
      { type: 'put', key: sizeKey(ORG, 1, 1), value: [0, 2] },
      { type: 'put', key: sizeKey(ORG, 2, 0), value: [3, 5] },
    ]);
    const sizes = await AudienceSizes.load(store);
    expect(sizes.total(ORG, 1, 0)).toBe(6);
    expect(sizes.total(ORG, 2, 3)).toBe(5);
    expect(sizes.total(ORG, 2, 0)).toBe(0);
  });

  it('what loads is what memory holds after any run of batches, folds and failed batches (random)', async () => {
    const rng = createRng(12345);
    const random = (n: number): number => rng.int(0, n - 1);
    let failed = 0;
    let folds = 0;
    for (let round = 0; round < 20; round++) {
      const store = new MemoryStore();
      let sizes = new AudienceSizes(1 + random(5));
      for (let batch = 0; batch < 40; batch++) {
        const groups = Array.from({ length: 1 + random(3) }, () => ({
          partition: random(4),
          deltas: deltas(...Array.from({ length: random(4) }, (): [string, number, number, number] => [random(2) === 0 ? ORG : OTHER, random(3), random(3), random(3) - 1])),
        }));
        const fail = random(6) === 0;
        failed += fail ? 1 : 0;
        await writeBatch(store, sizes, groups, fail);
        folds += (await keysUnder(store, SIZE_JOURNAL_PREFIX)).length === 0 ? 1 : 0;
        if (random(8) === 0) sizes = await AudienceSizes.load(store, sizes.foldEvery);
        const loaded = await AudienceSizes.load(store);
        expect(counted(loaded)).toEqual(counted(sizes));
      }
    }
    // The run went through every path.
    expect(failed).toBeGreaterThan(20);
    expect(folds).toBeGreaterThan(20);
  });
});

/** Every counter but those at generation 0 and count 0, which count as absent (a delta of 0 in memory leaves one). */
function counted(sizes: AudienceSizes): SizeCounter[] {
  return [...sizes.all()].filter(({ gen, count }) => gen !== 0 || count !== 0).sort(byCounter);
}

function byCounter(a: { org: string; code: number; partition: number }, b: { org: string; code: number; partition: number }): number {
  return a.org.localeCompare(b.org) || a.code - b.code || a.partition - b.partition;
}
