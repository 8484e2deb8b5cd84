// A group of partition ticks (ARCHITECTURE "The ingest path"): each lane's items in arrival order: resolve retried
// ids (D29), find each user's state (resident in its partition owner, or loaded: snapshot + later events), catch up
// users behind the plan (server/backfill/README.md), compute on the owners (one task each), then the group's writes
// (events with their transitions, extra ops, size counters, snapshots) in one store batch, written after the groups
// built before it (writer.ts: with those that waited behind the same write), then update the cache and sizes and
// answer the requests.

import type { EngineEvent, SegmentContext } from '../../../engine/api.js';
import type { BatchOp, Store } from '../../store/contract.js';
import { ServiceError } from '../../errors.js';
import type { StoredEvent } from '../../domain/events/index.js';
import { planCatchUps, handBack, upToDate, type CatchUpCandidate, type CatchUpDecision, type CatchUpLimits } from '../../backfill/catchup.js';
import { EMPTY_CONTEXT_DATA, captureContext, hasProbes, type ContextData } from './context.js';
import type { Executor } from '../worker/executor.js';
import { orgOf, userOf, type Lane, type LaneItem } from '../lanes/lane.js';
import type { PlanInfo } from '../plan-info.js';
import { AudienceSizes, type PendingCounts, type SizeDeltas } from './sizes.js';
import { StateCache, userKey, type CachedUser } from '../state/cache.js';
import type { ResidentAsks } from '../state/residents.js';
import type { RecentIds } from './recent-ids.js';
import { buildOps } from './ops.js';
import type { UserResult } from '../worker/work.js';
import { compute, type CarriedAsks } from './compute.js';
import { FreshEvent, clientIdsOf, resolveRetries } from './retries.js';
import { carriedSnapshotOps, carriedSnapshots, forgetCarried, loadStates, snapshotDue } from './states.js';
import { unstorable } from './isolate.js';
import { CommitLog, type Committed, type Cursors, type GroupPhases } from './commit-log.js';
import type { ReactionLookup } from '../../domain/reactions/contract.js';
import type { GroupWrite, GroupWriter } from './writer.js';
import type { EventFolder } from '../fold.js';

export { FreshEvent } from './retries.js';
export type { PlanInfo } from '../plan-info.js';

export interface TickEnv {
  readonly store: Store;
  readonly cache: StateCache;
  /** What the owners are still to be told about their resident states (snapshots, forgotten states). */
  readonly residents: ResidentAsks;
  /** Client ids committed while a route's lookup is outstanding (D29, one lookup per id). */
  readonly recentIds: RecentIds;
  readonly sizes: AudienceSizes;
  readonly executor: Executor;
  readonly now: () => number;
  /** Snapshot a user once this many events were applied since its last snapshot. */
  readonly snapshotEvery: number;
  /** Snapshot a user whose state has been newer than its snapshot for this long. */
  readonly snapshotAfterMs: number;
  readonly catchUp: CatchUpLimits;
  /** Writes the groups' batches in the order they were built, merging those that wait behind a write (writer.ts). */
  readonly writer: GroupWriter;
  /** The global transitions log's cursor and the outbox sequence, as last taken (commit-log.ts). */
  readonly cursors: Cursors;
  /** Folds users' single event records into blocks behind the writes (fold.ts; none: never). */
  readonly folder?: EventFolder | undefined;
  /** D37: the reactions a transition or page load fires (none: no outbox). */
  readonly reactions?: ReactionLookup | undefined;
  /** After each committed batch, in commit order: its log entries, reactions with new deliveries, deadlines (D36–D38). */
  committed(outcome: Committed): void;
  planOf(org: string): PlanInfo;
  /** The context at once when cached (the usual case), else a promise of it. */
  contextOf(org: string, user: string): SegmentContext | Promise<SegmentContext>;
  /**
   * A number that moves whenever any user's imported data may have changed (the imports' context cache epoch): while
   * it stands, a user's captured data is what it was. None: the data is captured for every compute.
   */
  contextEpoch?(): number;
  /** A user behind the plan with a long history: its items wait while the history is replayed off the lane. */
  park(lane: Lane, org: string, user: string, items: readonly LaneItem[], untilSeq: number): void;
  log(line: string): void;
}

export interface Step {
  readonly item: LaneItem;
  /** The new events of an append, in order (what the engine sees). */
  readonly fresh: FreshEvent[];
  /** One per given event: the stored record of a retried id, or the fresh event (maybe an earlier one: same id). */
  readonly answers: (StoredEvent | FreshEvent)[];
}

