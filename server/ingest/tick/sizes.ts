// Live audience sizes (D19): per (org, cohort code) a counter per partition, stored as `sz!` and kept in memory.
// Each counter is tagged with the cohort's generation (server/backfill/README.md): a cohort created, changed or re-enabled starts
// a new generation whose count starts at 0 and is rebuilt by the catch-up of every user; counts of older
// generations are ignored. Only a partition's own tick changes its counters, so ticks never race.

import type { BatchOp, Store } from '../../store/contract.js';
import { prefixEnd } from '../../store/contract.js';
import { SIZES_PREFIX, parseSizeKey, sizeKey } from '../keys.js';

/** A partition's counter of one cohort: the generation it counts and the number of members. */
interface PartitionCount {
  readonly gen: number;
  readonly count: number;
}

/** Counts of one store batch not committed yet, by counter and partition (AudienceSizes.opsFor). */
export type PendingCounts = Map<string, PartitionCount>;

/** The stored form `[gen, count]`; a bare number is a counter written before generations (generation 0). */
type StoredCount = number | readonly [number, number];

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

  /** Loads every stored counter (one scan of `sz!`). */
  static async load(store: Store): Promise<AudienceSizes> {
    const sizes = new AudienceSizes();
    for await (const [storeKey, value] of store.iterate<StoredCount>({ gte: SIZES_PREFIX, lt: prefixEnd(SIZES_PREFIX) })) {
      const parsed = parseSizeKey(storeKey);
      if (parsed === undefined) continue;
      const count = typeof value === 'number' ? { gen: 0, count: value } : Array.isArray(value) ? { gen: Number(value[0]), count: Number(value[1]) } : undefined;
      if (count === undefined || !Number.isFinite(count.gen) || !Number.isFinite(count.count)) continue;
      sizes.partitionsOf(parsed.org, parsed.code).set(parsed.partition, count);
    }
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
   * The writes that store the partition's counters after `deltas` (nothing changes in memory yet). `pending` holds the
   * counts left by the groups written before this one in the same store batch (tick/writer.ts): they are counted on,
   * and this group's counts are recorded there for the groups after it.
   */
  opsFor(partition: number, deltas: SizeDeltas, pending: PendingCounts = new Map()): BatchOp[] {
    const written = new Map<string, { org: string; code: number; count: PartitionCount }>();
    for (const { org, code, gen, delta } of deltas.deltas.values()) {
      const id = counterId(org, code);
      const at = `${id}\u0000${partition}`;
      const current = pending.get(at) ?? this.counters.get(id)?.get(partition) ?? { gen: 0, count: 0 };
      const applied = applyDelta(current, gen, delta);
      if (applied === current) continue;
      pending.set(at, applied);
      written.set(id, { org, code, count: applied });
    }
    return [...written.values()].map(({ org, code, count }) => ({ type: 'put' as const, key: sizeKey(org, code, partition), value: [count.gen, count.count] }));
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
