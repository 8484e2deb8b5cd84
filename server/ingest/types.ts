// The ingest pipeline's contract with the routes: append events (acknowledged once durable), read memberships and
// audience sizes, re-evaluate users whose imported data changed. Design: server/ingest/README.md.

import type { BatchOp } from '../store/contract.js';
import type { NewEvent, StoredEvent } from '../domain/events/index.js';
import type { CohortDefinition, SegmentContext } from '../../engine/api.js';
import type { ReplayPlan, ReplayedUser } from '../backfill/history.js';
import type { PlanInfo } from './plan-info.js';
import type { RecentIdsHold } from './tick/recent-ids.js';
import type { Committed } from './tick/commit-log.js';
import type { HistoryChunk } from './state/load.js';
import type { DeadlineStats } from './deadlines/scheduler.js';
import type { SizeCounter } from './tick/sizes.js';
import type { HeapCompaction } from '../heap-compaction.js';

/** An event ready to append (the server's one event model: server/domain/events/record.ts). */
export type { NewEvent } from '../domain/events/index.js';

export interface AppendRequest {
  readonly org: string;
  readonly user: string;
  readonly events: readonly NewEvent[];
  /** Writes to commit atomically with the events (schema growth, a new user record, ...). */
  readonly extraOps?: readonly BatchOp[];
  /**
   * The caller reads `memberships` of the result. One node always answers them; a cluster node asks the partition's
   * owner only when this is set (issue 15), and answers [] otherwise.
   */
  readonly memberships?: boolean;
  /**
   * The events were already reacted to elsewhere (a cluster node replaying a partition it took over, issue 15): their
   * transitions are logged as a replay and fire no reaction (D37), as a catch-up's do.
   */
  readonly quiet?: boolean;
}

export interface AppendResult {
  /** One per given event, in order. A repeated id (D29) answers the stored record and appends nothing. */
  readonly events: readonly StoredEvent[];
  /** Cohort codes the user is in once these events are applied (sorted). */
  readonly memberships: readonly number[];
}

/**
 * Where the pipeline gets each organization's enabled real-time cohorts (compiled into the plan it runs) and their
 * generations (server/backfill/README.md: the plan version at which each cohort was created, its query changed or it was
 * enabled; without them no cohort is ever caught up over history).
 */
export interface PlanSource {
  planFor(org: string): {
    readonly version: number;
    readonly cohorts: readonly CohortDefinition[];
    /** Codes that exist but are not evaluated (disabled, offline), which the cohorts may name (E21). */
    readonly inactive?: readonly number[];
    readonly generations?: ReadonlyMap<number, number>;
  };
}

/** Where the pipeline gets a user's imported data for the engine (D27, E13, E14). */
export interface ContextSource {
  /** The context itself when it is known without a read (cached), else a promise of it. */
  contextFor(org: string, user: string): SegmentContext | Promise<SegmentContext>;
  /**
   * A number that moves whenever any user's imported data may have changed (checked before each group's lookups):
   * while it stands, a resident user's data is not looked up again. Without it every group captures every context.
   */
  contextEpoch?(): number;
}

export interface PipelineStats {
  /** Weight of the items queued or parked in every lane. */
  readonly queued: number;
  readonly cacheBytes: number;
  readonly cacheEntries: number;
  readonly cacheHits: number;
  readonly cacheMisses: number;
  /** Store batches the groups were written in: the groups built while a batch is written share the next one. */
  readonly storeBatches: number;
  /** Event records folded into blocks behind the writes (server/ingest/fold.ts), and fold requests dropped. */
  readonly eventsFolded: number;
  readonly foldsDropped: number;
}

