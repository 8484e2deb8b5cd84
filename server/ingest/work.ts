// The compute of one partition tick, pure and the same in a piscina worker or inline: per user, decode the state,
// replay the events after its snapshot, catch up cohorts newer than the state (server/backfill/README.md: adopt slots and
// memberships from a replay of the user's history), run each step (events through `segment`, E20), encode. Also
// replays of history alone (a catch-up's source built off the lanes, offline cohorts).

import type { CohortDefinition, EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import {
  adoptSlots,
  compilePlan,
  decodeState,
  encodeState,
  evaluateAt,
  membershipsOf,
  missingSlots,
  newUserState,
  segment,
} from '../../engine/index.js';
import type { Plan, UserState } from '../../engine/index.js';
import { contextFromData, type ContextData } from './context.js';

/** One queued item of a user, in arrival order: an append's new events, a re-evaluation (E20), or a read. */
export type WorkStep =
  | { readonly kind: 'events'; readonly events: readonly EngineEvent[] }
  | { readonly kind: 'evaluate'; readonly now: number }
  | { readonly kind: 'read' };

export interface WorkUser {
  /** The encoded state (the snapshot, or the cached state); null for a user never seen. */
  readonly state: Uint8Array | null;
  /** Stored events after the snapshot's sequence: already logged, their transitions are not reported again. */
  readonly replay: readonly EngineEvent[];
  readonly steps: readonly WorkStep[];
  readonly ctx: ContextData;
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
  readonly events: readonly EngineEvent[];
  readonly stale: readonly number[];
}

/** History replayed into a state alone: `source` (null = empty) then `events`, through the group's plan. */
export interface ReplayItem {
  readonly source: Uint8Array | null;
  readonly events: readonly EngineEvent[];
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

export interface WorkTask {
  readonly groups: readonly WorkGroup[];
  readonly replays?: readonly ReplayGroup[];
}

export interface StepResult {
  readonly transitions: readonly Transition[];
  /** Sorted cohort codes after the step. */
  readonly memberships: readonly number[];
}

export interface UserResult {
  readonly state: Uint8Array;
  /** Events the state has seen; 0 = never evaluated (E5). */
  readonly count: number;
  /** Memberships once the replay is done and before a catch-up, i.e. as last committed (plan cohorts only). */
  readonly previous: readonly number[];
  /** A catch-up's membership changes of stale cohorts (logged as replays); undefined without a catch-up. */
  readonly caughtUp?: readonly Transition[];
  /** Memberships after the catch-up (before the steps). */
  readonly current: readonly number[];
  readonly steps: readonly StepResult[];
}

export type WorkReply =
  | { readonly needPlan: true; readonly orgs: readonly string[] }
  | {
      readonly needPlan?: undefined;
      readonly groups: readonly (readonly UserResult[])[];
      readonly replays?: readonly (readonly ReplayResult[])[];
    };

/** Compiled plans of one executor, the latest version per organization. */
export class PlanCache {
  private readonly plans = new Map<string, Plan>();

  get(org: string, version: number): Plan | undefined {
    const plan = this.plans.get(org);
    return plan !== undefined && plan.version === version ? plan : undefined;
  }

  compile(org: string, version: number, cohorts: readonly CohortDefinition[], inactive: readonly number[] = []): Plan {
    const plan = compilePlan(cohorts, version, { inactive });
    this.plans.set(org, plan);
    return plan;
  }

  drop(org: string): void {
    this.plans.delete(org);
  }
}

export function runWork(task: WorkTask, cache: PlanCache): WorkReply {
  const missing = new Set<string>();
  const planOf = (group: ReplayGroup | WorkGroup): Plan | undefined => {
    const plan =
      cache.get(group.org, group.version) ??
      (group.cohorts !== undefined ? cache.compile(group.org, group.version, group.cohorts, group.inactive) : undefined);
    if (plan === undefined) missing.add(group.org);
    return plan;
  };
  const plans = task.groups.map(planOf);
  const replayPlans = (task.replays ?? []).map(planOf);
  if (missing.size > 0) return { needPlan: true, orgs: [...missing] };
  const groups = task.groups.map((group, g) => group.users.map((user) => runUser(plans[g] as Plan, user)));
  if (task.replays === undefined) return { groups };
  const replays = task.replays.map((group, g) => group.items.map((item) => runReplay(replayPlans[g] as Plan, item)));
  return { groups, replays };
}

function runReplay(plan: Plan, item: ReplayItem): ReplayResult {
  const state = item.source === null ? newUserState() : decodeState(item.source);
  if (item.events.length > 0) segment(plan, state, item.events, contextFromData(item.ctx));
  else missingSlots(plan, state);
  return { state: encodeState(state), count: state.count, memberships: membershipsOf(state) };
}

function runUser(plan: Plan, user: WorkUser): UserResult {
  let state = user.state === null ? newUserState() : decodeState(user.state);
  const ctx = contextFromData(user.ctx);
  if (user.replay.length > 0) segment(plan, state, user.replay, ctx);
  // Binding first: memberships of cohorts the plan lacks (disabled, deleted) are dropped, never counted (D19).
  const missing = missingSlots(plan, state);
  const previous = membershipsOf(state);
  let caughtUp: Transition[] | undefined;
  if (user.catchup !== undefined) caughtUp = catchUp(plan, state, user.catchup, missing, previous, ctx);
  const current = membershipsOf(state);
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
  const result = { state: encodeState(state), count: state.count, previous, current, steps };
  return caughtUp === undefined ? result : { ...result, caughtUp };
}

/** server/backfill/README.md: adopts the missing slots and the stale cohorts' memberships; answers their changes (time = now). */
function catchUp(plan: Plan, state: UserState, work: CatchUp, missing: readonly string[], before: readonly number[], ctx: SegmentContext): Transition[] {
  const source = work.source === null ? newUserState() : decodeState(work.source);
  if (work.events.length > 0) segment(plan, source, work.events, ctx);
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
