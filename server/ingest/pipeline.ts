// The ingest pipeline (server/ingest/README.md): partitions with one FIFO lane each, ticked together in groups (one
// building at a time, its batch written while the next builds; a user is in at most one uncommitted group), the
// partition owners keeping their users' decoded states resident (worker/executor.ts) under the main thread's byte-bounded
// index of them with write-behind snapshots (state/cache.ts, state/residents.ts), live audience sizes, catch-ups of users
// behind the plan and the parking of long ones (server/backfill/README.md), and a graceful close.

import { totalmem } from 'node:os';
import type { SegmentContext } from '../../engine/api.js';
import { ServiceError } from '../errors.js';
import type { BatchOp, Store } from '../store/contract.js';
import { lastSeq } from '../domain/events/index.js';
import { weightOf } from '../backfill/catchup.js';
import { createExecutor, type Executor } from './worker/executor.js';
import { replayHistories, type HistoryDeps, type ReplayPlan, type ReplayedUser } from '../backfill/history.js';
import { PARTITIONS_KEY } from './keys.js';
import { Lane, type AdoptItem, type LaneItem, type ParkedUser } from './lanes/lane.js';
import { userSnapshotOps } from './state/load.js';
import { toPlanInfo, type PlanInfo } from './plan-info.js';
import { ResidentAsks } from './state/residents.js';
import { RecentIds, type RecentIdsHold } from './tick/recent-ids.js';
import { AudienceSizes, type SizeCounter } from './tick/sizes.js';
import { StateCache, fromMemberCodes, userKey, type CachedUser } from './state/cache.js';
import { GroupScheduler } from './lanes/groups.js';
import type { TickEnv } from './tick/tick.js';
import type { AppendRequest, AppendResult, CatchUpOptions, ContextSource, IngestPipeline, PipelineStats, PlanSource } from './types.js';
import { partitionOf } from '../domain/events/index.js';
import type { ReactionLookup } from '../domain/reactions/contract.js';
import { loadCursors, type Committed, type Cursors } from './tick/commit-log.js';
import { DeadlineScheduler, type DeadlineStats } from './deadlines/scheduler.js';
import { EventFolder } from './fold.js';
import { GroupWriter } from './tick/writer.js';
import type { HeapCompaction } from '../heap-compaction.js';

export interface IngestOptions {
  readonly store: Store;
  readonly plans: PlanSource;
  readonly contexts: ContextSource;
  /** Partition owners: piscina worker threads, each keeping its partitions' states resident; 0 = the main thread. Default 0. */
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
  /** Users' states kept resident (default 2,000,000; the byte bound is the one that matters). */
  readonly cacheSize?: number;
  /** Bytes the users' resident states may hold (default `defaultStateCacheBytes()`, D40); least recently used ones are snapshotted and forgotten. */
  readonly cacheBytes?: number;
  /** States each owner keeps decoded; the others it holds encoded (worker/resident-states.ts). Default: no limit. */
  readonly decodedStates?: number;
  /** Snapshot a user after this many events since its last snapshot (default 256). */
  readonly snapshotEvery?: number;
  /**
   * Snapshot a user whose state has been newer than its snapshot this long (default 10 minutes). Recovery replays at
   * most `snapshotEvery` events per user whatever this is; at 60 s, every user active within a minute was encoded and
   * written once a minute (~1.4 KB of state each, bench/README.md (4)), and `bench/ab.ts` (30,000 users, 40 s runs, 3
   * rounds) measured 317 against 292 us of server CPU per request and a ratio of 0.190 against 0.211 (every round)
   * for 60 s against 10 minutes.
   */
  readonly snapshotAfterMs?: number;
  /**
   * Fold a user's single event records into blocks each time its event count passes a multiple of this (default 32;
   * 0: never): server/domain/events/blocks.ts, fold.ts. Histories then read as a few values (backfills, recovery).
   */
  readonly foldEvery?: number;
  /** Queued events per partition beyond which appends are refused with 503 (default 10,000). */
  readonly maxQueuedPerPartition?: number;
  /** server/backfill/README.md: the longest history caught up inside a tick (default 2,000 events); longer ones are parked. */
  readonly catchUpInline?: number;
  /** server/backfill/README.md: history events replayed inside one tick in all (default 8,000). */
  readonly catchUpBudget?: number;
  /** server/backfill/README.md: background catch-ups a tick takes after its live items (default 32). */
  readonly catchUpsPerTick?: number;
  /** History events (catch-ups, replays) per task to an owner; a group with more goes as several tasks (8,192). */
  readonly taskEvents?: number;
  /** Events per chunk of an off-lane history replay (default 2,000). */
  readonly historyChunk?: number;
  /** D37: which reactions a transition or page load fires (their deliveries join the same batch); none: no outbox. */
  readonly reactions?: ReactionLookup;
  /** D36: re-evaluate users at their deadlines (default true; off for tools that only replay). */
  readonly deadlines?: boolean;
  /** A cluster node's partitions (issue 15): deadlines are evaluated only for these; default every partition. */
  readonly owns?: (partition: number) => boolean;
}

