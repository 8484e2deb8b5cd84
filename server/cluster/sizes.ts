// Audience sizes across a cluster (D19, issue 15): each owner keeps the live counters of its partitions (the
// pipeline's `sz!` counters, [generation, count] per cohort and partition) and publishes them to the KV bucket
// `audience_sizes` every PUBLISH_MS when they changed; every node mirrors the bucket (a watch) and answers a
// cohort's size as the sum over partitions of the counters of the cohort's current generation, its own partitions'
// from memory, the others' from the mirror. Sizes are therefore exact on the owner and, elsewhere, behind by at most
// the publish interval plus the watch's delivery.

import type { KV } from '@nats-io/kv';
import type { IngestPipeline } from '../ingest/types.js';
import { retrying } from './nats.js';

export const SIZES_BUCKET = 'audience_sizes';
const PUBLISH_MS = 200;

interface Counter {
  readonly gen: number;
  readonly count: number;
}

/** `{org}.{code}.{partition}`: org ids are UUIDs and codes integers, both valid in a KV key. */
const counterKey = (org: string, code: number, partition: number): string => `${org}.${code}.${partition}`;

export class ClusterSizes {
  /** Every published counter: (org, code) -> partition -> counter. */
  private readonly mirror = new Map<string, Map<number, Counter>>();
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
        const id = `${org}\u0000${code}`;
        let partitions = this.mirror.get(id);
        if (partitions === undefined) {
          partitions = new Map();
          this.mirror.set(id, partitions);
        }
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
