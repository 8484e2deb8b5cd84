// The compute of one partition tick, pure and the same in a piscina worker or inline: per user, decode the state,
// replay the events after its snapshot, run each step (events through `segment`, E20 re-evaluation), encode.

import * as engine from '../../engine/index.js';
import type { CohortDefinition, EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import { compilePlan, decodeState, encodeState, membershipsOf, newUserState, segment } from '../../engine/index.js';
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
}

export interface WorkGroup {
  readonly org: string;
  readonly version: number;
  /** Attached when the executor answered that it lacks the plan of this (org, version). */
  readonly cohorts?: readonly CohortDefinition[];
  readonly users: readonly WorkUser[];
}

export interface WorkTask {
  readonly groups: readonly WorkGroup[];
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
  /** Memberships once the replay is done, i.e. as last committed: the base of the size deltas. */
  readonly previous: readonly number[];
  readonly steps: readonly StepResult[];
}

export type WorkReply =
  | { readonly needPlan: true; readonly orgs: readonly string[] }
  | { readonly needPlan?: undefined; readonly groups: readonly (readonly UserResult[])[] };

/** E20's entry point as the engine will export it. */
export type EvaluateAt = (
  plan: Plan,
  state: UserState,
  now: number,
  ctx: SegmentContext,
) => { readonly state: UserState; readonly transitions: readonly Transition[]; readonly memberships: readonly number[] };

/** The engine's `evaluateAt` (E20), or undefined while the engine does not export it yet. */
export function findEvaluateAt(): EvaluateAt | undefined {
  const candidate = (engine as unknown as Record<string, unknown>)['evaluateAt'];
  return typeof candidate === 'function' ? (candidate as EvaluateAt) : undefined;
}

export const NO_EVALUATE_AT = 'the engine does not export evaluateAt (E20) yet: re-evaluation is unavailable';

/** Compiled plans of one executor, the latest version per organization. */
export class PlanCache {
  private readonly plans = new Map<string, Plan>();

  get(org: string, version: number): Plan | undefined {
    const plan = this.plans.get(org);
    return plan !== undefined && plan.version === version ? plan : undefined;
  }

  compile(org: string, version: number, cohorts: readonly CohortDefinition[]): Plan {
    const plan = compilePlan(cohorts, version);
    this.plans.set(org, plan);
    return plan;
  }

  drop(org: string): void {
    this.plans.delete(org);
  }
}

export function runWork(task: WorkTask, cache: PlanCache): WorkReply {
  const plans: Plan[] = [];
  const missing: string[] = [];
  for (const group of task.groups) {
    const plan = cache.get(group.org, group.version) ?? (group.cohorts !== undefined ? cache.compile(group.org, group.version, group.cohorts) : undefined);
    if (plan === undefined) missing.push(group.org);
    else plans.push(plan);
  }
  if (missing.length > 0) return { needPlan: true, orgs: missing };
  return { groups: task.groups.map((group, g) => group.users.map((user) => runUser(plans[g] as Plan, user))) };
}

function runUser(plan: Plan, user: WorkUser): UserResult {
  let state = user.state === null ? newUserState() : decodeState(user.state);
  const ctx = contextFromData(user.ctx);
  if (user.replay.length > 0) segment(plan, state, user.replay, ctx);
  const previous = membershipsOf(state);
  const steps: StepResult[] = [];
  for (const step of user.steps) {
    if (step.kind === 'events') {
      const result = segment(plan, state, step.events, ctx);
      steps.push({ transitions: result.transitions, memberships: result.memberships });
    } else if (step.kind === 'evaluate' && state.count > 0) {
      const evaluateAt = findEvaluateAt();
      if (evaluateAt === undefined) throw new Error(NO_EVALUATE_AT);
      const result = evaluateAt(plan, state, step.now, ctx);
      state = result.state;
      steps.push({ transitions: [...result.transitions], memberships: [...result.memberships] });
    } else {
      // A read, or a re-evaluation of a user with no events (E5): nothing is evaluated.
      steps.push({ transitions: [], memberships: membershipsOf(state) });
    }
  }
  return { state: encodeState(state), count: state.count, previous, steps };
}
