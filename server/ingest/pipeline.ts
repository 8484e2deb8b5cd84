// The ingest pipeline (server/ingest/README.md): partitions with one FIFO lane each and at most one tick in flight,
// the users' state cache with write-behind snapshots, live audience sizes, the executor, and a graceful close.

import type { SegmentContext } from '../../engine/api.js';
import { ServiceError } from '../errors.js';
import type { BatchOp, Store } from '../store/contract.js';
import { lastSeq, snapshotOps } from '../domain/events/index.js';
import { probesOf } from './context.js';
import { createExecutor, type Executor } from './executor.js';
import { PARTITIONS_KEY } from './keys.js';
import { Lane, type LaneItem } from './lane.js';
import { AudienceSizes } from './sizes.js';
import { StateCache, userKey, type CachedUser } from './state-cache.js';
import { runTick, type PlanInfo, type TickEnv } from './tick.js';
import type { AppendRequest, AppendResult, ContextSource, IngestPipeline, PlanSource } from './types.js';
import { partitionOf } from '../domain/events/index.js';
import { NO_EVALUATE_AT, findEvaluateAt } from './work.js';

export interface IngestOptions {
  readonly store: Store;
  readonly plans: PlanSource;
  readonly contexts: ContextSource;
  /** Engine worker threads (piscina); 0 computes in the main thread. Default 0. */
  readonly threads?: number;
  /** fsync every group commit (power-loss durability). */
  readonly fsync?: boolean;
  /** The clock (epoch ms): snapshot ages and re-evaluation times (E20). */
  readonly now?: () => number;
  /** Accepted for the services' wiring; event ids arrive with the events, so the pipeline mints none yet. */
  readonly newId?: () => string;
  readonly log?: ((line: string) => void) | undefined;
  /** Partitions of a NEW data directory (default 16); an existing one keeps the count stored under `m!partitions`. */
  readonly partitions?: number;
  /** Users' states kept in memory (default 100,000). */
  readonly cacheSize?: number;
  /** Snapshot a user after this many events since its last snapshot (default 256). */
  readonly snapshotEvery?: number;
  /** Snapshot a user whose state has been newer than its snapshot this long (default 60 s). */
  readonly snapshotAfterMs?: number;
  /** Queued events per partition beyond which appends are refused with 503 (default 10,000). */
  readonly maxQueuedPerPartition?: number;
}

export const DEFAULT_PARTITIONS = 16;

/** Opens the pipeline over an open store: partition count, stored sizes and each partition's last sequence. */
export async function openIngestPipeline(options: IngestOptions): Promise<Pipeline> {
  const partitions = await resolvePartitions(options.store, options.partitions ?? DEFAULT_PARTITIONS);
  const sizes = await AudienceSizes.load(options.store);
  const lastSeqs: number[] = [];
  for (let p = 0; p < partitions; p++) lastSeqs.push(await lastSeq(options.store, p));
  return new Pipeline(options, partitions, sizes, lastSeqs);
}

async function resolvePartitions(store: Store, wanted: number): Promise<number> {
  const stored = await store.get<number>(PARTITIONS_KEY);
  if (typeof stored === 'number' && Number.isInteger(stored) && stored >= 1) return stored;
  if (!Number.isInteger(wanted) || wanted < 1 || wanted > 65_536) throw new RangeError(`partitions must be an integer in 1..65536: ${wanted}`);
  await store.batch([{ type: 'put', key: PARTITIONS_KEY, value: wanted }], { sync: true });
  return wanted;
}

export class Pipeline implements IngestPipeline {
  readonly partitions: number;
  private readonly lanes: Lane[];
  private readonly cache: StateCache;
  private readonly executor: Executor;
  private readonly sizes: AudienceSizes;
  private readonly plans: PlanSource;
  private readonly contexts: ContextSource;
  private readonly planInfos = new Map<string, PlanInfo>();
  private readonly env: TickEnv;
  private readonly maxQueued: number;
  private readonly snapshotAfterMs: number;
  private readonly now: () => number;
  private readonly sweepTimer: NodeJS.Timeout;
  private closing: Promise<void> | undefined;

  constructor(options: IngestOptions, partitions: number, sizes: AudienceSizes, lastSeqs: readonly number[]) {
    this.partitions = partitions;
    this.sizes = sizes;
    this.plans = options.plans;
    this.contexts = options.contexts;
    this.now = options.now ?? Date.now;
    this.maxQueued = options.maxQueuedPerPartition ?? 10_000;
    this.snapshotAfterMs = options.snapshotAfterMs ?? 60_000;
    this.lanes = lastSeqs.map((seq, partition) => new Lane(partition, seq));
    this.cache = new StateCache(options.cacheSize ?? 100_000, (entry) => this.queueSnapshot(entry));
    this.executor = createExecutor(options.threads ?? 0);
    const log = options.log ?? (() => undefined);
    this.env = {
      store: options.store,
      cache: this.cache,
      sizes,
      executor: this.executor,
      fsync: options.fsync === true,
      now: this.now,
      snapshotEvery: Math.max(1, options.snapshotEvery ?? 256),
      snapshotAfterMs: this.snapshotAfterMs,
      planOf: (org) => this.planOf(org),
      contextOf: (org, user): Promise<SegmentContext> => this.contexts.contextFor(org, user),
      log,
    };
    this.sweepTimer = setInterval(() => this.sweepDirty(), Math.max(1000, Math.min(this.snapshotAfterMs, 60_000)));
    this.sweepTimer.unref();
  }

