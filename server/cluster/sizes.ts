// Audience sizes across a cluster (D19, issue 15): each owner keeps the live counters of its partitions (the
// pipeline's `sz!` counters, [generation, count] per cohort and partition) and publishes them to the KV bucket
// `audience_sizes` every PUBLISH_MS when they changed; every node mirrors the bucket (a watch) and answers a
// cohort's size as the sum over partitions of the counters of the cohort's current generation, its own partitions'
// from memory, the others' from the mirror. Sizes are therefore exact on the owner and, elsewhere, behind by at most
// the publish interval plus the watch's delivery.
// Offline cohorts (D20) likewise: each node computes the users of the partitions it owns and publishes one count per
// partition (`{org}.o{code}.{partition}`: [size, users, computed at]); the cohort's size is their sum, and its time
// of computation the oldest of the partitions' (a computation that has not reached every node yet shows as such).

import type { KV } from '@nats-io/kv';
import type { IngestPipeline } from '../ingest/types.js';
import type { OfflineResult } from '../backfill/index.js';
import { retrying } from './nats.js';

export const SIZES_BUCKET = 'audience_sizes';
const PUBLISH_MS = 200;
const OFFLINE_PUBLISH_MS = 10_000;

interface Counter {
  readonly gen: number;
  readonly count: number;
}

/** `{org}.{code}.{partition}`: org ids are UUIDs and codes integers, both valid in a KV key. */
const counterKey = (org: string, code: number, partition: number): string => `${org}.${code}.${partition}`;
const offlineKey = (org: string, code: number, partition: number): string => `${org}.o${code}.${partition}`;

interface OfflineCount {
  readonly size: number;
  readonly users: number;
  readonly at: number;
}

export class ClusterSizes {
  /** Every published counter: (org, code) -> partition -> counter. */
  private readonly mirror = new Map<string, Map<number, Counter>>();
  /** Every published offline count: (org, code) -> partition -> count. */
  private readonly offline = new Map<string, Map<number, OfflineCount>>();
  private timer: NodeJS.Timeout | undefined;
  private watching: Promise<void> | undefined;
  private stopWatch: (() => void) | undefined;
  private publishing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly kv: KV,
    private readonly pipeline: IngestPipeline,
    private readonly owned: () => readonly number[],
    private readonly report: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    await this.watch();
    this.timer = setInterval(() => {
      this.publishing ??= this.publish().finally(() => (this.publishing = undefined));
    }, PUBLISH_MS);
    this.timer.unref();
  }

  /** Mirrors the bucket; a watch that ends (a restarted NATS server) is started again. */
  private async watch(): Promise<void> {
    const watch = await this.kv.watch({ key: '>' });
    this.stopWatch = () => watch.stop();
    this.watching = (async () => {
      for await (const entry of watch) {
        const [org, code, partition] = entry.key.split('.');
        if (org === undefined || code === undefined || partition === undefined) continue;
        if (code.startsWith('o')) {
          const partitions = mapOf(this.offline, `${org}\u0000${code.slice(1)}`);
          if (entry.operation !== 'PUT') partitions.delete(Number(partition));
          else {
            const [size, users, at] = entry.json<[number, number, number]>();
            partitions.set(Number(partition), { size, users, at });
          }
          continue;
        }
        const partitions = mapOf(this.mirror, `${org}\u0000${code}`);
        if (entry.operation !== 'PUT') partitions.delete(Number(partition));
        else {
          const [gen, count] = entry.json<[number, number]>();
          partitions.set(Number(partition), { gen, count });
        }
      }
    })()
      .catch((error: unknown) => this.report(`cluster: the sizes watch failed: ${String(error)}`))
      .then(() => {
        if (this.stopped) return;
        const again = () => retrying('watching the sizes again', () => this.watch(), 3_600_000);
        setTimeout(() => void again().catch((error: unknown) => this.report(String(error))), 250).unref();
      });
  }

  /** The cohort's size: this node's partitions from memory, every other partition from the mirror. */
  total(org: string, code: number): number {
    const gen = this.pipeline.planInfo(org).gens.get(code);
    if (gen === undefined) return 0;
    const mine = new Set(this.owned());
    let total = 0;
    for (const [partition, counter] of this.pipeline.partitionSizes(org, code)) {
      if (mine.has(partition) && counter.gen === gen) total += counter.count;
    }
    for (const [partition, counter] of this.mirror.get(`${org}\u0000${code}`) ?? []) {
      if (!mine.has(partition) && counter.gen === gen) total += counter.count;
    }
    return total;
  }

  /** An offline cohort's last computed result over the cluster; undefined before any node published one. */
  offlineResult(org: string, code: number): OfflineResult | undefined {
    const partitions = this.offline.get(`${org}\u0000${code}`);
    if (partitions === undefined || partitions.size === 0) return undefined;
    let size = 0;
    let users = 0;
    let at = Number.MAX_SAFE_INTEGER;
    for (const count of partitions.values()) {
      size += count.size;
      users += count.users;
      at = Math.min(at, count.at);
    }
    return { size, users, computed_at: new Date(at).toISOString() };
  }

  /**
   * A computation's counts for the partitions this node computed. NATS unavailable is retried for OFFLINE_PUBLISH_MS
   * in all (not per partition: a stopping node waits for its computations, and must not wait minutes); then it
   * rejects, the computation is logged as failed, and the next one publishes again.
   */
  async publishOffline(org: string, code: number, counts: ReadonlyMap<number, { readonly size: number; readonly users: number }>, at: Date): Promise<void> {
    const left = new Map(counts);
    await retrying(
      'publishing an offline count',
      async () => {
        for (const [partition, count] of left) {
          await this.kv.put(offlineKey(org, code, partition), JSON.stringify([count.size, count.users, at.getTime()]));
          left.delete(partition);
        }
      },
      OFFLINE_PUBLISH_MS,
    );
  }

  /**
   * Publishes the counters of the owned partitions that differ from the bucket as mirrored (a partition taken back
   * from another node is published again even where its counter equals what this node published long ago).
   */
  async publish(): Promise<void> {
    const mine = new Set(this.owned());
    for (const { org, code, partition, gen, count } of this.pipeline.sizeCounters()) {
      if (!mine.has(partition)) continue;
      const known = this.mirror.get(`${org}\u0000${code}`)?.get(partition);
      if (known !== undefined && known.gen === gen && known.count === count) continue;
      try {
        await this.kv.put(counterKey(org, code, partition), JSON.stringify([gen, count]));
      } catch (error) {
        this.report(`cluster: publishing a size failed (retried): ${String(error)}`);
        return;
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.publishing;
    await this.publish();
    this.stopWatch?.();
    await this.watching;
  }
}

function mapOf<V>(maps: Map<string, Map<number, V>>, id: string): Map<number, V> {
  let map = maps.get(id);
  if (map === undefined) maps.set(id, (map = new Map()));
  return map;
}
