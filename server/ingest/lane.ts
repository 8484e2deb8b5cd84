// A partition's lane: its FIFO of queued items (appends, re-evaluations, reads), the next log sequence, the
// snapshots waiting to be written with its next batch, and whether a tick is running (at most one at a time).

import type { AppendRequest, AppendResult } from './types.js';

export interface AppendItem {
  readonly kind: 'append';
  readonly request: AppendRequest;
  readonly resolve: (result: AppendResult) => void;
  readonly reject: (error: unknown) => void;
}

export interface EvaluateItem {
  readonly kind: 'evaluate';
  readonly org: string;
  readonly user: string;
  /** E20: the time the re-evaluation was asked for. */
  readonly now: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export interface ReadItem {
  readonly kind: 'read';
  readonly org: string;
  readonly user: string;
  readonly resolve: (memberships: readonly number[]) => void;
  readonly reject: (error: unknown) => void;
}

export type LaneItem = AppendItem | EvaluateItem | ReadItem;

export function orgOf(item: LaneItem): string {
  return item.kind === 'append' ? item.request.org : item.org;
}

export function userOf(item: LaneItem): string {
  return item.kind === 'append' ? item.request.user : item.user;
}

/** A user's state to snapshot with the lane's next batch (evicted from the cache, or dirty for too long). */
export interface PendingSnapshot {
  readonly org: string;
  readonly user: string;
  readonly seq: number;
  readonly bytes: Uint8Array;
}

export class Lane {
  queue: LaneItem[] = [];
  /** Events (and other items, one each) in the queue: the backpressure measure. */
  queued = 0;
  running = false;
  kicked = false;
  /** Pending snapshots are waiting and no tick is coming for other reasons. */
  flushWanted = false;
  readonly pendingSnapshots = new Map<string, PendingSnapshot>();
  private waiters: (() => void)[] = [];

  constructor(
    readonly partition: number,
    /** The last sequence written to the partition's log. */
    public lastSeq: number,
  ) {}

  get idle(): boolean {
    return !this.running && !this.kicked && this.queue.length === 0;
  }

  /** Resolves once nothing is queued or running. */
  whenIdle(): Promise<void> {
    if (this.idle) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  notifyIfIdle(): void {
    if (!this.idle) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