/** What the main thread knows of a user's state (its cache entry without the names). */
export type UserMeta = Omit<CachedUser, 'org' | 'user' | 'partition'>;

export interface UserWork {
  readonly org: string;
  readonly user: string;
  readonly key: string;
  readonly partition: number;
  readonly steps: Step[];
  base: UserMeta;
  /** The owner holds the user's state as `base` describes it (else `loaded` + `replay` give it). */
  resident: boolean;
  /** The stored snapshot's state (null: none, or resident). */
  loaded: Uint8Array | null;
  replay: readonly EngineEvent[];
  /** The imported data its owner gets: null when unchanged since the owner last decided the user (`unchangedContext`). */
  ctx: ContextData | null;
  /** TickEnv.contextEpoch when `ctx` was captured (-1: not captured, or no epoch to go by). */
  ctxEpoch: number;
  decision: CatchUpDecision | undefined;
  result: UserResult | undefined;
  evaluated: boolean;
  /** A snapshot is due with the tick's batch if the state is newer than its last one (decided before the compute). */
  due: boolean;
  /** The tick's batch writes the user's snapshot. */
  snapshotted: boolean;
  next: CachedUser | undefined;
  /** Its events through this sequence are due a fold once the batch is written (fold.ts), and how many. */
  fold: { readonly throughSeq: number; readonly events: number } | undefined;
}

export type StepOf = Map<LaneItem, { work: UserWork; index: number }>;

/**
 * What a lane hands to a group of ticks (lanes/groups.ts starts one group per event-loop turn): its runnable items (no
 * user of them is in another uncommitted group); none when only asks to the owners are waiting.
 */
export interface TickRun {
  readonly lane: Lane;
  readonly items: readonly LaneItem[];
}

/** One lane's part of a group: its users and the items still in it. */
interface LaneTick {
  readonly lane: Lane;
  readonly items: readonly LaneItem[];
  readonly users: Map<string, UserWork>;
  readonly stepOf: StepOf;
  active: readonly LaneItem[];
}

/**
 * Runs the ticks of several lanes as ONE group: one idempotency lookup, one executor task and one store batch (each
 * lane's part keeps its own sequences, order and counters; groups that waited behind the same write share it,
 * writer.ts). Once its writes are built, `listener.built()` is called: the lanes may build their next group while
 * this one is written. Groups are written in the order they were built, size counters are computed just before the
 * write from the committed counts, and requests are answered after their own batch is written. Never throws: a
 * failure rejects every item of the group (500, code 5000), drops their cached states and the snapshots the batch
 * held; nothing of the group was written.
 */