export interface IngestPipeline {
  /** Partitions of the data directory (fixed when it was created). */
  readonly partitions: number;
  /** Resolves once the events, their transitions and the extra ops are durable (a crash cannot lose them). */
  append(request: AppendRequest): Promise<AppendResult>;
  /**
   * D29: the caller is about to look client event ids up in the store; ids committed from now on stay known to the
   * pipeline until `release()`, so events marked `checked` with this mark are not looked up again.
   */
  holdRecentIds(): RecentIdsHold;
  /** Re-evaluates users whose imported data changed (D27); resolves once their memberships are durable. */
  reevaluate(org: string, users: readonly string[]): Promise<void>;
  /**
   * D36: re-evaluates the user at its deadline `at` (deadlines/scheduler.ts); the batch also deletes the index entry
   * `due` and indexes the next deadline. Resolves once durable.
   */
  evaluateDue(org: string, user: string, at: number, due: string): Promise<void>;
  /** Gauges for the metrics: items waiting in the lanes, the resident states' cache. */
  stats(): PipelineStats;
  /** D36: called with each committed deadline re-evaluation's lag from its deadline, ms. */
  onDeadline(listener: (lagMs: number) => void): void;
  /** D36: the deadline scheduler's counters and recent lags (undefined when it does not run). */
  deadlineStats(): DeadlineStats | undefined;
  /** The user's current memberships (sorted cohort codes). */
  membershipsOf(org: string, user: string): Promise<readonly number[]>;
  /** Exact number of users in the cohort (D19), counting every append acknowledged before the call. */
  audienceSize(org: string, code: number): number;
  /** A cluster node gained partitions (issue 15): their overdue deadlines are looked for now. */
  ownershipChanged(): void;
  /** Every live size counter (a cluster node publishes those of the partitions it owns). */
  sizeCounters(): Iterable<SizeCounter>;
  /** The cohort's live counter in each partition, generation included (a cluster node sums its own partitions'). */
  partitionSizes(org: string, code: number): ReadonlyMap<number, { readonly gen: number; readonly count: number }>;
  /** An organization's plan changed (cohort created, changed, enabled, disabled, deleted). */
  planChanged(org: string): void;
  /** The organization's plan as the pipeline runs it now: version, cohorts and their generations. */
  planInfo(org: string): PlanInfo;
  /**
   * server/backfill/README.md: brings the users up to date with the plan (a catch-up over their history when behind), as
   * background work of their lanes; resolves once each one's result is durable. Rejects when closing.
   */
  catchUp(org: string, users: readonly string[], options?: CatchUpOptions): Promise<void>;
  /** Resolves once every tick running at the call has finished (ticks started later see the latest plans). */
  settled(): Promise<void>;
  /** Replays the users' stored histories through `plan` off the lanes (offline cohorts, D20). */
  replayHistories(plan: ReplayPlan, org: string, users: readonly string[], shouldStop?: () => boolean): Promise<ReplayedUser[]>;
  /**
   * Called after each committed batch, in commit order, with its transitions-log entries, the reactions that got
   * new deliveries and the deadlines it indexed (D36–D38). A listener must not throw or block.
   */
  onCommitted(listener: (outcome: Committed) => void): void;
  /** Resolves once no fold of users' event records into blocks is queued or running (server/ingest/fold.ts). */
  foldsIdle(): Promise<void>;
  /**
   * Compacts each partition owner thread's V8 heap that has many free pages (server/heap-compaction.ts), one after
   * another, each after the tasks sent to it before: one entry per owner thread, undefined where it was not worth it;
   * none with no owner threads (the main thread is the owner, and its heap is its caller's). `settle`: see
   * server/heap-compaction.ts compactIfFragmented.
   */
  compactOwnerHeaps(settle: boolean): Promise<ReadonlyArray<HeapCompaction | undefined>>;
  /** Graceful stop: finishes queued work, writes snapshots, stops the workers. The store stays open. */
  close(): Promise<void>;
}

export interface CatchUpOptions {
  /** The catch-up repeats what an earlier owner already logged (a cluster node gaining a partition, issue 15). */
  readonly quiet?: boolean;
  /**
   * Whole histories of some of the users, read by the caller (a sweep lists its users by reading their events:
   * backfill/users.ts `scanUsers`), so that their ticks need not read them: a tick uses one only if it still ends at
   * the user's last sequence with as many events as its state has seen.
   */
  readonly histories?: ReadonlyMap<string, HistoryChunk>;
}
