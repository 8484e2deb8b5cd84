// Partition ownership in a cluster (issue 15): each partition has at most one owner at a time, claimed through a
// lease in a JetStream KV bucket whose entries expire (`ttl`). The lease's revision is the fencing token.
//
// - Who should own what: rendezvous hashing bounded by capacity over the live nodes (the `nodes` bucket, where every
//   node keeps a heartbeat entry that expires with it), so every node computes the same balanced assignment and a
//   node joining or leaving moves few partitions. A released lease (deleted) starts a round at once on every node.
// - Claim: `create` (refused while another node holds the key). Keep: `update` with the last revision every
//   `ttl / 4` (compare-and-set: a lease taken over in between fails the update). Release (no longer this node's
//   share): fence first (onLoss), then delete with the revision so that only this lease is deleted.
// - Self-fencing: a lease not refreshed successfully for 3/4 of the ttl is given up locally (onLoss) before it can
//   expire and be taken by another node; the same happens when an update is refused (someone else owns it).

import { createHash } from 'node:crypto';
import { KvWatchInclude, type KV } from '@nats-io/kv';
import type { JetStreamManager } from '@nats-io/jetstream';

export interface LeaseEvents {
  /** This node now owns `partition`; `token` (the lease revision) fences its writes. */
  onGain(partition: number, token: number): void | Promise<void>;
  /** This node must stop acting for `partition` now (released, taken over, or not refreshed in time). */
  onLoss(partition: number): void | Promise<void>;
}

export interface LeaseOptions extends LeaseEvents {
  readonly leases: KV;
  readonly nodes: KV;
  /** The `nodes` bucket's name and a manager to list its keys (see liveNodes). */
  readonly nodesBucket: string;
  readonly jsm: JetStreamManager;
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

/** A node's rendezvous weight for a partition. */
const weight = (partition: number, node: string): string => createHash('sha256').update(`${partition}|${node}`).digest('hex');

/**
 * Who should own each partition: rendezvous hashing bounded by capacity. Partitions, in order, go to the node of
 * highest weight among those holding fewer than floor(partitions / nodes) (the first few reaching it may take one more), so shares differ by at most one (plain
 * rendezvous gave 12, 3 and 1 of 16 to three nodes here) while a join or a departure still moves few partitions.
 * Every node computes the same answer from the same live set.
 */
export function assignment(partitions: number, nodes: readonly string[]): string[] {
  const live = [...new Set(nodes)].sort();
  if (live.length === 0) return [];
  // Every node may hold `floor` partitions; `extra` of them one more.
  const floor = Math.floor(partitions / live.length);
  let extra = partitions % live.length;
  const load = new Map(live.map((node) => [node, 0]));
  const out: string[] = [];
  for (let partition = 0; partition < partitions; partition++) {
    const ranked = live.map((node) => ({ node, w: weight(partition, node) })).sort((a, b) => (a.w < b.w ? 1 : a.w > b.w ? -1 : 0));
    const room = ({ node }: { node: string }) => (load.get(node) as number) < floor || ((load.get(node) as number) === floor && extra > 0);
    const chosen = (ranked.find(room) ?? ranked[0]) as { node: string };
    const held = load.get(chosen.node) as number;
    if (held === floor) extra--;
    load.set(chosen.node, held + 1);
    out.push(chosen.node);
  }
  return out;
}

/** The lease key of a partition (its value is the owner's node id). */
export { leaseKey };

export class PartitionLeases {
  private readonly held = new Map<number, Held>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private stopWatch: (() => void) | undefined;
  private again = false;
  private readonly now: () => number;