export async function runTicks(env: TickEnv, runs: readonly TickRun[], listener?: { built(): void }): Promise<void> {
  const started = performance.now();
  const ticks: LaneTick[] = [];
  for (const { lane, items } of runs) ticks.push({ lane, items, users: new Map(), stepOf: new Map(), active: items });
  const allocated: { lane: Lane; from: number; to: number }[] = [];
  const carried: CarriedAsks[] = [];
  let log: { commitLog: CommitLog; taken: Cursors } | undefined;
  try {
    const all = new Map<string, UserWork>();
    for (const tick of ticks) {
      for (const item of tick.items) {
        const work = workOf(tick.users, tick.lane.partition, orgOf(item), userOf(item));
        tick.stepOf.set(item, { work, index: work.steps.length });
        work.steps.push({ item, fresh: [], answers: [] });
      }
      // A user belongs to one partition, so the lanes' users never share a key.
      for (const [key, work] of tick.users) all.set(key, work);
    }
    await resolveRetries(env, all);
    await Promise.all(ticks.map((tick) => loadStates(env, tick.lane, tick.users)));
    const catchUps: Promise<void>[] = [];
    for (const tick of ticks) {
      const active = decideCatchUps(env, tick.lane, tick.users, tick.items);
      if (active instanceof Promise) catchUps.push(active.then((left) => void (tick.active = left)));
      else tick.active = active;
    }
    if (catchUps.length > 0) await Promise.all(catchUps);
    const computed = new Map<string, UserWork>();
    for (const tick of ticks) for (const [key, work] of tick.users) computed.set(key, work);
    const plans = new Map<string, PlanInfo>();
    for (const work of computed.values()) if (!plans.has(work.org)) plans.set(work.org, env.planOf(work.org));
    // Cached contexts (the usual case) are captured at once; only reads make the group wait. Unchanged ones are not
    // even looked up: the owner goes on with the context it has.
    const contextReads: Promise<void>[] = [];
    const epoch = env.contextEpoch?.() ?? -1;
    for (const work of computed.values()) {
      if (!needsCompute(work)) continue;
      const plan = plans.get(work.org) as PlanInfo;
      if (!hasProbes(plan.probes)) continue;
      if (unchangedContext(work, plan, epoch)) {
        work.ctx = null;
        continue;
      }
      const read = captureFor(env, work, plan, epoch);
      if (read !== undefined) contextReads.push(read);
    }
    if (contextReads.length > 0) await Promise.all(contextReads);
    const now = env.now();
    for (const work of computed.values()) work.due = snapshotDue(env, work, plans.get(work.org) as PlanInfo, now);
    const computeStarted = performance.now();
    await compute(env, computed, plans, carried);
    const computeEnded = performance.now();
    // Sequences and cursors are taken now (this group's batch is written after every batch built before it).
    const commitLog = new CommitLog(env.cursors, env.reactions, now);
    const parts: LanePart[] = [];
    for (const tick of ticks) {
      const from = tick.lane.lastSeq;
      const part = buildOps(env, tick.lane, tick.active, tick.stepOf, tick.users, plans, commitLog);
      tick.lane.lastSeq = part.seq;
      allocated.push({ lane: tick.lane, from, to: part.seq });
      parts.push(part);
    }
    log = { commitLog, taken: commitLog.taken() };
    // Handed to the writer now, in build order: written after every group built before it, maybe in one batch with
    // the groups built while an earlier batch was written (writer.ts).
    const handed = performance.now();
    const phases: GroupPhases = { reads: computeStarted - started, compute: computeEnded - computeStarted, build: handed - computeEnded, write: 0 };
    const written = env.writer.write(new TicksWrite(env, ticks, parts, carried, commitLog, allocated, started, handed, phases));
    listener?.built();
    await written;
  } catch (error) {
    const count = ticks.reduce((sum, tick) => sum + tick.items.length, 0);
    env.log(`ingest: tick of partition(s) ${ticks.map((tick) => tick.lane.partition).join(',')} with ${count} item(s) failed: ${describe(error)}`);
    const failure = new ServiceError(5000, 'The events could not be stored; retry.');
    // D40: an item whose own writes cannot be stored is rejected alone; the others of the group go back to their
    // lanes (in order, ahead of what queued meanwhile) for a later group. At least one item leaves each time, so a
    // failure that no item explains (the store itself) still fails the whole group, as before.
    const bad = new Set<LaneItem>();
    for (const tick of ticks) {
      for (const item of tick.active) {
        const why = unstorable(item);
        if (why === undefined) continue;
        bad.add(item);
        env.log(`ingest: an append of ${orgOf(item)}/${userOf(item)} cannot be stored: ${why.message}`);
      }
    }
    // Sequences are reused unless a later group took some meanwhile (a gap in a partition log is harmless).
    for (const { lane, from, to } of allocated) if (lane.lastSeq === to) lane.lastSeq = from;
    log?.commitLog.rollback(log.taken);
    // The snapshots the batch held are lost: each state they hold is also what the stored snapshot plus the user's
    // stored events give (lazy recovery), so nothing is lost but a snapshot.
    forgetCarried(env, carried);
    for (const tick of ticks) {
      // The owners' states of the group's users ran ahead of what is stored: forgotten, loaded again when needed.
      for (const [key, work] of tick.users) {
        env.cache.delete(key);
        env.residents.invalidate(work.partition, key);
      }
      if (bad.size === 0) {
        for (const item of tick.active) item.reject(failure);
        continue;
      }
      for (const item of tick.active) if (bad.has(item)) item.reject(failure);
      handBack(tick.lane, tick.active.filter((item) => !bad.has(item)));
    }
  }
}

/**
 * Whether the owner already holds the user's context as the plan's probes see it now: the user is resident and the
 * context its state was last decided with was captured at this same epoch (no imported data changed since) for this
 * plan version. The owner answers needContext if its state kept none after all (compute.ts sends the data then).
 */
function unchangedContext(work: UserWork, plan: PlanInfo, epoch: number): boolean {
  return epoch >= 0 && work.resident && work.base.ctxEpoch === epoch && work.base.ctxVersion === plan.version;
}

/**
 * Captures the user's imported data for the plan's probes into `work.ctx` (noting the epoch it was taken at, before
 * the lookup: a change committed meanwhile moves it); a promise when the context has to be read first.
 */
