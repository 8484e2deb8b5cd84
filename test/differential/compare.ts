// Runs a scenario through the engine (one step at a time, with an encode/decode round trip between steps, or events
// in batches; re-evaluations through evaluateAt, E20) and through the reference evaluator, and finds the first step
// where they differ; shrinks a mismatch.

import type { EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import { compilePlan, decodeState, encodeState, evaluateAt, newUserState, nextDeadline, segment, validateQuery } from '../../engine/index.js';
import type { Plan, SegmentResult, UserState } from '../../engine/index.js';
import { ReferenceRun, evaluateReferenceSteps, isReevaluation, listReferencedCodes, type ReferenceCohort } from '../reference/index.js';
import { createRng } from './random.js';
import type { RandomContext } from './events.js';
import type { Scenario, ScenarioInput } from './scenario.js';

/** `batches` also sends an empty batch after each one, which must change nothing (E5). */
export type FeedMode = 'one-by-one' | 'round-trip' | 'batches';

export interface Outcome {
  readonly memberships: readonly number[];
  readonly transitions: readonly Transition[];
}

export interface Mismatch {
  readonly mode: FeedMode;
  /** Index of the last input of the step (the batch) that differs. */
  readonly eventIndex: number;
  readonly expected: Outcome;
  readonly actual: Outcome | { readonly error: string };
}

/** Validation problems of the scenario's queries (each one is a finding: the generator makes valid queries only). */
export function listInvalidQueries(cohorts: readonly ReferenceCohort[]): string[] {
  return cohorts.flatMap((cohort) => {
    const result = validateQuery(cohort.query);
    return result.ok ? [] : [`cohort ${cohort.code} ${JSON.stringify(cohort.query)}: ${JSON.stringify(result.problems)}`];
  });
}

/** The steps of a scenario: runs of consecutive events (sizes derived from the seed in `batches` mode, else 1) and
 * single re-evaluations, as [start, end) ranges of its inputs. */
function stepRanges(scenario: Scenario, mode: FeedMode): Array<[number, number]> {
  const rng = createRng(scenario.seed ^ 0x5eed);
  const ranges: Array<[number, number]> = [];
  const inputs = scenario.inputs;
  for (let start = 0; start < inputs.length; ) {
    if (isReevaluation(inputs[start] as ScenarioInput) || mode !== 'batches') {
      ranges.push([start, start + 1]);
      start++;
      continue;
    }
    let end = start + 1;
    const limit = start + rng.int(1, 7);
    while (end < Math.min(limit, inputs.length) && !isReevaluation(inputs[end] as ScenarioInput)) end++;
    ranges.push([start, end]);
    start = end;
  }
  return ranges;
}

/** The engine's plan for the scenario: active cohorts compiled, inactive ones passed as `inactive` codes (E21). */
export function compileScenarioPlan(cohorts: readonly ReferenceCohort[]): Plan {
  const definitions = cohorts
    .filter((cohort) => cohort.inactive !== true)
    .map((cohort) => {
      const result = validateQuery(cohort.query);
      if (!result.ok) throw new Error(`generated query of cohort ${cohort.code} is invalid: ${JSON.stringify(result.problems)}`);
      return { code: cohort.code, query: result.query };
    });
  const inactive = cohorts.filter((cohort) => cohort.inactive === true).map((cohort) => cohort.code);
  return compilePlan(definitions, 1, { inactive });
}

/** The first step where engine and reference disagree in `mode`, or undefined. */
export function findMismatch(scenario: Scenario, mode: FeedMode): Mismatch | undefined {
  const steps = evaluateReferenceSteps(scenario.cohorts, scenario.inputs, scenario.ctx);
  let plan: Plan;
  let state: UserState;
  try {
    plan = compileScenarioPlan(scenario.cohorts);
    state = newUserState();
  } catch (error) {
    return { mode, eventIndex: 0, expected: { memberships: [], transitions: [] }, actual: { error: describeError(error) } };
  }
  let ctx: SegmentContext = scenario.ctx;
  for (const [start, end] of stepRanges(scenario, mode)) {
    const expected: Outcome = {
      memberships: steps[end - 1]?.memberships ?? [],
      transitions: steps.slice(start, end).flatMap((step) => step.transitions),
    };
    let actual: Outcome;
    try {
      if (mode === 'round-trip') state = decodeState(encodeState(state));
      const first = scenario.inputs[start] as ScenarioInput;
      let result: SegmentResult;
      if (isReevaluation(first)) {
        ctx = first.ctx;
        result = evaluateAt(plan, state, first.evaluateAt, ctx);
      } else {
        result = segment(plan, state, scenario.inputs.slice(start, end) as EngineEvent[], ctx);
      }
      state = result.state;
      actual = {
        memberships: [...result.memberships].sort((a, b) => a - b),
        transitions: result.transitions.map((t) => ({ cohort: t.cohort, kind: t.kind, time: t.time, eventIndex: t.eventIndex < 0 ? -1 : t.eventIndex + start })),
      };
    } catch (error) {
      return { mode, eventIndex: end - 1, expected, actual: { error: describeError(error) } };
    }
    if (JSON.stringify(actual) !== JSON.stringify(expected)) return { mode, eventIndex: end - 1, expected, actual };
    if (mode === 'batches') {
      // E5: nothing is evaluated between events, so an empty batch changes nothing
      const idle = segment(plan, state, [], ctx);
      state = idle.state;
      const after: Outcome = { memberships: [...idle.memberships].sort((a, b) => a - b), transitions: idle.transitions };
      const unchanged: Outcome = { memberships: expected.memberships, transitions: [] };
      if (JSON.stringify(after) !== JSON.stringify(unchanged)) return { mode, eventIndex: end - 1, expected: unchanged, actual: after };
    }
  }
  return undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

/** Drops cohorts (that no other cohort names) and events while the mismatch persists; cheap, bounded passes. */
export function shrinkScenario(scenario: Scenario, mode: FeedMode): Scenario {
  let current = scenario;
  const first = findMismatch(current, mode);
  if (first === undefined) return current;
  current = { ...current, inputs: current.inputs.slice(0, first.eventIndex + 1) };
  const empty: RandomContext = { segments: [], rows: {}, inImportedSegment: () => false, connectionRows: () => [] };
  if (findMismatch({ ...current, ctx: empty }, mode) !== undefined) current = { ...current, ctx: empty };
  for (let pass = 0; pass < 3; pass++) {
    let changed = false;
    for (const cohort of [...current.cohorts].reverse()) {
      const others = current.cohorts.filter((c) => c !== cohort);
      if (others.length === 0 || others.some((c) => listReferencedCodes(c.query).includes(cohort.code))) continue;
      const candidate = { ...current, cohorts: others };
      if (findMismatch(candidate, mode) !== undefined) {
        current = candidate;
        changed = true;
      }
    }
    for (let i = current.inputs.length - 1; i >= 0; i--) {
      if (current.inputs.length === 1) break;
      const candidate = { ...current, inputs: current.inputs.filter((_, j) => j !== i) };
      const mismatch = findMismatch(candidate, mode);
      if (mismatch !== undefined) {
        current = { ...candidate, inputs: candidate.inputs.slice(0, mismatch.eventIndex + 1) };
        changed = true;
      }
    }
    if (!changed) break;
  }
  return current;
}

/** A deadline that came too late (D36): memberships at `deadline - 1` already differ from those after the step. */
export interface LateDeadline {
  /** Index of the input after which the deadline was taken. */
  readonly inputIndex: number;
  readonly deadline: number;
  readonly after: readonly number[];
  readonly atDeadlineMinusOne: readonly number[];
}

/**
 * Whether a cohort reads connections rows against now (E14 `the_last`, `this_session`, `current_view`): such rows
 * enter and leave by the clock, which `nextDeadline` does not cover (SEMANTICS.md E22), so `findLateDeadline` skips
 * those scenarios.
 */
export function readsRowsByClock(cohorts: readonly ReferenceCohort[]): boolean {
  const visit = (value: unknown): boolean => {
    if (Array.isArray(value)) return value.some(visit);
    if (typeof value !== 'object' || value === null) return false;
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'and' || key === 'or') {
        if (visit(inner)) return true;
      } else if (key === 'in_connections_import_segment' || key === 'not_in_connections_import_segment') {
        const during = (inner as { during?: unknown }).during;
        if (during === 'this_session' || during === 'current_view') return true;
        if (typeof during === 'object' && during !== null && 'the_last' in during) return true;
      }
    }
    return false;
  };
  return cohorts.some((cohort) => cohort.inactive !== true && visit(cohort.query));
}

