// Live audience sizes (D19): per (org, cohort code) a counter per partition, stored as `sz!` and kept in memory with
// their total. Only a partition's own tick changes its counters, so ticks of different partitions never race.

import type { BatchOp, Store } from '../store/contract.js';
import { prefixEnd } from '../store/contract.js';
import { SIZES_PREFIX, parseSizeKey, sizeKey } from './keys.js';

interface Counter {
  total: number;
  readonly byPartition: Map<number, number>;
}

/** A change of membership counts for one partition's tick: (org, code) -> delta. */
export class SizeDeltas {
  readonly deltas = new Map<string, { org: string; code: number; delta: number }>();

  add(org: string, code: number, delta: number): void {
    const id = counterId(org, code);
    const known = this.deltas.get(id);
    if (known === undefined) this.deltas.set(id, { org, code, delta });
    else known.delta += delta;
  }

  /** Adds +1 for codes only in `after`, -1 for codes only in `before` (both sorted ascending). */
  addDifference(org: string, before: readonly number[], after: readonly number[]): void {
    let i = 0;
    let j = 0;
    while (i < before.length || j < after.length) {
      const b = before[i];
      const a = after[j];
      if (a === undefined || (b !== undefined && b < a)) {
        this.add(org, b as number, -1);
        i++;
      } else if (b === undefined || a < b) {
        this.add(org, a, 1);
        j++;
      } else {
        i++;
        j++;
      }
    }
  }
}

export class AudienceSizes {
  private readonly counters = new Map<string, Counter>();

  /** Loads every stored counter (one scan of `sz!`). */
  static async load(store: Store): Promise<AudienceSizes> {
    const sizes = new AudienceSizes();
    for await (const [storeKey, value] of store.iterate<number>({ gte: SIZES_PREFIX, lt: prefixEnd(SIZES_PREFIX) })) {
      const parsed = parseSizeKey(storeKey);
      if (parsed === undefined || typeof value !== 'number') continue;
      const counter = sizes.counterOf(parsed.org, parsed.code);
      counter.byPartition.set(parsed.partition, value);
      counter.total += value;
    }
    return sizes;
  }

  /** The exact total over partitions (0 for a cohort nobody entered). */
  total(org: string, code: number): number {
    return this.counters.get(counterId(org, code))?.total ?? 0;
  }

  /** The writes that store the partition's counters after `deltas` (nothing changes in memory yet). */
  opsFor(partition: number, deltas: SizeDeltas): BatchOp[] {
    const ops: BatchOp[] = [];
    for (const { org, code, delta } of deltas.deltas.values()) {
      if (delta === 0) continue;
      const current = this.counters.get(counterId(org, code))?.byPartition.get(partition) ?? 0;
      ops.push({ type: 'put', key: sizeKey(org, code, partition), value: current + delta });
    }
    return ops;
  }

  /** Applies a committed tick's deltas in memory (before its requests are answered: D19 counts every ack). */
  apply(partition: number, deltas: SizeDeltas): void {
    for (const { org, code, delta } of deltas.deltas.values()) {
      if (delta === 0) continue;
      const counter = this.counterOf(org, code);
      counter.byPartition.set(partition, (counter.byPartition.get(partition) ?? 0) + delta);
      counter.total += delta;
    }
  }

  private counterOf(org: string, code: number): Counter {
    const id = counterId(org, code);
    let counter = this.counters.get(id);
    if (counter === undefined) {
      counter = { total: 0, byPartition: new Map() };
      this.counters.set(id, counter);
    }
    return counter;
  }
}

function counterId(org: string, code: number): string {
  return `${org}\u0000${code}`;
}