export const DEFAULT_PARTITIONS = 16;

/** The longest history caught up inside a tick unless told (`catchUpInline`); longer ones are parked. */
export const CATCH_UP_INLINE = 2000;
/**
 * D40: bytes the users' resident states may hold unless configured (`serve --state-cache-bytes`): an eighth of the
 * machine's memory, at least 64 MiB and at most 4 GiB, so that a site's active users stay resident on a server
 * without a small machine being asked for more than it has.
 */
export function defaultStateCacheBytes(): number {
  return Math.min(4 * 1024 ** 3, Math.max(64 * 1024 ** 2, Math.floor(totalmem() / 8)));
}

/** Opens the pipeline over an open store: partition count, stored sizes and each partition's last sequence. */
export async function openIngestPipeline(options: IngestOptions): Promise<Pipeline> {
  const partitions = await resolvePartitions(options.store, options.partitions ?? DEFAULT_PARTITIONS);
  const sizes = await AudienceSizes.load(options.store);
  const lastSeqs: number[] = [];
  for (let p = 0; p < partitions; p++) lastSeqs.push(await lastSeq(options.store, p));
  const cursors = await loadCursors((key) => options.store.get(key));
  return new Pipeline(options, partitions, sizes, lastSeqs, cursors);
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
  private readonly residents: ResidentAsks;
  private readonly recentIds = new RecentIds();
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
  private readonly catchUpsPerTick: number;
  private readonly history: HistoryDeps;
  private readonly scheduler: GroupScheduler;
  private closing: Promise<void> | undefined;
  private readonly listeners: ((outcome: Committed) => void)[] = [];
  private readonly deadlineListeners: ((lagMs: number) => void)[] = [];
  private readonly deadlines: DeadlineScheduler | undefined;
  private readonly folder: EventFolder;

  constructor(options: IngestOptions, partitions: number, sizes: AudienceSizes, lastSeqs: readonly number[], cursors: Cursors = { log: 0, outbox: 0 }) {
    this.partitions = partitions;
    this.sizes = sizes;
    this.plans = options.plans;
    this.contexts = options.contexts;
    this.now = options.now ?? Date.now;
    this.maxQueued = options.maxQueuedPerPartition ?? 10_000;
    this.snapshotAfterMs = options.snapshotAfterMs ?? 600_000;
    this.lanes = lastSeqs.map((seq, partition) => new Lane(partition, seq));
    this.cache = new StateCache(options.cacheSize ?? 2_000_000, (entry) => this.evicted(entry), options.cacheBytes ?? defaultStateCacheBytes());
    this.executor = createExecutor(options.threads ?? 0, options.decodedStates);
    this.residents = new ResidentAsks(this.executor.owners, (partition) => this.executor.ownerOf(partition));
    this.catchUpsPerTick = Math.max(1, options.catchUpsPerTick ?? 32);
    const log = options.log ?? (() => undefined);
    this.history = {
      store: options.store,
      executor: this.executor,
      contextOf: (org, user) => this.contexts.contextFor(org, user),
      chunk: Math.max(1, options.historyChunk ?? 2000),
    };
    this.folder = new EventFolder(options.store, Math.max(0, options.foldEvery ?? 32), log);
    this.env = {
      store: options.store,
      folder: this.folder,
      cache: this.cache,
      residents: this.residents,
      recentIds: this.recentIds,
      sizes,
      executor: this.executor,
      now: this.now,
      snapshotEvery: Math.max(1, options.snapshotEvery ?? 256),
      snapshotAfterMs: this.snapshotAfterMs,
      catchUp: { inline: Math.max(1, options.catchUpInline ?? CATCH_UP_INLINE), budget: Math.max(1, options.catchUpBudget ?? 8000), taskEvents: Math.max(1, options.taskEvents ?? 8192) },
      planOf: (org) => this.planOf(org),
      park: (lane, org, user, items, untilSeq) => this.park(lane, org, user, items, untilSeq),
      contextOf: (org, user) => this.contexts.contextFor(org, user),
      ...(options.contexts.contextEpoch === undefined ? {} : { contextEpoch: () => (this.contexts as Required<ContextSource>).contextEpoch() }),
      log,
      writer: new GroupWriter(options.store, options.fsync === true, sizes),
      cursors,
      reactions: options.reactions,
      committed: (outcome) => {
        this.deadlines?.noteDeadlines(outcome.deadlines);
        for (const listener of this.listeners) listener(outcome);
      },
    };
    if (options.deadlines !== false) {
      this.deadlines = new DeadlineScheduler({
        store: options.store,
        partitions,
        ...(options.owns === undefined ? {} : { owns: options.owns }),
        now: this.now,
        evaluate: (org, user, at, due) => this.evaluateDue(org, user, at, due),
        onEvaluated: (lag) => {
          for (const listener of this.deadlineListeners) listener(lag);
        },
        log,
      });
      this.deadlines.start();
    }
    this.scheduler = new GroupScheduler(this.env, this.catchUpsPerTick);
    this.sweepTimer = setInterval(() => this.sweepDirty(), Math.max(1000, Math.min(this.snapshotAfterMs, 60_000)));
    this.sweepTimer.unref();
  }

  append(request: AppendRequest): Promise<AppendResult> {
    if (this.closing !== undefined) return Promise.reject(closedError());
    // The time was parsed where the body was validated (the one event model): here it is only checked.
    if (request.events.some((event) => !Number.isFinite(event.timeMs))) {
      return Promise.reject(new ServiceError(1002, 'The request body is not structured as expected.', 'an event time is not an ISO 8601 instant'));
    }
    const lane = this.laneOf(request.org, request.user);
    const weight = Math.max(1, request.events.length);
    const load = lane.load;
    if (load > 0 && load + weight > this.maxQueued) {
      return Promise.reject(new ServiceError(5000, 'The service is overloaded; retry.', undefined, 503));
    }
    return new Promise((resolve, reject) => this.enqueue(lane, { kind: 'append', request, resolve, reject }, weight));
  }

  onCommitted(listener: (outcome: Committed) => void): void {
    this.listeners.push(listener);
  }

  onDeadline(listener: (lagMs: number) => void): void {
    this.deadlineListeners.push(listener);
  }

  holdRecentIds(): RecentIdsHold {
    return this.recentIds.hold();
  }

  async reevaluate(org: string, users: readonly string[]): Promise<void> {
    if (this.closing !== undefined) throw closedError();
    const now = this.now();
    await Promise.all(
      [...new Set(users)].map(
        (user) => new Promise<void>((resolve, reject) => this.enqueue(this.laneOf(org, user), { kind: 'evaluate', org, user, now, resolve, reject }, 1)),
      ),
    );
  }

  evaluateDue(org: string, user: string, at: number, due: string): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(closedError());
    return new Promise<void>((resolve, reject) => this.enqueue(this.laneOf(org, user), { kind: 'evaluate', org, user, now: at, due, resolve, reject }, 1));
  }

  membershipsOf(org: string, user: string): Promise<readonly number[]> {
    const key = userKey(org, user);
    const lane = this.laneOf(org, user);
    const cached = this.cache.get(key);
    if (cached !== undefined && !lane.parked.has(key)) {
      // D19: cohorts that left the plan have no members; a user behind the plan is caught up first (a read item).
      const plan = this.planOf(org);
      if (cached.count === 0 || cached.mark >= plan.maxGen) return Promise.resolve(fromMemberCodes(cached.memberships).filter((code) => plan.gens.has(code)));
    }
    if (this.closing !== undefined) return Promise.reject(closedError());
    return new Promise((resolve, reject) => this.enqueue(lane, { kind: 'read', org, user, resolve, reject }, 1));
  }

  audienceSize(org: string, code: number): number {
    const gen = this.planOf(org).gens.get(code);
    return gen === undefined ? 0 : this.sizes.total(org, code, gen);
  }

  ownershipChanged(): void {
    this.deadlines?.rescan();
  }

  sizeCounters(): Iterable<SizeCounter> {
    return this.sizes.all();
  }

  partitionSizes(org: string, code: number): ReadonlyMap<number, { readonly gen: number; readonly count: number }> {
    return this.sizes.countsOf(org, code);
  }

  catchUp(org: string, users: readonly string[], options: CatchUpOptions = {}): Promise<void> {
    if (this.closing !== undefined) return Promise.reject(closedError());
    const byLane = new Set<Lane>();
    const done = [...new Set(users)].map(
      (user) =>
        new Promise<void>((resolve, reject) => {
          const lane = this.laneOf(org, user);
          const parked = lane.parked.get(userKey(org, user));
          // A history the caller read (a sweep's scan) goes with the item; its tick checks that it is still whole.
          const history = parked === undefined ? options.histories?.get(user) : undefined;
          const item = { kind: 'catchup' as const, org, user, ...(options.quiet === true ? { quiet: true } : {}), ...(history === undefined ? {} : { history }), resolve, reject };
          if (parked !== undefined) {
            parked.items.push(item);
            parked.weight += 1;
          } else {
            lane.background.push(item);
            byLane.add(lane);
          }
        }),
    );
    for (const lane of byLane) this.schedule(lane);
    return Promise.all(done).then(() => undefined);
  }

  async settled(): Promise<void> {
    await this.scheduler.settled();
  }

  replayHistories(plan: ReplayPlan, org: string, users: readonly string[], shouldStop?: () => boolean): Promise<ReplayedUser[]> {
    if (this.closing !== undefined) return Promise.reject(closedError());
    return replayHistories(this.history, plan, org, users, shouldStop === undefined ? {} : { shouldStop });
  }

  planChanged(org: string): void {
    this.planInfos.delete(org);
    this.executor.dropPlans(org);
  }

  planInfo(org: string): PlanInfo {
    return this.planOf(org);
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  stats(): PipelineStats {
    let queued = 0;
    for (const lane of this.lanes) queued += lane.load;
    return { queued, cacheBytes: this.cache.bytes, cacheEntries: this.cache.size, cacheHits: this.cache.hits, cacheMisses: this.cache.misses, storeBatches: this.env.writer.batches, eventsFolded: this.folder.folded, foldsDropped: this.folder.dropped };
  }

  compactOwnerHeaps(settle: boolean): Promise<ReadonlyArray<HeapCompaction | undefined>> {
    return this.executor.compactHeaps(settle);
  }

  foldsIdle(): Promise<void> {
    return this.folder.idle();
  }

  deadlineStats(): DeadlineStats | undefined {
    return this.deadlines?.stats();
  }

  private async shutDown(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.deadlines?.stop();
    // Background catch-ups are not requests: a sweep resumes from its stored cursor after a restart.
    for (const lane of this.lanes) {
      const background = lane.background;
      lane.background = [];
      for (const item of background) item.reject(closedError());
    }
    try {
      await Promise.all(this.lanes.map((lane) => lane.whenIdle()));
      await this.scheduler.settled();
      // Every dirty resident state is encoded by its owner and written in one batch, after the asks still waiting
      // (older snapshots first: the later put of a user wins).
      const dirty = [...this.cache.values()].filter((entry) => entry.dirty);
      for (const entry of dirty) this.residents.ask(entry, { encode: true, drop: false });
      const ops: BatchOp[] = [];
      for (let owner = 0; owner < this.executor.owners; owner++) {
        const taken = this.residents.take(owner);
        if (taken.snapshots.length === 0) continue;
        const reply = await this.executor.run({ groups: [], snapshots: taken.snapshots }, owner);
        const bytes = reply.needPlan === true || reply.lost !== undefined ? [] : (reply.snapshots ?? []);
        taken.entries.forEach((entry, i) => {
          const state = bytes[i];
          if (state != null) ops.push(...userSnapshotOps(entry.org, entry.user, entry.seq, state, entry.count, entry.mark));
        });
      }
      if (ops.length > 0) await this.env.store.batch(ops, this.env.writer.sync ? { sync: true } : undefined);
      for (const entry of dirty) markClean(entry);
    } finally {
      this.folder.stop();
      await this.folder.idle();
      await this.executor.close();
    }
  }

  private laneOf(org: string, user: string): Lane {
    return this.lanes[partitionOf(org, user, this.partitions)] as Lane;
  }

  private enqueue(lane: Lane, item: LaneItem, weight: number): void {
    const parked = lane.parked.get(userKey(item.kind === 'append' ? item.request.org : item.org, item.kind === 'append' ? item.request.user : item.user));
    if (parked !== undefined) {
      parked.items.push(item);
      parked.weight += weight;
      return;
    }
    lane.queue.push(item);
    lane.queued += weight;
    this.schedule(lane);
  }

  /**
   * server/backfill/README.md: a user behind the plan with a long history waits, with every item of it queued now or later,
   * while its history is replayed off the lane in chunks; then an adopt item and the waiting items go first.
   */
  private park(lane: Lane, org: string, user: string, items: readonly LaneItem[], untilSeq: number): void {
    const key = userKey(org, user);
    const parked: ParkedUser = { items: [...items], weight: items.reduce((sum, item) => sum + weightOf(item), 0) };
    const mine = (item: LaneItem): boolean => (item.kind === 'append' ? item.request.org === org && item.request.user === user : item.org === org && item.user === user);
    lane.queue = lane.queue.filter((item) => {
      if (!mine(item)) return true;
      parked.items.push(item);
      parked.weight += weightOf(item);
      lane.queued -= weightOf(item);
      return false;
    });
    lane.background = lane.background.filter((item) => {
      if (!mine(item)) return true;
      parked.items.push(item);
      parked.weight += 1;
      return false;
    });
    lane.parked.set(key, parked);
    const plan = this.planOf(org);
    replayHistories(this.history, { key: org, version: plan.version, cohorts: plan.cohorts, inactive: plan.inactive }, org, [user], { untilSeq })
      .then(([replayed]) => {
        const adopt: AdoptItem[] =
          replayed?.state == null ? [] : [{ kind: 'adopt', org, user, source: replayed.state, seq: replayed.seq, version: plan.version, resolve: () => undefined, reject: () => undefined }];
        this.unpark(lane, key, adopt);
      })
      .catch((error: unknown) => {
        this.env.log(`ingest: replaying the history of a parked user failed: ${String(error)}`);
        const waiting = lane.parked.get(key);
        lane.parked.delete(key);
        const failure = new ServiceError(5000, 'The events could not be stored; retry.');
        for (const item of waiting?.items ?? []) item.reject(failure);
        this.schedule(lane);
      });
  }

  private unpark(lane: Lane, key: string, first: readonly LaneItem[]): void {
    const parked = lane.parked.get(key);
    lane.parked.delete(key);
    const items = parked?.items ?? [];
    const live = items.filter((item) => item.kind !== 'catchup');
    lane.queue = [...first, ...live, ...lane.queue];
    lane.queued += live.reduce((sum, item) => sum + weightOf(item), 0);
    // Background catch-ups of the user go first too: the adopt item brings the user up to date for them.
    for (const item of items) if (item.kind === 'catchup') lane.queue.splice(first.length, 0, item);
    this.schedule(lane);
  }

  private schedule(lane: Lane): void {
    this.scheduler.schedule(lane);
  }

  private planOf(org: string): PlanInfo {
    let info = this.planInfos.get(org);
    if (info === undefined) {
      info = toPlanInfo(this.plans.planFor(org));
      this.planInfos.set(org, info);
    }
    return info;
  }

  /**
   * A user leaving the cache: its owner is told (with the next group) to snapshot the state if dirty and forget it.
   * A user in an uncommitted group is left alone: that group puts it back, or forgets it if it fails.
   */
  private evicted(entry: CachedUser): void {
    const lane = this.lanes[entry.partition] as Lane;
    if (lane.busy.has(userKey(entry.org, entry.user))) return;
    this.residents.ask(entry, { encode: entry.dirty, drop: true });
    markClean(entry);
    this.askSoon(lane);
  }

  /** A dirty state is snapshotted (encoded by its owner) with the next group, once it has been dirty too long. */
  private sweepDirty(): void {
    if (this.closing !== undefined) return;
    const now = this.now();
    for (const entry of this.cache.values()) {
      if (!entry.dirty || now - entry.dirtySince < this.snapshotAfterMs) continue;
      const lane = this.lanes[entry.partition] as Lane;
      if (lane.busy.has(userKey(entry.org, entry.user))) continue;
      this.residents.ask(entry, { encode: true, drop: false });
      markClean(entry);
      this.askSoon(lane);
    }
  }

  /** A group runs soon to carry the asks, even when no item comes. */
  private askSoon(lane: Lane): void {
    lane.flushWanted = true;
    this.schedule(lane);
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