/**
 * D36, never late: after each step (fed one by one), with d = nextDeadline, the reference re-evaluated at d - 1 (when
 * d - 1 is after the step's effective time) keeps the memberships the step left; d is always after that time.
 */
export function findLateDeadline(scenario: Scenario): LateDeadline | undefined {
  const plan = compileScenarioPlan(scenario.cohorts);
  let state = newUserState();
  let ctx: SegmentContext = scenario.ctx;
  const reference = new ReferenceRun(scenario.cohorts, scenario.ctx);
  for (let i = 0; i < scenario.inputs.length; i++) {
    const input = scenario.inputs[i] as ScenarioInput;
    const step = reference.step(input);
    if (isReevaluation(input)) {
      ctx = input.ctx;
      state = evaluateAt(plan, state, input.evaluateAt, ctx).state;
    } else {
      state = segment(plan, state, [input], ctx).state;
    }
    if (state.count === 0) continue;
    const deadline = nextDeadline(plan, state);
    if (!(deadline > state.time)) return { inputIndex: i, deadline, after: step.memberships, atDeadlineMinusOne: [] };
    // No deadline: nothing changes by the clock, however long the silence (a year and more here).
    const at = Number.isFinite(deadline) ? deadline - 1 : state.time + 400 * 86_400_000;
    if (!(at > state.time)) continue;
    const probe = reference.probe({ evaluateAt: at, ctx });
    if (JSON.stringify(probe.memberships) !== JSON.stringify(step.memberships)) {
      return { inputIndex: i, deadline, after: step.memberships, atDeadlineMinusOne: probe.memberships };
    }
  }
  return undefined;
}
