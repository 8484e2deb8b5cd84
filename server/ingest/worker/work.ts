// The compute of a partition owner (server/ingest/README.md), the same in a piscina worker or inline: the owner keeps
// its users' decoded states resident (`Residents`); per user of a task, take the resident state (or the one the main
// thread loaded: snapshot + the events after it), catch up cohorts newer than the state (server/backfill/README.md:
// adopt slots and memberships from a replay of the user's history), run each step (events through `segment`, E20).
// States are encoded only for snapshots the main thread asks for. Also replays of history alone (a catch-up's
// source built off the lanes, offline cohorts), which touch no resident state.

import type { CohortDefinition, EngineEvent, SegmentContext, Transition } from '../../../engine/api.js';
import {
  adoptSlots,
  compilePlan,
  decodeState,
  encodeState,
  evaluateAt,
  membershipsOf,
  missingSlots,
  newUserState,
  nextDeadline,
  segment,
} from '../../../engine/index.js';
import type { Plan, UserState } from '../../../engine/index.js';
import { unpackEngineEvents, type PackedEvents } from '../../domain/events/record.js';
import { contextFromData, type ContextData } from '../tick/context.js';
import { referencesOf } from '../plan-info.js';
import type { ResidentStates } from './resident-states.js';
import { residentBytes } from '../state/bytes.js';

/** One queued item of a user, in arrival order: an append's new events, a re-evaluation (E20), or a read. */
export type WorkStep =
  | { readonly kind: 'events'; readonly events: readonly EngineEvent[] }
  | { readonly kind: 'evaluate'; readonly now: number }
  | { readonly kind: 'read' };

export interface WorkUser {
  /** The user's key (state/cache.ts userKey): its resident state's name in the owner. */
  readonly key: string;
  /** Use the owner's resident state; otherwise `state` + `replay` replace whatever the owner holds. */
  readonly resident: boolean;
  /** The encoded state (the snapshot); null for a user never seen. Ignored when resident. */
  readonly state: Uint8Array | null;
  /** Stored events after the snapshot's sequence: already logged, their transitions are not reported again. */
  readonly replay: readonly EngineEvent[];
  /** Answer the encoded state after the steps (a snapshot is due). */
  readonly snapshot: boolean;
  readonly steps: readonly WorkStep[];
  /**
   * The user's imported data (D27) as the plan's probes see it; null for a resident user whose imported data has not
   * changed since the owner last decided it (tick.ts): the owner goes on with the context its state was last decided
   * with (engine UserState.context), so unchanged data crosses no thread and is compared with nothing.
   */
  readonly ctx: ContextData | null;
  /** Before the steps: bring cohorts `stale` up to date from `source` once it has replayed `events`. */
  readonly catchup?: CatchUp;
}

/**
 * A catch-up (server/backfill/README.md): `source` (null = an empty state) replays `events` through the plan, after which it has
 * seen exactly the events the user's state has; the state then adopts its missing slots and the memberships of the
 * `stale` cohorts (whose generation is newer than the state's mark).
 */
export interface CatchUp {
  readonly source: Uint8Array | null;
  readonly events: PackedEvents;
  readonly stale: readonly number[];
}

/** History replayed into a state alone: `source` (null = empty) then `events`, through the group's plan. */
export interface ReplayItem {
  readonly source: Uint8Array | null;
  readonly events: PackedEvents;
  readonly ctx: ContextData;
}

export interface ReplayGroup {
  /** The plan's key in the executor's cache: an organization, or a pseudo one (offline plans). */
  readonly org: string;
  readonly version: number;
  readonly cohorts?: readonly CohortDefinition[];
  readonly inactive?: readonly number[] | undefined;
  readonly items: readonly ReplayItem[];
}

export interface ReplayResult {
  readonly state: Uint8Array;
  readonly count: number;
  readonly memberships: readonly number[];
}

export interface WorkGroup {
  readonly org: string;
  readonly version: number;
  /** Attached when the executor answered that it lacks the plan of this (org, version). */
  readonly cohorts?: readonly CohortDefinition[];
  readonly inactive?: readonly number[] | undefined;
  readonly users: readonly WorkUser[];
}

/** A resident state to encode before the task's compute (a write-behind snapshot), then forget when `drop`. */
export interface SnapshotAsk {
  readonly key: string;
  readonly drop: boolean;
}

