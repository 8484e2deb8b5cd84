// A partition's lane: its FIFO of queued items (appends, re-evaluations, reads), the background catch-ups of a
// backfill sweep (a few per tick, after the live items), the users parked while their long history is replayed off
// the lane (server/backfill/README.md), the next log sequence, and its ticks in flight (at most one building; others
// writing, each over users no other in-flight tick holds).

import type { AppendRequest, AppendResult } from '../types.js';
import type { HistoryChunk } from '../state/load.js';

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
  /** E20: the time the re-evaluation was asked for; D36: the deadline. */
  readonly now: number;
  /** D36: the deadline index entry this re-evaluation comes from (deleted in the same batch). */
  readonly due?: string;
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

/** A backfill sweep's request: bring the user up to date with the plan (server/backfill/README.md); nothing else. */
export interface CatchUpItem {
  readonly kind: 'catchup';
  readonly org: string;
  readonly user: string;
  /** Repeats what an earlier owner of the partition already logged (issue 15): its transitions are logged quiet. */
  readonly quiet?: boolean;
  /**
   * The user's stored history as the caller read it before asking (a sweep lists its users by reading their events:
   * backfill/users.ts), while the lanes ran earlier groups: its tick uses it when it still ends at the user's last
   * sequence with as many events as the state has seen (backfill/catchup.ts), else reads it again.
   */
  readonly history?: HistoryChunk;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/** A parked user's history replayed off the lane: `source` has seen the user's events up to `seq` under `version`. */
export interface AdoptItem {
  readonly kind: 'adopt';
  readonly org: string;
  readonly user: string;
  readonly source: Uint8Array;
  readonly seq: number;
  readonly version: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export type LaneItem = AppendItem | EvaluateItem | ReadItem | CatchUpItem | AdoptItem;

/** A user whose items wait while its history is replayed off the lane; items arriving meanwhile join them. */
export interface ParkedUser {
  readonly items: LaneItem[];
  weight: number;
}

export function orgOf(item: LaneItem): string {
  return item.kind === 'append' ? item.request.org : item.org;
}

export function userOf(item: LaneItem): string {
  return item.kind === 'append' ? item.request.user : item.user;
}

export class Lane {
  queue: LaneItem[] = [];
  /** Events (and other items, one each) in the queue: the backpressure measure. */
  queued = 0;
  /** Backfill catch-ups, taken a few per tick after the live items (they never delay live work by more). */
  background: CatchUpItem[] = [];
  /** Users whose long history is being replayed off the lane, by userKey. */
  readonly parked = new Map<string, ParkedUser>();
  /** Groups holding this lane that are building their tick (reads, compute): at most one (one group builds at a time). */
  building = 0;
  kicked = false;
  /** Groups holding this lane that have not committed (or failed) yet: the one building and those writing. */
  inFlight = 0;
  /** Users (userKey) with an item in a group not committed yet: their next items wait for it (E1, reads see durable data only). */
  readonly busy = new Set<string>();
  /** Asks to the owners are waiting (state/residents.ts: snapshots, forgotten states): run a group even without items. */
  flushWanted = false;
  private waiters: (() => void)[] = [];

  constructor(
    readonly partition: number,
    /** The last sequence written to the partition's log. */
    public lastSeq: number,
  ) {}

  get idle(): boolean {
    return this.building === 0 && !this.kicked && this.inFlight === 0 && this.queue.length === 0 && this.background.length === 0 && this.parked.size === 0;
  }

  /** Weight of the queued and parked items (the backpressure measure). */
  get load(): number {
    let parked = 0;
    for (const user of this.parked.values()) parked += user.weight;
    return this.queued + parked;
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
