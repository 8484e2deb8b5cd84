// Live audience sizes (D19): per (org, cohort code) a counter per partition, kept in memory and stored. Each
// counter is tagged with the cohort's generation (server/backfill/README.md): a cohort created, changed or
// re-enabled starts a new generation whose count starts at 0 and is rebuilt by the catch-up of every user; counts
// of older generations are ignored. Only a partition's own tick changes its counters, so ticks never race.
//
// Stored as a base and a journal. The base is one `sz!{org}!{code}!{partition}` per counter, `[generation, count]`.
// A store batch that changes counters writes ONE journal entry `szj!{n}` with the new values of the counters it
// changed (a key per counter was 2.2 of 5.96 writes per event in bench/store-keys.ts's model of the HTTP
// benchmark); every `foldEvery` entries, a batch writes the counters changed since the last fold into the base
// instead and deletes the journal entries, in the same atomic batch. Loading reads the base, then the journal in
// order (a later value wins).

import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { SIZES_PREFIX, SIZE_JOURNAL_PREFIX, parseSizeJournalKey, parseSizeKey, sizeJournalKey, sizeKey } from '../keys.js';

/** A partition's counter of one cohort: the generation it counts and the number of members. */
interface PartitionCount {
  readonly gen: number;
  readonly count: number;
}

/** One partition's counter of a cohort, by name. */
interface CounterName {
  readonly org: string;
  readonly code: number;
  readonly partition: number;
}

/** A counter's count left by a group of a store batch not written yet. */
interface PendingCount extends PartitionCount, CounterName {}

/** Counts of one store batch not written yet, by counter (AudienceSizes.count, then batchOps). */
export type PendingCounts = Map<string, PendingCount>;

/** A batch's writes of its counters, and what to note once they are written. */
export interface CounterWrites {
  readonly ops: BatchOp[];
  written(): void;
}

/** Journal entries between two folds (each about one store batch of the ingest load). */
export const FOLD_EVERY = 1024;

/** The stored form `[gen, count]`; a bare number is a counter written before generations (generation 0). */
type StoredCount = number | readonly [number, number];

/** A journal entry: per organization, its changed counters as flat `code, partition, gen, count` quadruples. */
type JournalEntry = readonly (string | readonly number[])[];

/** One partition's live counter of one cohort. */
export interface SizeCounter {
  readonly org: string;
  readonly code: number;
  readonly partition: number;
  readonly gen: number;
  readonly count: number;
}

const NO_COUNTS: ReadonlyMap<number, PartitionCount> = new Map();

/** A change of membership counts for one partition's tick: (org, code, generation) -> delta. */
export class SizeDeltas {
  readonly deltas = new Map<string, { org: string; code: number; gen: number; delta: number }>();

  add(org: string, code: number, gen: number, delta: number): void {
    const id = `${counterId(org, code)}\u0000${gen}`;
    const known = this.deltas.get(id);
    if (known === undefined) this.deltas.set(id, { org, code, gen, delta });
    else known.delta += delta;
  }

  /**
   * Adds +1 for codes only in `after`, -1 for codes only in `before` (both sorted ascending), each counted in the
   * generation `genOf(code)` answers.
   */
  addDifference(org: string, before: readonly number[], after: readonly number[], genOf: (code: number) => number): void {
    let i = 0;
    let j = 0;
    while (i < before.length || j < after.length) {
      const b = before[i];
      const a = after[j];
      if (a === undefined || (b !== undefined && b < a)) {
        this.add(org, b as number, genOf(b as number), -1);
        i++;
      } else if (b === undefined || a < b) {
        this.add(org, a, genOf(a), 1);
        j++;
      } else {
        i++;
        j++;
      }
    }
  }
}

export class AudienceSizes {
  /** (org, code) -> partition -> count. */
  private readonly counters = new Map<string, Map<number, PartitionCount>>();
  /** The journal's entries in the store: numbers [first, next). */
  private first = 0;
  private next = 0;
  /** The counters changed by the journal's entries, by `at` id: what the next fold writes into the base. */
  private readonly journaled = new Map<string, CounterName>();

  constructor(readonly foldEvery: number = FOLD_EVERY) {}

  /** Loads every stored counter: one scan of the base `sz!`, then one of the journal `szj!` in order. */
  static async load(store: Store, foldEvery?: number): Promise<AudienceSizes> {
    const sizes = new AudienceSizes(foldEvery);
    for await (const [storeKey, value] of store.iterate<StoredCount>({ gte: SIZES_PREFIX, lt: prefixEnd(SIZES_PREFIX) })) {
      const parsed = parseSizeKey(storeKey);
      if (parsed === undefined) continue;
      const count = typeof value === 'number' ? { gen: 0, count: value } : Array.isArray(value) ? { gen: Number(value[0]), count: Number(value[1]) } : undefined;
      if (count === undefined || !Number.isFinite(count.gen) || !Number.isFinite(count.count)) continue;
      sizes.partitionsOf(parsed.org, parsed.code).set(parsed.partition, count);
    }
    let first: number | undefined;
    for await (const [storeKey, value] of store.iterate<JournalEntry>({ gte: SIZE_JOURNAL_PREFIX, lt: prefixEnd(SIZE_JOURNAL_PREFIX) })) {
      const n = parseSizeJournalKey(storeKey);
      if (n === undefined || !Array.isArray(value)) continue;
      first ??= n;
      sizes.next = n + 1;
      for (let i = 0; i + 1 < value.length; i += 2) {
        const org = value[i];
        const counts = value[i + 1];
        if (typeof org !== 'string' || !Array.isArray(counts)) continue;
        for (let j = 0; j + 3 < counts.length; j += 4) {
          const [code, partition, gen, count] = counts.slice(j, j + 4) as number[];
          if (![code, partition, gen, count].every(Number.isFinite)) continue;
          sizes.partitionsOf(org, code as number).set(partition as number, { gen: gen as number, count: count as number });
          sizes.journaled.set(countId(org, code as number, partition as number), { org, code: code as number, partition: partition as number });
        }
      }
    }
    sizes.first = first ?? 0;
    return sizes;
  }

