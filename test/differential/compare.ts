// Runs a scenario through the engine (one event at a time, with an encode/decode round trip between events, or in
// batches) and through the reference evaluator, and finds the first step where they differ; shrinks a mismatch.

import type { EngineEvent, Transition } from '../../engine/api.js';
import { compilePlan, decodeState, encodeState, newUserState, segment, validateQuery } from '../../engine/index.js';
import { evaluateReference, listReferencedCodes, type ReferenceCohort } from '../reference/index.js';
import { createRng } from './random.js';
import type { RandomContext } from './events.js';
import type { Scenario } from './scenario.js';

/** `batches` also sends an empty batch after each one, which must change nothing (E5). */
export type FeedMode = 'one-by-one' | 'round-trip' | 'batches';

export interface Outcome {
  readonly memberships: readonly number[];
  readonly transitions: readonly Transition[];
}

export interface Mismatch {
  readonly mode: FeedMode;
  /** Index of the last event of the step (the batch) that differs. */
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

/** The batch sizes used by the `batches` mode, derived from the seed. */
function batchBoundaries(seed: number, count: number): number[] {
  const rng = createRng(seed ^ 0x5eed);
  const ends: number[] = [];
  for (let end = 0; end < count; ) {
    end = Math.min(count, end + rng.int(1, 7));
    ends.push(end);
  }
  return ends;
}

/** The first step where engine and reference disagree in `mode`, or undefined. */
export function findMismatch(scenario: Scenario, mode: FeedMode): Mismatch | undefined {
  const steps = evaluateReference(scenario.cohorts, scenario.events, scenario.ctx);
  const definitions = scenario.cohorts.map((cohort) => {
    const result = validateQuery(cohort.query);
    if (!result.ok) throw new Error(`generated query of cohort ${cohort.code} is invalid: ${JSON.stringify(result.problems)}`);
    return { code: cohort.code, query: result.query };
  });
  const ends = mode === 'batches' ? batchBoundaries(scenario.seed, scenario.events.length) : scenario.events.map((_, i) => i + 1);
  let plan: ReturnType<typeof compilePlan>;
  let state: ReturnType<typeof newUserState>;
  try {
    plan = compilePlan(definitions, 1);
    state = newUserState();
  } catch (error) {
    return { mode, eventIndex: 0, expected: { memberships: [], transitions: [] }, actual: { error: describeError(error) } };
  }
  let start = 0;
  for (const end of ends) {
    const expected: Outcome = {
      memberships: steps[end - 1]?.memberships ?? [],
      transitions: steps.slice(start, end).flatMap((step) => step.transitions),
    };
    let actual: Outcome;
    try {
      if (mode === 'round-trip') state = decodeState(encodeState(state));
      const result = segment(plan, state, scenario.events.slice(start, end) as EngineEvent[], scenario.ctx);
      state = result.state;
      actual = {
        memberships: [...result.memberships].sort((a, b) => a - b),
        transitions: result.transitions.map((t) => ({ cohort: t.cohort, kind: t.kind, time: t.time, eventIndex: t.eventIndex + start })),
      };
    } catch (error) {
      return { mode, eventIndex: end - 1, expected, actual: { error: describeError(error) } };
    }
    if (JSON.stringify(actual) !== JSON.stringify(expected)) return { mode, eventIndex: end - 1, expected, actual };
    if (mode === 'batches') {
      // E5: nothing is evaluated between events, so an empty batch changes nothing
      const idle = segment(plan, state, [], scenario.ctx);
      state = idle.state;
      const after: Outcome = { memberships: [...idle.memberships].sort((a, b) => a - b), transitions: idle.transitions };
      const unchanged: Outcome = { memberships: expected.memberships, transitions: [] };
      if (JSON.stringify(after) !== JSON.stringify(unchanged)) return { mode, eventIndex: end - 1, expected: unchanged, actual: after };
    }
    start = end;
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
  current = { ...current, events: current.events.slice(0, first.eventIndex + 1) };
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
    for (let i = current.events.length - 1; i >= 0; i--) {
      if (current.events.length === 1) break;
      const candidate = { ...current, events: current.events.filter((_, j) => j !== i) };
      const mismatch = findMismatch(candidate, mode);
      if (mismatch !== undefined) {
        current = { ...candidate, events: candidate.events.slice(0, mismatch.eventIndex + 1) };
        changed = true;
      }
    }
    if (!changed) break;
  }
  return current;
}