  constructor(private readonly options: LeaseOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The partitions this node owns now, with their fencing tokens. */
  owned(): ReadonlyMap<number, number> {
    return new Map([...this.held].map(([p, h]) => [p, h.revision]));
  }

  /** Registers the node and runs the first balancing round; then one every ttl / 4, and one when a lease is released. */
  async start(): Promise<void> {
    await this.round();
    this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.options.ttlMs / 4)));
    void this.watchReleases();
  }

  /** A lease deleted by a node leaving gracefully is claimed at once instead of at the next round. */
  private async watchReleases(): Promise<void> {
    while (!this.stopped) {
      try {
        const watch = await this.options.leases.watch({ include: KvWatchInclude.UpdatesOnly });
        this.stopWatch = () => watch.stop();
        for await (const entry of watch) {
          if (entry.operation !== 'PUT') void this.tick();
        }
      } catch {
        // NATS unavailable for a moment: the timer's rounds go on; watch again below.
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** One balancing round now (also what the timer runs); rounds never overlap. */
  tick(): Promise<void> {
    if (this.running !== undefined) {
      // A release seen during a round is acted on by one more round right after it, not lost in the running one.
      this.again = true;
      return this.running;
    }
    this.running = this.round()
      .catch((error: unknown) => this.options.log?.(`leases: a round failed: ${String(error)}`))
      .finally(() => {
        this.running = undefined;
        if (this.again && !this.stopped) {
          this.again = false;
          void this.tick();
        }
      });
    return this.running;
  }

  /** Stops refreshing; with `release`, fences and deletes every lease so the others take over at once. */
  async stop(release = true): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.stopWatch?.();
    if (release) {
      // Leave the live set first: the rounds the released leases start elsewhere then give them to the others. What
      // is held is released without waiting for a round in flight (it may be slow while partitions start); what that
      // round still claims is released after it.
      // A purge of the heartbeat's subject, not a KV delete: a delete leaves a marker on the subject, which the
      // others' liveNodes() would list until it expires (the handover then waited for the lease time).
      const bucket = this.options.nodesBucket;
      await this.options.jsm.streams.purge(`KV_${bucket}`, { filter: `$KV.${bucket}.${this.options.node}` }).catch(() => undefined);
      await this.releaseAll();
    }
    await this.running;
    if (release) await this.releaseAll();
  }

  private async releaseAll(): Promise<void> {
    await Promise.all(
      [...this.held].map(async ([partition, held]) => {
        await this.lose(partition);
        await this.options.leases.delete(leaseKey(partition), { previousSeq: held.revision }).catch(() => undefined);
      }),
    );
  }

  private async lose(partition: number): Promise<void> {
    if (!this.held.delete(partition)) return;
    await this.options.onLoss(partition);
  }

  /**
   * The nodes whose heartbeat has not expired, from the bucket stream's subjects (one request). Not `KV.keys()`: it
   * counts the entries when it starts and waits for that many, so a heartbeat expiring in between (under load) left
   * it waiting for an idle heartbeat, about 30 s: rounds stalled and leases expired (seen in the chaos runs and once
   * in CI).
   */
  async liveNodes(): Promise<string[]> {
    const bucket = this.options.nodesBucket;
    const prefix = `$KV.${bucket}.`;
    const info = await this.options.jsm.streams.info(`KV_${bucket}`, { subjects_filter: `${prefix}>` });
    return Object.keys(info.state.subjects ?? {})
      .map((subject) => subject.slice(prefix.length))
      .sort();
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
          // A refresh whose answer was lost (NATS failing over) landed anyway: the entry still names this node at a
          // later revision, written by nobody else. Adopted, it is refreshed at the next round.
          const entry = await leases.get(leaseKey(partition)).catch(() => null);
          if (entry !== null && entry.operation === 'PUT' && entry.string() === node && entry.revision > held.revision) {
            held.revision = entry.revision;
            return;
          }
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
    const wanted = assignment(partitions, live);
    await Promise.all(
      Array.from({ length: partitions }, async (_, partition) => {
        if (this.stopped) return;
        const mine = wanted[partition] === node;
        const held = this.held.get(partition);
        if (mine && held === undefined) {
          let revision: number;
          try {
            revision = await leases.create(leaseKey(partition), node);
          } catch {
            return; // held by another node until it releases it or its lease expires
          }
          this.held.set(partition, { revision, refreshedAt: this.now() });
          try {
            await this.options.onGain(partition, revision);
          } catch (error) {
            // A partition this node cannot start acting for is given back at once rather than held dead.
            this.options.log?.(`leases: starting partition ${partition} failed (${String(error)}); releasing it`);
            await this.lose(partition);
            await leases.delete(leaseKey(partition), { previousSeq: revision }).catch(() => undefined);
          }
        } else if (!mine && held !== undefined) {
          await this.lose(partition);
          await leases.delete(leaseKey(partition), { previousSeq: held.revision }).catch(() => undefined);
        }
      }),
    );
  }
}