  /** The exact total over partitions of the counters of generation `gen` (0 for a cohort nobody entered). */
  total(org: string, code: number, gen: number): number {
    const partitions = this.counters.get(counterId(org, code));
    if (partitions === undefined) return 0;
    let total = 0;
    for (const count of partitions.values()) if (count.gen === gen) total += count.count;
    return total;
  }

  /** Every counter: what a cluster node publishes for the partitions it owns (issue 15). */
  *all(): Iterable<SizeCounter> {
    for (const [id, partitions] of this.counters) {
      const at = id.indexOf('\u0000');
      const org = id.slice(0, at);
      const code = Number(id.slice(at + 1));
      for (const [partition, { gen, count }] of partitions) yield { org, code, partition, gen, count };
    }
  }

  /** The cohort's counter in each partition (a cluster node sums those of its own partitions, issue 15). */
  countsOf(org: string, code: number): ReadonlyMap<number, { readonly gen: number; readonly count: number }> {
    return this.counters.get(counterId(org, code)) ?? NO_COUNTS;
  }

  /**
   * Counts the partition's counters after `deltas` on in `pending` (nothing changes in memory yet): on top of the
   * counts the groups before this one in the same store batch left there (tick/writer.ts), or else the committed ones.
   */
  count(partition: number, deltas: SizeDeltas, pending: PendingCounts): void {
    for (const { org, code, gen, delta } of deltas.deltas.values()) {
      const at = countId(org, code, partition);
      const current = pending.get(at) ?? this.counters.get(counterId(org, code))?.get(partition) ?? { gen: 0, count: 0 };
      const applied = applyDelta(current, gen, delta);
      if (applied === current) continue;
      pending.set(at, { org, code, partition, gen: applied.gen, count: applied.count });
    }
  }

  /**
   * The writes that store a batch's counts (`pending`, after every group of the batch counted): one journal entry,
   * or, every `foldEvery` entries, the fold (the counters changed since the last one into the base, the journal
   * deleted). Nothing is noted until `written()`: a batch that fails leaves the journal as it was.
   */
  batchOps(pending: PendingCounts): CounterWrites {
    if (pending.size === 0) return { ops: [], written: () => undefined };
    if (this.next - this.first < this.foldEvery) {
      const byOrg = new Map<string, number[]>();
      for (const { org, code, partition, gen, count } of pending.values()) {
        let counts = byOrg.get(org);
        if (counts === undefined) byOrg.set(org, (counts = []));
        counts.push(code, partition, gen, count);
      }
      const n = this.next;
      const value: JournalEntry = [...byOrg].flat();
      return {
        ops: [{ type: 'put', key: sizeJournalKey(n), value }],
        written: () => {
          this.next = n + 1;
          for (const [at, counter] of pending) this.journaled.set(at, counter);
        },
      };
    }
    const ops: BatchOp[] = [];
    const folded = new Map<string, CounterName>(this.journaled);
    for (const [at, counter] of pending) folded.set(at, counter);
    for (const [at, { org, code, partition }] of folded) {
      const count = pending.get(at) ?? this.counters.get(counterId(org, code))?.get(partition) ?? { gen: 0, count: 0 };
      ops.push({ type: 'put', key: sizeKey(org, code, partition), value: [count.gen, count.count] });
    }
    const end = this.next;
    for (let n = this.first; n < end; n++) ops.push({ type: 'del', key: sizeJournalKey(n) });
    return {
      ops,
      written: () => {
        this.first = end;
        this.next = end;
        this.journaled.clear();
      },
    };
  }

  /** Applies a committed tick's deltas in memory (before its requests are answered: D19 counts every ack). */
  apply(partition: number, deltas: SizeDeltas): void {
    for (const { org, code, gen, delta } of deltas.deltas.values()) {
      const partitions = this.partitionsOf(org, code);
      const current = partitions.get(partition) ?? { gen: 0, count: 0 };
      partitions.set(partition, applyDelta(current, gen, delta));
    }
  }

  private partitionsOf(org: string, code: number): Map<number, PartitionCount> {
    const id = counterId(org, code);
    let partitions = this.counters.get(id);
    if (partitions === undefined) {
      partitions = new Map();
      this.counters.set(id, partitions);
    }
    return partitions;
  }
}

/** A newer generation restarts the count at 0; a delta of an older generation is dropped (its tick was stale). */
function applyDelta(current: PartitionCount, gen: number, delta: number): PartitionCount {
  if (gen < current.gen) return current;
  if (gen > current.gen) return { gen, count: delta };
  if (delta === 0) return current;
  return { gen, count: current.count + delta };
}

function counterId(org: string, code: number): string {
  return `${org}\u0000${code}`;
}

/** One partition's counter of a cohort. */
function countId(org: string, code: number, partition: number): string {
  return `${counterId(org, code)}\u0000${partition}`;
}
