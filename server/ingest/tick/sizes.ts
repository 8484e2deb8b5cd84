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
interface PendingCount extends CounterName {
  gen: number;
  count: number;
}

/**
 * Values by organization, then cohort code, then a number (the partition; for a tick's deltas, the generation).
 * Numbers below the organization: a lookup builds no key string (a tick looks counters up for every membership
 * change of every event).
 */
class CounterTable<V> {
  private readonly orgs = new Map<string, Map<number, Map<number, V>>>();

  get(org: string, code: number, partition: number): V | undefined {
    return this.orgs.get(org)?.get(code)?.get(partition);
  }

  /** The cohort's values by the third key, made empty when missing. */
  row(org: string, code: number): Map<number, V> {
    let codes = this.orgs.get(org);
    if (codes === undefined) this.orgs.set(org, (codes = new Map()));
    let partitions = codes.get(code);
    if (partitions === undefined) codes.set(code, (partitions = new Map()));
    return partitions;
  }

  /** The cohort's values by the third key, if any. */
  rowIf(org: string, code: number): Map<number, V> | undefined {
    return this.orgs.get(org)?.get(code);
  }

  forEach(visit: (value: V, org: string, code: number, partition: number) => void): void {
    for (const [org, codes] of this.orgs) for (const [code, partitions] of codes) for (const [partition, value] of partitions) visit(value, org, code, partition);
  }

  clear(): void {
    this.orgs.clear();
  }
}

/** Counts of one store batch not written yet, by counter, in the order first counted (AudienceSizes.count, then batchOps). */
export class PendingCounts {
  readonly list: PendingCount[] = [];
  private readonly index = new CounterTable<PendingCount>();

  get size(): number {
    return this.list.length;
  }

  get(org: string, code: number, partition: number): PendingCount | undefined {
    return this.index.get(org, code, partition);
  }

  set(org: string, code: number, partition: number, gen: number, count: number): void {
    const known = this.index.get(org, code, partition);
    if (known !== undefined) {
      known.gen = gen;
      known.count = count;
      return;
    }
    const entry = { org, code, partition, gen, count };
    this.index.row(org, code).set(partition, entry);
    this.list.push(entry);
  }
}

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

/** One (org, code, generation)'s change of members in a tick. */
interface SizeDelta {
  readonly org: string;
  readonly code: number;
  readonly gen: number;
  delta: number;
  /** The same cohort's delta in another generation (rare: a cohort redefined while its users were moving). */
  readonly other: SizeDelta | undefined;
}

/** A change of membership counts for one partition's tick: (org, code, generation) -> delta. */
export class SizeDeltas {
  /** In the order first added. */
  readonly deltas: SizeDelta[] = [];
  /**
   * The same deltas by organization and code, the generations of a code chained (`other`): one Map per organization
   * and none per cohort, as a tick builds one of these per partition (a Map per cohort was ~2 % of the main thread's
   * allocations under the ingestion benchmark's load).
   */
  private readonly index = new Map<string, Map<number, SizeDelta>>();

