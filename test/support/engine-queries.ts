// Builders of validated query ASTs and events for the engine's tests (the validator is not needed to build them).

import type { CohortDefinition, EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import { EMPTY_CONTEXT } from '../../engine/api.js';
import type { Clause, Condition, During, NumberComparison, Predicate, Query, Where } from '../../engine/query/ast.js';
import { compilePlan } from '../../engine/plan/compile.js';
import type { Plan } from '../../engine/plan/plan.js';
import { segment } from '../../engine/state/segment.js';
import { newUserState, type UserState } from '../../engine/state/user-state.js';

export const T0 = Date.UTC(2026, 0, 1);
export const SECOND = 1000;
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

export const gte = (value: number): NumberComparison => ({ op: 'greater_than_or_equal_to', value });
export const gt = (value: number): NumberComparison => ({ op: 'greater_than', value });
export const lt = (value: number): NumberComparison => ({ op: 'less_than', value });
export const lte = (value: number): NumberComparison => ({ op: 'less_than_or_equal_to', value });
export const eq = (...values: number[]): NumberComparison => ({ op: 'equal_to', values });
export const ne = (...values: number[]): NumberComparison => ({ op: 'not_equal_to', values });
export const between = (start: number, end: number): NumberComparison => ({ op: 'between', start, end });

export const theLast = (ms: number): During => ({ kind: 'the_last', value: ms / 1000, unit: 'seconds', ms });

/** A predicate on `properties.<dotted>` (or a relative path when `relative`). */
export function pred(property: string, condition: Condition, relative = false): Predicate {
  const segments = property.split('.');
  return { kind: 'predicate', property, path: relative ? segments : segments.slice(1), condition };
}

export const str = (op: 'equal_to' | 'not_equal_to' | 'contains' | 'does_not_contain', ...values: string[]): Condition => ({
  family: 'string',
  op,
  values,
});

export function expr(event: string, options: { frequency?: NumberComparison; during?: During; where?: Where } = {}): Clause {
  return { kind: 'expression', event, frequency: options.frequency ?? gte(1), ...(options.during && { during: options.during }), ...(options.where && { where: options.where }) };
}

/** A query: each item is an `and` group, given as one clause or a list of alternatives. */
export function query(...groups: (Clause | Clause[])[]): Query {
  return { and: groups.map((group) => ({ or: Array.isArray(group) ? group : [group] })) };
}

export function cohort(code: number, ...groups: (Clause | Clause[])[]): CohortDefinition {
  return { code, query: query(...groups) };
}

export function ev(name: string, time: number, properties: Record<string, unknown> = {}, ids: { session_id?: string | null; view_id?: string | null } = {}): EngineEvent {
  return { name, time, properties, ...ids };
}

export interface Run {
  readonly plan: Plan;
  readonly state: UserState;
  /** Memberships after each event. */
  readonly after: number[][];
  readonly transitions: Transition[];
}

/** Feeds events one call each and records memberships after every event. */
export function runEvents(cohorts: readonly CohortDefinition[], events: readonly EngineEvent[], ctx: SegmentContext = EMPTY_CONTEXT): Run {
  const plan = compilePlan(cohorts, 1);
  const state = newUserState();
  const after: number[][] = [];
  const transitions: Transition[] = [];
  events.forEach((event, index) => {
    const result = segment(plan, state, [event], ctx);
    after.push(result.memberships);
    for (const t of result.transitions) transitions.push({ ...t, eventIndex: index });
  });
  return { plan, state, after, transitions };
}

/** Whether cohort `code` held after each event. */
export function holdsAfter(run: Run, code: number): boolean[] {
  return run.after.map((codes) => codes.includes(code));
}