export interface WorkTask {
  readonly groups: readonly WorkGroup[];
  readonly replays?: readonly ReplayGroup[];
  /** Resident states to forget first (evicted clean, or invalidated by a failed batch). */
  readonly drops?: readonly string[];
  /** Resident states to encode (and maybe forget) before the compute: they are as last committed. */
  readonly snapshots?: readonly SnapshotAsk[];
}

export interface StepResult {
  readonly transitions: readonly Transition[];
  /** Sorted cohort codes after the step. */
  readonly memberships: readonly number[];
}

export interface UserResult {
  /** The encoded state, when a snapshot was asked for. */
  readonly state?: Uint8Array;
  /** Bytes the resident state holds (an estimate, for the main thread's byte-bounded LRU, D40). */
  readonly bytes: number;
  /** Events the state has seen; 0 = never evaluated (E5). */
  readonly count: number;
  /** Memberships once the replay is done and before a catch-up, i.e. as last committed (plan cohorts only). */
  readonly previous: readonly number[];
  /** A catch-up's membership changes of stale cohorts (logged as replays); undefined without a catch-up. */
  readonly caughtUp?: readonly Transition[];
  /** Memberships after the catch-up (before the steps). */
  readonly current: readonly number[];
  /** D36: the state's next deadline as last committed (before any step) and after the steps; +Infinity: none. */
  readonly deadlineBefore: number;
  readonly deadline: number;
  readonly steps: readonly StepResult[];
}

export type WorkReply =
  | { readonly needPlan: true; readonly orgs: readonly string[]; readonly lost?: undefined }
  /**
   * Users asked for as resident that the owner does not hold (its thread was restarted): nothing was run. With
   * `needContext`, what was lost is only their context: users sent without their imported data (`ctx` null) whose
   * state keeps none to go on with (its last call failed, or it was bound to a new plan since); they are sent again
   * with their data.
   */
  | { readonly needPlan?: undefined; readonly lost: readonly string[]; readonly needContext?: true }
  | {
      readonly needPlan?: undefined;
      readonly lost?: undefined;
      readonly groups: readonly (readonly UserResult[])[];
      readonly replays?: readonly (readonly ReplayResult[])[];
      /** One per `snapshots` ask: the encoded state, or null when the owner does not hold it. */
      readonly snapshots?: readonly (Uint8Array | null)[];
    };

/** The states an owner keeps (resident-states.ts), by user key; the main thread decides what enters and leaves (state/cache.ts). */
export type Residents = ResidentStates;

interface Compiled {
  readonly cohorts: readonly CohortDefinition[];
  readonly inactive: readonly number[];
  /** Plans of parts of the cohorts (catch-ups), by their sorted codes. */
  readonly parts: Map<string, Plan>;
}

/** Compiled plans of one executor, the latest version per organization. */
export class PlanCache {
  private readonly plans = new Map<string, Plan>();
  private readonly compiled = new WeakMap<Plan, Compiled>();

  get(org: string, version: number): Plan | undefined {
    const plan = this.plans.get(org);
    return plan !== undefined && plan.version === version ? plan : undefined;
  }

  compile(org: string, version: number, cohorts: readonly CohortDefinition[], inactive: readonly number[] = []): Plan {
    const plan = compilePlan(cohorts, version, { inactive });
    this.plans.set(org, plan);
    this.compiled.set(plan, { cohorts, inactive, parts: new Map() });
    return plan;
  }

  /**
   * server/backfill/README.md: the plan of the cohorts `codes` and of those they name (transitively: a transition
   * slot needs its cohort's memberships), which a catch-up replays history through instead of the whole plan. Slot
   * ids are digests of their clauses, so its slots are the plan's slots of those cohorts.
   */
  partOf(plan: Plan, codes: readonly number[]): Plan {
    const compiled = this.compiled.get(plan);
    if (compiled === undefined) return plan;
    const name = [...codes].sort((a, b) => a - b).join(',');
    let part = compiled.parts.get(name);
    if (part === undefined) {
      const byCode = new Map(compiled.cohorts.map((cohort) => [cohort.code, cohort]));
      const wanted = new Set<number>();
      const visit = (code: number): void => {
        const cohort = byCode.get(code);
        if (cohort === undefined || wanted.has(code)) return;
        wanted.add(code);
        for (const named of referencesOf(cohort)) visit(named);
      };
      for (const code of codes) visit(code);
      part = wanted.size === compiled.cohorts.length ? plan : compilePlan(compiled.cohorts.filter((cohort) => wanted.has(cohort.code)), plan.version, { inactive: compiled.inactive });
      compiled.parts.set(name, part);
    }
    return part;
  }