  add(org: string, code: number, gen: number, delta: number): void {
    let codes = this.index.get(org);
    if (codes === undefined) this.index.set(org, (codes = new Map()));
    const first = codes.get(code);
    for (let known = first; known !== undefined; known = known.other) {
      if (known.gen === gen) {
        known.delta += delta;
        return;
      }
    }
    const entry: SizeDelta = { org, code, gen, delta, other: first };
    codes.set(code, entry);
    this.deltas.push(entry);
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
  /** org -> code -> partition -> count. */
  private readonly counters = new CounterTable<PartitionCount>();
  /** The journal's entries in the store: numbers [first, next). */
  private first = 0;
  private next = 0;
  /** The counters changed by the journal's entries: what the next fold writes into the base. */
  private readonly journaled = new CounterTable<true>();

  constructor(readonly foldEvery: number = FOLD_EVERY) {}

  /** Loads every stored counter: one scan of the base `sz!`, then one of the journal `szj!` in order. */
  static async load(store: Store, foldEvery?: number): Promise<AudienceSizes> {
    const sizes = new AudienceSizes(foldEvery);
    for await (const [storeKey, value] of store.iterate<StoredCount>({ gte: SIZES_PREFIX, lt: prefixEnd(SIZES_PREFIX) })) {
      const parsed = parseSizeKey(storeKey);
      if (parsed === undefined) continue;
      const count = typeof value === 'number' ? { gen: 0, count: value } : Array.isArray(value) ? { gen: Number(value[0]), count: Number(value[1]) } : undefined;
      if (count === undefined || !Number.isFinite(count.gen) || !Number.isFinite(count.count)) continue;
      sizes.counters.row(parsed.org, parsed.code).set(parsed.partition, count);
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
          sizes.counters.row(org, code as number).set(partition as number, { gen: gen as number, count: count as number });
          sizes.journaled.row(org, code as number).set(partition as number, true);
        }
      }
    }
    sizes.first = first ?? 0;
    return sizes;
  }

  /** The exact total over partitions of the counters of generation `gen` (0 for a cohort nobody entered). */
  total(org: string, code: number, gen: number): number {
    const partitions = this.counters.rowIf(org, code);
    if (partitions === undefined) return 0;
    let total = 0;
    for (const count of partitions.values()) if (count.gen === gen) total += count.count;
    return total;
  }

  /** Every counter: what a cluster node publishes for the partitions it owns (issue 15). */
  all(): Iterable<SizeCounter> {
    const out: SizeCounter[] = [];
    this.counters.forEach(({ gen, count }, org, code, partition) => out.push({ org, code, partition, gen, count }));
    return out;
  }

  /** The cohort's counter in each partition (a cluster node sums those of its own partitions, issue 15). */
  countsOf(org: string, code: number): ReadonlyMap<number, { readonly gen: number; readonly count: number }> {
    return this.counters.rowIf(org, code) ?? NO_COUNTS;
  }

  /**
   * Counts the partition's counters after `deltas` on in `pending` (nothing changes in memory yet): on top of the
   * counts the groups before this one in the same store batch left there (tick/writer.ts), or else the committed ones.
   */
  count(partition: number, deltas: SizeDeltas, pending: PendingCounts): void {
    for (const { org, code, gen, delta } of deltas.deltas) {
      const current = pending.get(org, code, partition) ?? this.counters.get(org, code, partition) ?? ZERO;
      const applied = applyDelta(current, gen, delta);
      if (applied === current) continue;
      pending.set(org, code, partition, applied.gen, applied.count);
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
      for (const { org, code, partition, gen, count } of pending.list) {
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
          for (const { org, code, partition } of pending.list) this.journaled.row(org, code).set(partition, true);
        },
      };
    }
    const ops: BatchOp[] = [];
    const put = (org: string, code: number, partition: number, count: PartitionCount): void => {
      ops.push({ type: 'put', key: sizeKey(org, code, partition), value: [count.gen, count.count] });
    };
    for (const counter of pending.list) put(counter.org, counter.code, counter.partition, counter);
    this.journaled.forEach((_, org, code, partition) => {
      if (pending.get(org, code, partition) === undefined) put(org, code, partition, this.counters.get(org, code, partition) ?? ZERO);
    });
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
    for (const { org, code, gen, delta } of deltas.deltas) {
      const partitions = this.counters.row(org, code);
      partitions.set(partition, applyDelta(partitions.get(partition) ?? ZERO, gen, delta));
    }
  }
}

const ZERO: PartitionCount = { gen: 0, count: 0 };

/** A newer generation restarts the count at 0; a delta of an older generation is dropped (its tick was stale). */
function applyDelta(current: PartitionCount, gen: number, delta: number): PartitionCount {
  if (gen < current.gen) return current;
  if (gen > current.gen) return { gen, count: delta };
  if (delta === 0) return current;
  return { gen, count: current.count + delta };
}