export function captureFor(env: TickEnv, work: UserWork, plan: PlanInfo, epoch: number): Promise<void> | undefined {
  work.ctxEpoch = epoch;
  const context = env.contextOf(work.org, work.user);
  if (context instanceof Promise) return captureWhenRead(work, context, plan.probes);
  work.ctx = captureContext(context, plan.probes);
  return undefined;
}

/** A user's imported data captured once read (runTicks): a function, not a callback per user (docs/performance.md). */
async function captureWhenRead(work: UserWork, read: Promise<SegmentContext>, probes: PlanInfo['probes']): Promise<void> {
  work.ctx = captureContext(await read, probes);
}

type LanePart = ReturnType<typeof buildOps>;

/**
 * A group's writes and commit, as the writer takes them (writer.ts). A class, not two closures per group: V8 keeps a
 * closure's optimized code only while a closure holding it lives, so closures made per group were compiled again
 * after every collection (docs/performance.md).
 */
class TicksWrite implements GroupWrite {
  constructor(
    private readonly env: TickEnv,
    private readonly ticks: readonly LaneTick[],
    private readonly parts: readonly LanePart[],
    private readonly carried: readonly CarriedAsks[],
    private readonly commitLog: CommitLog,
    private readonly allocated: readonly { readonly from: number; readonly to: number }[],
    private readonly started: number,
    private readonly handed: number,
    /** Its phases up to the hand-off; `write` is set at the commit. */
    private readonly phases: GroupPhases,
  ) {}

  ops(pending: PendingCounts): BatchOp[] {
    const { env, ticks, parts, commitLog } = this;
    // Snapshots the owners encoded for asks (older than anything of this group: written first, a newer one wins).
    const ops = carriedSnapshotOps(this.carried);
    for (const part of parts) for (const op of part.ops) ops.push(op);
    for (const op of commitLog.ops) ops.push(op);
    for (const op of commitLog.finish()) ops.push(op);
    // D19: counters counted on from the committed counts and those of the groups before it in the same batch
    // (written once for the whole batch by the writer, sizes.ts).
    for (let i = 0; i < ticks.length; i++) env.sizes.count((ticks[i] as LaneTick).lane.partition, (parts[i] as LanePart).deltas, pending);
    return ops;
  }

  commit(): void {
    const { env, ticks, parts } = this;
    for (let i = 0; i < ticks.length; i++) commit(env, ticks[i] as LaneTick, (parts[i] as LanePart).deltas);
    for (const tick of ticks) askEvictedOwn(env, tick);
    try {
      let events = 0;
      for (const { from, to } of this.allocated) events += to - from;
      let snapshots = carriedSnapshots(this.carried);
      for (const tick of ticks) for (const work of tick.users.values()) if (work.snapshotted) snapshots++;
      const end = performance.now();
      const phases: GroupPhases = { ...this.phases, write: end - this.handed };
      env.committed(this.commitLog.committed(events, end - this.started, snapshots, phases));
    } catch (error) {
      env.log(`ingest: a listener of committed batches failed: ${describe(error)}`);
    }
  }
}

/**
 * Users of a committed group evicted by the group's own cache sets (a cache smaller than a group) were skipped as in
 * flight (pipeline.ts `evicted`): they are committed now, so their owner snapshots them (if dirty) and forgets them,
 * like any evicted user.
 */
function askEvictedOwn(env: TickEnv, tick: LaneTick): void {
  for (const work of tick.users.values()) {
    const next = work.next;
    if (next === undefined || env.cache.peek(work.key) === next) continue;
    env.residents.ask(next, { encode: next.dirty, drop: true });
    next.dirty = false;
    tick.lane.flushWanted = true;
  }
}

/** A lane's part of a committed batch: counters before answers (D19), then the cache. */
function commit(env: TickEnv, tick: LaneTick, deltas: SizeDeltas): void {
  const { lane, users } = tick;
  env.sizes.apply(lane.partition, deltas);
  for (const work of users.values()) {
    if (work.next !== undefined) env.cache.set(work.next);
    else if (work.resident) {
      // Its owner keeps no state for a user it did not evaluate (E5), and one whose items left the tick is loaded
      // again when next needed.
      env.cache.delete(work.key);
      env.residents.invalidate(work.partition, work.key);
    }
  }
  env.recentIds.committed(clientIdsOf(tick.users.values()));
  if (env.folder !== undefined) {
    for (const work of users.values()) if (work.fold !== undefined) env.folder.enqueue({ org: work.org, user: work.user, ...work.fold });
  }
  for (const item of tick.active) answer(item, tick.stepOf.get(item) as { work: UserWork; index: number });
}