  drop(org: string): void {
    this.plans.delete(org);
  }
}

/**
 * Runs a task on its owner. Loops and module functions rather than callbacks: closures made per task lose their
 * optimized code at each collection (V8 keeps it only while a closure holding it lives; docs/performance.md).
 */
export function runWork(task: WorkTask, cache: PlanCache, residents: Residents): WorkReply {
  const missing = new Set<string>();
  const plans: (Plan | undefined)[] = [];
  for (const group of task.groups) plans.push(planOfGroup(group, cache, missing));
  const replayPlans: (Plan | undefined)[] = [];
  for (const group of task.replays ?? []) replayPlans.push(planOfGroup(group, cache, missing));
  if (missing.size > 0) return { needPlan: true, orgs: [...missing] };
  const lost: string[] = [];
  for (const group of task.groups) for (const user of group.users) if (user.resident && !residents.has(user.key)) lost.push(user.key);
  if (lost.length > 0) return { lost };
  const needContext = usersWithoutContext(task, residents);
  if (needContext !== undefined) return { lost: needContext, needContext: true };
  for (const key of task.drops ?? []) residents.delete(key);
  let snapshots: (Uint8Array | null)[] | undefined;
  if (task.snapshots !== undefined) {
    snapshots = [];
    for (const ask of task.snapshots) {
      const bytes = residents.encode(ask.key);
      if (ask.drop) residents.delete(ask.key);
      snapshots.push(bytes ?? null);
    }
  }
  const groups: UserResult[][] = [];
  for (let g = 0; g < task.groups.length; g++) {
    const results: UserResult[] = [];
    for (const user of (task.groups[g] as WorkGroup).users) results.push(runUser(plans[g] as Plan, user, residents, cache));
    groups.push(results);
  }
  let replays: ReplayResult[][] | undefined;
  if (task.replays !== undefined) {
    replays = [];
    for (let g = 0; g < task.replays.length; g++) {
      const results: ReplayResult[] = [];
      for (const item of (task.replays[g] as ReplayGroup).items) results.push(runReplay(replayPlans[g] as Plan, item));
      replays.push(results);
    }
  }
  return { groups, ...(replays === undefined ? {} : { replays }), ...(snapshots === undefined ? {} : { snapshots }) };
}

/** Users sent without their imported data whose resident state holds no context to go on with; undefined: none. */
function usersWithoutContext(task: WorkTask, residents: Residents): string[] | undefined {
  let keys: string[] | undefined;
  for (const group of task.groups) {
    for (const user of group.users) {
      if (user.ctx === null && !(user.resident && residents.peek(user.key)?.context !== undefined)) (keys ??= []).push(user.key);
    }
  }
  return keys;
}

/** The group's plan from the cache, compiled when the group carries its cohorts; undefined (and noted) when neither. */
function planOfGroup(group: ReplayGroup | WorkGroup, cache: PlanCache, missing: Set<string>): Plan | undefined {
  const plan =
    cache.get(group.org, group.version) ??
    (group.cohorts !== undefined ? cache.compile(group.org, group.version, group.cohorts, group.inactive) : undefined);
  if (plan === undefined) missing.add(group.org);
  return plan;
}

function runReplay(plan: Plan, item: ReplayItem): ReplayResult {
  const state = item.source === null ? newUserState() : decodeState(item.source);
  if (item.events.count > 0) segment(plan, state, unpackEngineEvents(item.events, plan.eventPropertyKeys), contextFromData(item.ctx));
  else missingSlots(plan, state);
  return { state: encodeState(state), count: state.count, memberships: membershipsOf(state) };
}

