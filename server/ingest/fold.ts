// The background folder of users' single event records into blocks (server/domain/events/blocks.ts, fold.ts): the
// tick asks for a fold of a user's latest events each time the user's event count passes a multiple of `every`
// (tick/ops.ts), after its batch is written; the folder works through the requests in store batches of a few users,
// one batch at a time, never two folds of one user at once. A fold is a re-layout only (the same records under fewer
// keys): one lost to a crash or a full queue leaves those records single, read as before, just one value each.

import type { Store } from '../store/contract.js';
import { foldOps, type FoldRequest } from '../domain/events/fold.js';
import { userKey } from './state/cache.js';

/** Requests waiting beyond this are dropped (their records stay single). */
const MAX_QUEUED = 100_000;

export class EventFolder {
  private queue: FoldRequest[] = [];
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Records folded into blocks, and requests dropped (metrics, the bench). */
  folded = 0;
  dropped = 0;

  constructor(
    private readonly store: Store,
    /** Fold once a user's event count passes each multiple of this (0: never). */
    readonly every: number,
    private readonly log: (line: string) => void,
    /** Users folded per store batch. */
    private readonly batchUsers = 32,
  ) {}

  /** Whether a user whose event count went from `before` to `after` in a tick is due a fold, and of how many events. */
  due(before: number, after: number): number {
    if (this.every <= 0 || Math.floor(before / this.every) === Math.floor(after / this.every)) return 0;
    return after - Math.floor(before / this.every) * this.every;
  }

  enqueue(request: FoldRequest): void {
    if (this.stopped) return;
    if (this.queue.length >= MAX_QUEUED) {
      this.dropped++;
      return;
    }
    this.queue.push(request);
    this.kick();
  }

  /** Resolves once no fold is queued or running (the bench, tests). */
  async idle(): Promise<void> {
    while (this.running !== undefined) await this.running;
  }

  /** Stops taking requests and drops the queued ones; `idle` then resolves once the running batch is written. */
  stop(): void {
    this.stopped = true;
    this.queue = [];
  }

  private kick(): void {
    if (this.running !== undefined || this.stopped) return;
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.stopped) {
      // At most one request per user in a batch: two folds of a user could rewrite the same run.
      const take: FoldRequest[] = [];
      const users = new Set<string>();
      const later: FoldRequest[] = [];
      let next = 0;
      for (; next < this.queue.length && take.length < this.batchUsers; next++) {
        const request = this.queue[next] as FoldRequest;
        const key = userKey(request.org, request.user);
        if (users.has(key)) later.push(request);
        else {
          users.add(key);
          take.push(request);
        }
      }
      this.queue = later.length === 0 ? this.queue.slice(next) : later.concat(this.queue.slice(next));
      try {
        const parts = await Promise.all(take.map((request) => foldOps(this.store, request)));
        const ops = parts.flatMap((part) => part.ops);
        if (ops.length > 0) await this.store.batch(ops);
        for (const part of parts) this.folded += part.folded;
      } catch (error) {
        if (!this.stopped) this.log(`ingest: folding events into blocks failed (they stay single): ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}