/**
 * server/backfill/README.md: users behind the plan are caught up in this tick, deferred to the next one, or parked (their items
 * leave the tick, with the user's items queued meanwhile). Answers the items that stay in the tick.
 */
function decideCatchUps(env: TickEnv, lane: Lane, users: Map<string, UserWork>, items: readonly LaneItem[]): readonly LaneItem[] | Promise<readonly LaneItem[]> {
  // Users up to date with every cohort (the usual case) are decided here, without a read.
  let candidates: CatchUpCandidate[] | undefined;
  for (const work of users.values()) {
    const none = upToDate(env.planOf(work.org), work.base.count, work.base.mark);
    if (none !== undefined) {
      work.decision = none;
      continue;
    }
    (candidates ??= []).push({
      org: work.org,
      user: work.user,
      key: work.key,
      items: itemsOf(work),
      count: work.base.count,
      mark: work.base.mark,
      seq: work.base.seq,
    });
  }
  if (candidates === undefined) return items;
  return catchUpThenLeave(env, lane, users, items, candidates);
}

/**
 * decideCatchUps' reads. Module functions rather than callbacks made per call, here and in runTicks: V8 keeps a
 * closure's optimized code only while a closure holding it lives, so those made per group were compiled again after
 * every collection (docs/performance.md).
 */
async function catchUpThenLeave(env: TickEnv, lane: Lane, users: Map<string, UserWork>, items: readonly LaneItem[], candidates: readonly CatchUpCandidate[]): Promise<readonly LaneItem[]> {
  return leaveTick(env, lane, users, items, await planCatchUps(env.store, env.catchUp, candidates, env));
}

function itemsOf(work: UserWork): LaneItem[] {
  const items: LaneItem[] = [];
  for (const step of work.steps) items.push(step.item);
  return items;
}

/** Applies the planned catch-ups: deferred users go back to their lane, parked ones wait off it. */
function leaveTick(env: TickEnv, lane: Lane, users: Map<string, UserWork>, items: readonly LaneItem[], decisions: Map<string, CatchUpDecision>): readonly LaneItem[] {
  const leaving = new Set<LaneItem>();
  for (const work of users.values()) {
    const decision = decisions.get(work.key);
    if (decision === undefined) continue;
    work.decision = decision;
    if (decision.kind !== 'defer' && decision.kind !== 'park') continue;
    const own = work.steps.map((step) => step.item);
    for (const item of own) leaving.add(item);
    users.delete(work.key);
    if (decision.kind === 'defer') handBack(lane, own);
    else env.park(lane, work.org, work.user, own.filter((item) => item.kind !== 'adopt'), work.base.seq);
  }
  return leaving.size === 0 ? items : items.filter((item) => !leaving.has(item));
}

function workOf(users: Map<string, UserWork>, partition: number, org: string, user: string): UserWork {
  const key = userKey(org, user);
  let work = users.get(key);
  if (work === undefined) {
    work = {
      org,
      user,
      key,
      partition,
      steps: [],
      base: { size: 0, memberships: '', seq: 0, count: 0, mark: 0, dirty: false, unsnapshotted: 0, dirtySince: 0, ctxEpoch: -1, ctxVersion: -1 },
      resident: false,
      loaded: null,
      replay: [],
      ctx: EMPTY_CONTEXT_DATA,
      ctxEpoch: -1,
      decision: undefined,
      result: undefined,
      evaluated: false,
      due: false,
      snapshotted: false,
      fold: undefined,
      next: undefined,
    };
    users.set(key, work);
  }
  return work;
}


/** A user with no state and no new event has nothing to evaluate (E5): its answers are empty memberships. */
export function needsCompute(work: UserWork): boolean {
  return work.resident || work.loaded !== null || work.replay.length > 0 || work.steps.some((step) => step.fresh.length > 0);
}

function answer(item: LaneItem, at: { work: UserWork; index: number }): void {
  const { work, index } = at;
  const memberships = work.result?.steps[index]?.memberships ?? [];
  if (item.kind === 'append') {
    const step = work.steps[index] as Step;
    const events = step.answers.map((known) => (known instanceof FreshEvent ? known.toStored() : known));
    item.resolve({ events, memberships });
  } else if (item.kind === 'read') {
    item.resolve(memberships);
  } else {
    item.resolve();
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}