function runUser(plan: Plan, user: WorkUser, residents: Residents, cache: PlanCache): UserResult {
  let state: UserState;
  let ctx: SegmentContext;
  if (user.resident) {
    state = residents.get(user.key) as UserState;
    // Unchanged imported data (null; runWork checked the state keeps its context) or the same data as at the user's
    // last step: the same constant context (tick/context.ts).
    ctx = user.ctx === null ? (state.context as SegmentContext) : contextFromData(user.ctx, state.context);
  } else {
    // Never null here: runWork answers needContext for a user sent without data that is not resident.
    ctx = contextFromData(user.ctx as ContextData);
    // A state the main thread loaded replaces whatever this owner held (its state may be ahead of the committed one).
    residents.delete(user.key);
    state = user.state === null ? newUserState() : decodeState(user.state);
    if (user.replay.length > 0) segment(plan, state, user.replay, ctx);
  }
  // Binding first: memberships of cohorts the plan lacks (disabled, deleted) are dropped, never counted (D19).
  const missing = missingSlots(plan, state);
  const previous = membershipsOf(state);
  const deadlineBefore = nextDeadline(plan, state);
  let caughtUp: Transition[] | undefined;
  if (user.catchup !== undefined) caughtUp = catchUp(plan, state, user.catchup, missing, previous, ctx, cache);
  // Without a catch-up nothing has moved since `previous` was read.
  const current = caughtUp === undefined ? previous : membershipsOf(state);
  const steps: StepResult[] = [];
  for (const step of user.steps) {
    if (step.kind === 'events') {
      const result = segment(plan, state, step.events, ctx);
      steps.push({ transitions: result.transitions, memberships: result.memberships });
    } else if (step.kind === 'evaluate' && state.count > 0) {
      const result = evaluateAt(plan, state, step.now, ctx);
      state = result.state;
      steps.push({ transitions: [...result.transitions], memberships: [...result.memberships] });
    } else {
      // A read, or a re-evaluation of a user with no events (E5): nothing is evaluated.
      steps.push({ transitions: [], memberships: membershipsOf(state) });
    }
  }
  // A user with no events keeps no state (E5): nothing was evaluated, nothing to hold.
  if (state.count > 0) residents.set(user.key, state);
  const deadline = nextDeadline(plan, state);
  const result = {
    bytes: residentBytes(state),
    count: state.count,
    previous,
    current,
    steps,
    deadlineBefore,
    deadline,
    ...(user.snapshot ? { state: encodeState(state) } : {}),
  };
  return caughtUp === undefined ? result : { ...result, caughtUp };
}

/**
 * server/backfill/README.md: replays the history through the stale cohorts' part of the plan (the whole plan when
 * the part cannot give every missing slot whole), adopts the missing slots and the stale cohorts' memberships; answers their changes
 * (time = now).
 */
function catchUp(
  plan: Plan,
  state: UserState,
  work: CatchUp,
  missing: readonly string[],
  before: readonly number[],
  ctx: SegmentContext,
  cache: PlanCache,
): Transition[] {
  // Each replay decodes only the properties its plan reads (Plan.eventPropertyKeys: often one or two of many).
  const replay = (through: Plan): UserState => {
    const replayed = work.source === null ? newUserState() : decodeState(work.source);
    const events = unpackEngineEvents(work.events, through.eventPropertyKeys);
    if (events.length > 0) segment(through, replayed, events, ctx);
    return replayed;
  };
  const part = cache.partOf(plan, work.stale);
  let source = replay(part);
  if (part !== plan) {
    // Bound to the whole plan, the replayed state must hold every missing slot whole (a slot outside the part, or
    // a ring the part keeps shorter than a cohort outside it needs, would be adopted short): else the whole plan.
    const short = new Set(missingSlots(plan, source));
    if (missing.some((key) => short.has(key))) source = replay(plan);
  }
  if (source.count !== state.count) {
    throw new Error(`catch-up source has seen ${source.count} events where the state has seen ${state.count}`);
  }
  adoptSlots(plan, state, source, missing, work.stale);
  const after = new Set(membershipsOf(state));
  const was = new Set(before);
  const transitions: Transition[] = [];
  for (const code of [...work.stale].sort((a, b) => a - b)) {
    if (was.has(code) === after.has(code)) continue;
    transitions.push({ cohort: code, kind: after.has(code) ? 'entered' : 'exited', time: state.time, eventIndex: -1 });
  }
  return transitions;
}
