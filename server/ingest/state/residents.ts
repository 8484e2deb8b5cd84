// What the main thread still has to tell each partition owner about the states it keeps resident (worker/work.ts
// `Residents`), sent first in the owner's next task: states to encode for a write-behind snapshot (dirty for too
// long, evicted, or at close), states to forget (evicted, or run ahead of a batch that failed). The state cache
// (cache.ts) is the authority: an owner holds a user's state exactly while the cache has its entry, or an ask
// below still names it.

import type { SnapshotAsk } from '../worker/work.js';
import type { CachedUser } from './cache.js';
import { userKey } from './cache.js';

interface Ask {
  readonly entry: CachedUser;
  /** Encode the state (its snapshot is written with the batch of the group that carries the ask). */
  encode: boolean;
  /** Forget the state afterwards. */
  drop: boolean;
}

interface OwnerQueue {
  readonly asks: Map<string, Ask>;
  /** States no longer to be used (a failed batch computed past them): forgotten, never encoded. */
  readonly drops: Set<string>;
}

/** The asks one group carries to one owner, with the entries whose snapshots it writes. */
export interface TakenAsks {
  readonly drops: readonly string[];
  readonly snapshots: readonly SnapshotAsk[];
  /** One per snapshot ask: what its snapshot is stamped with. */
  readonly entries: readonly CachedUser[];
}

export class ResidentAsks {
  private readonly queues: OwnerQueue[];

  constructor(
    owners: number,
    private readonly ownerOf: (partition: number) => number,
  ) {
    this.queues = Array.from({ length: owners }, () => ({ asks: new Map(), drops: new Set() }));
  }

  /** True when some owner has asks waiting for a task. */
  get waiting(): boolean {
    return this.queues.some((queue) => queue.asks.size > 0 || queue.drops.size > 0);
  }

  /**
   * The entry's state, as last committed, leaves the cache (`drop`) or is snapshotted (`encode`, when dirty). The
   * user must be in no uncommitted group: its owner's state is then exactly the entry's.
   */
  ask(entry: CachedUser, options: { readonly encode: boolean; readonly drop: boolean }): void {
    const queue = this.queueOf(entry.partition);
    const key = userKey(entry.org, entry.user);
    const known = queue.asks.get(key);
    if (known !== undefined) {
      known.encode ||= options.encode;
      known.drop ||= options.drop;
      return;
    }
    if (!options.encode && !options.drop) return;
    queue.asks.set(key, { entry, encode: options.encode, drop: options.drop });
  }

  /** The owner's state of the user ran ahead of what was committed (a failed batch): forget it. */
  invalidate(partition: number, key: string): void {
    const queue = this.queueOf(partition);
    queue.asks.delete(key);
    queue.drops.add(key);
  }

  /**
   * A user wanted again whose state an ask still names (not sent yet): it stays resident (a pending snapshot is
   * still written). Answers its entry, or undefined when the owner's state is not to be used.
   */
  reclaim(partition: number, key: string): CachedUser | undefined {
    const queue = this.queueOf(partition);
    if (queue.drops.has(key)) return undefined;
    const ask = queue.asks.get(key);
    if (ask === undefined) return undefined;
    if (ask.encode) ask.drop = false;
    else queue.asks.delete(key);
    return ask.entry;
  }

  /** Everything waiting for the owner, now carried by a task. */
  take(owner: number): TakenAsks {
    const queue = this.queues[owner] as OwnerQueue;
    const drops = [...queue.drops];
    const snapshots: SnapshotAsk[] = [];
    const entries: CachedUser[] = [];
    for (const [key, ask] of queue.asks) {
      if (ask.encode) {
        snapshots.push({ key, drop: ask.drop });
        entries.push(ask.entry);
      } else drops.push(key);
    }
    queue.asks.clear();
    queue.drops.clear();
    return { drops, snapshots, entries };
  }

  /** The owner lost every state it held (its thread was replaced): nothing waiting for it makes sense any more. */
  clear(owner: number): void {
    const queue = this.queues[owner] as OwnerQueue;
    queue.asks.clear();
    queue.drops.clear();
  }

  private queueOf(partition: number): OwnerQueue {
    return this.queues[this.ownerOf(partition)] as OwnerQueue;
  }
}