  append(request: AppendRequest): Promise<AppendResult> {
    if (this.closing !== undefined) return Promise.reject(closedError());
    if (request.events.some((event) => Number.isNaN(Date.parse(event.time)))) {
      return Promise.reject(new ServiceError(1002, 'The request body is not structured as expected.', 'an event time is not an ISO 8601 instant'));
    }
    const lane = this.laneOf(request.org, request.user);
    const weight = Math.max(1, request.events.length);
    if (lane.queued > 0 && lane.queued + weight > this.maxQueued) {
      return Promise.reject(new ServiceError(5000, 'The service is overloaded; retry.', undefined, 503));
    }
    return new Promise((resolve, reject) => this.enqueue(lane, { kind: 'append', request, resolve, reject }, weight));
  }

  async reevaluate(org: string, users: readonly string[]): Promise<void> {
    if (this.closing !== undefined) throw closedError();
    if (findEvaluateAt() === undefined) throw new Error(NO_EVALUATE_AT);
    const now = this.now();
    await Promise.all(
      [...new Set(users)].map(
        (user) => new Promise<void>((resolve, reject) => this.enqueue(this.laneOf(org, user), { kind: 'evaluate', org, user, now, resolve, reject }, 1)),
      ),
    );
  }

  membershipsOf(org: string, user: string): Promise<readonly number[]> {
    const cached = this.cache.get(userKey(org, user));
    if (cached !== undefined) return Promise.resolve([...cached.memberships]);
    if (this.closing !== undefined) return Promise.reject(closedError());
    return new Promise((resolve, reject) => this.enqueue(this.laneOf(org, user), { kind: 'read', org, user, resolve, reject }, 1));
  }

  audienceSize(org: string, code: number): number {
    return this.sizes.total(org, code);
  }

  planChanged(org: string): void {
    this.planInfos.delete(org);
    this.executor.dropPlans(org);
  }

  /** Queues a snapshot of every user whose cached state is newer than its snapshot, and waits for them. */
  async flushSnapshots(): Promise<void> {
    for (const entry of this.cache.values()) if (entry.dirty) this.queueSnapshot(entry);
    await Promise.all(this.lanes.map((lane) => lane.whenIdle()));
    if (this.lanes.some((lane) => lane.pendingSnapshots.size > 0)) throw new Error('some snapshots could not be written');
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    clearInterval(this.sweepTimer);
    try {
      await Promise.all(this.lanes.map((lane) => lane.whenIdle()));
      // Pending (older) snapshots first, then every dirty cached state: the later put of a user wins.
      const ops: BatchOp[] = [];
      for (const lane of this.lanes) {
        for (const pending of lane.pendingSnapshots.values()) ops.push(...snapshotOps(pending.org, pending.user, pending.seq, pending.bytes));
      }
      const dirty = [...this.cache.values()].filter((entry) => entry.dirty);
      for (const entry of dirty) ops.push(...snapshotOps(entry.org, entry.user, entry.seq, entry.bytes));
      if (ops.length > 0) await this.env.store.batch(ops, this.env.fsync ? { sync: true } : undefined);
      for (const lane of this.lanes) lane.pendingSnapshots.clear();
      for (const entry of dirty) markClean(entry);
    } finally {
      await this.executor.close();
    }
  }

  private laneOf(org: string, user: string): Lane {
    return this.lanes[partitionOf(org, user, this.partitions)] as Lane;
  }

  private enqueue(lane: Lane, item: LaneItem, weight: number): void {
    lane.queue.push(item);
    lane.queued += weight;
    this.schedule(lane);
  }

  /** Starts the lane's next tick on the next turn, so that everything arriving meanwhile joins it. */
  private schedule(lane: Lane): void {
    if (lane.running || lane.kicked) return;
    if (lane.queue.length === 0 && !lane.flushWanted) {
      lane.notifyIfIdle();
      return;
    }
    lane.kicked = true;
    setImmediate(() => this.startTick(lane));
  }

  private startTick(lane: Lane): void {
    lane.kicked = false;
    lane.running = true;
    const items = lane.queue;
    lane.queue = [];
    lane.queued = 0;
    runTick(this.env, lane, items)
      .catch((error: unknown) => this.env.log(`ingest: tick failed unexpectedly: ${String(error)}`))
      .finally(() => {
        lane.running = false;
        this.schedule(lane);
      });
  }

  private planOf(org: string): PlanInfo {
    let info = this.planInfos.get(org);
    if (info === undefined) {
      const plan = this.plans.planFor(org);
      info = { version: plan.version, cohorts: plan.cohorts, probes: probesOf(plan.cohorts) };
      this.planInfos.set(org, info);
    }
    return info;
  }

  /** A dirty state leaving the cache (or dirty too long) is snapshotted with its partition's next batch. */
  private queueSnapshot(entry: CachedUser): void {
    if (!entry.dirty) return;
    const lane = this.lanes[entry.partition] as Lane;
    lane.pendingSnapshots.set(userKey(entry.org, entry.user), { org: entry.org, user: entry.user, seq: entry.seq, bytes: entry.bytes });
    markClean(entry);
    lane.flushWanted = true;
    this.schedule(lane);
  }

  private sweepDirty(): void {
    if (this.closing !== undefined) return;
    const now = this.now();
    for (const entry of this.cache.values()) {
      if (entry.dirty && now - entry.dirtySince >= this.snapshotAfterMs) this.queueSnapshot(entry);
    }
  }
}

function markClean(entry: CachedUser): void {
  entry.dirty = false;
  entry.unsnapshotted = 0;
  entry.dirtySince = 0;
}

function closedError(): Error {
  return new Error('the ingest pipeline is closed');
}
