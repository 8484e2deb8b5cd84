// Partition ownership in a cluster (issue 15): each partition has at most one owner at a time, claimed through a
// lease in a JetStream KV bucket whose entries expire (`ttl`). The lease's revision is the fencing token.
//
// - Who should own what: rendezvous hashing of each partition over the live nodes (the `nodes` bucket, where every
//   node keeps a heartbeat entry that expires with it), so every node computes the same assignment and a node joining
//   or leaving moves only its share.
// - Claim: `create` (refused while another node holds the key). Keep: `update` with the last revision every
//   `ttl / 4` (compare-and-set: a lease taken over in between fails the update). Release (no longer this node's
//   share): fence first (onLoss), then delete with the revision so that only this lease is deleted.
// - Self-fencing: a lease not refreshed successfully for 3/4 of the ttl is given up locally (onLoss) before it can
//   expire and be taken by another node; the same happens when an update is refused (someone else owns it).

import { createHash } from 'node:crypto';
import type { KV } from '@nats-io/kv';

export interface LeaseEvents {
  /** This node now owns `partition`; `token` (the lease revision) fences its writes. */
  onGain(partition: number, token: number): void | Promise<void>;
  /** This node must stop acting for `partition` now (released, taken over, or not refreshed in time). */
  onLoss(partition: number): void | Promise<void>;
}

export interface LeaseOptions extends LeaseEvents {
  readonly leases: KV;
  readonly nodes: KV;
  readonly node: string;
  readonly partitions: number;
  /** The buckets' entry ttl in ms (both buckets are created with it). */
  readonly ttlMs: number;
  /** What the node's heartbeat entry says of it besides the time (a cluster node: its URL, for forwarded reads). */
  readonly info?: Readonly<Record<string, unknown>>;
  readonly now?: () => number;
  readonly log?: (line: string) => void;
}

interface Held {
  revision: number;
  refreshedAt: number;
}

const leaseKey = (partition: number): string => `p${partition}`;

/** Rendezvous (highest random weight) owner of a partition among the live nodes. */
export function desiredOwner(partition: number, nodes: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestWeight = '';
  for (const node of nodes) {
    const weight = createHash('sha256').update(`${partition}|${node}`).digest('hex');
    if (best === undefined || weight > bestWeight) {
      best = node;
      bestWeight = weight;
    }
  }
  return best;
}

/** The lease key of a partition (its value is the owner's node id). */
export { leaseKey };

export class PartitionLeases {
  private readonly held = new Map<number, Held>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly options: LeaseOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The partitions this node owns now, with their fencing tokens. */
  owned(): ReadonlyMap<number, number> {
    return new Map([...this.held].map(([p, h]) => [p, h.revision]));
  }

  /** Registers the node and runs the first balancing round; then one every ttl / 4. */
  async start(): Promise<void> {
    await this.round();
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.options.ttlMs / 4)));
  }

  /** One balancing round now (also what the timer runs); rounds never overlap. */
  tick(): Promise<void> {
    this.running ??= this.round()
      .catch((error: unknown) => this.options.log?.(`leases: a round failed: ${String(error)}`))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops refreshing; with `release`, fences and deletes every lease so the others take over at once. */
  async stop(release = true): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.running;
    if (!release) return;
    for (const [partition, held] of [...this.held]) {
      await this.lose(partition);
      await this.options.leases.delete(leaseKey(partition), { previousSeq: held.revision }).catch(() => undefined);
    }
    await this.options.nodes.delete(this.options.node).catch(() => undefined);
  }

  private async lose(partition: number): Promise<void> {
    if (!this.held.delete(partition)) return;
    await this.options.onLoss(partition);
  }

  private async liveNodes(): Promise<string[]> {
    const names: string[] = [];
    for await (const key of await this.options.nodes.keys()) names.push(key);
    return names.sort();
  }

  private async round(): Promise<void> {
    if (this.stopped) return;
    const { leases, nodes, node, partitions, ttlMs } = this.options;

    // Keep what is held first (a slow step below must not delay a refresh): refresh, or fence when the refresh is
    // refused or too late.
    await Promise.all(
      [...this.held].map(async ([partition, held]) => {
        try {
          held.revision = await leases.update(leaseKey(partition), node, held.revision);
          held.refreshedAt = this.now();
        } catch (error) {
          this.options.log?.(`leases: partition ${partition} could not be refreshed (${String(error)}); fencing it`);
          await this.lose(partition);
        }
      }),
    );
    for (const [partition, held] of [...this.held]) {
      if (this.now() - held.refreshedAt > (ttlMs * 3) / 4) await this.lose(partition);
    }

    await nodes.put(node, JSON.stringify({ ...this.options.info, at: this.now() }));
    const live = await this.liveNodes();
    if (!live.includes(node)) live.push(node);
    await Promise.all(
      Array.from({ length: partitions }, async (_, partition) => {
        if (this.stopped) return;
        const mine = desiredOwner(partition, live) === node;
        const held = this.held.get(partition);
        if (mine && held === undefined) {
          let revision: number;
          try {
            revision = await leases.create(leaseKey(partition), node);
          } catch {
            return; // held by another node until it releases it or its lease expires
          }
          this.held.set(partition, { revision, refreshedAt: this.now() });
          await this.options.onGain(partition, revision);
        } else if (!mine && held !== undefined) {
          await this.lose(partition);
          await leases.delete(leaseKey(partition), { previousSeq: held.revision }).catch(() => undefined);
        }
      }),
    );
  }
}
