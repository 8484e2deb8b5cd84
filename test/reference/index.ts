// The naive reference evaluator (the oracle of the differential test): after every event it recomputes every
// cohort from the raw query JSON over the whole event prefix (engine/SEMANTICS.md). Independent of engine code.

import type { EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import { holdsClause } from './clauses.js';
import { describeHistory } from './history.js';

export interface ReferenceCohort {
  code: number;
  /** The raw JSON query of the spec's wire format, assumed valid. */
  query: unknown;
}

export interface ReferenceStep {
  /** Codes of the cohorts the user is in after this event, ascending. */
  memberships: number[];
  /** This event's transitions, by cohort code ascending (E19); `eventIndex` is the index in the events given. */
  transitions: Transition[];
}

/** One step per event: memberships and transitions after events[0..i] (E5, E10, E12). */
export function evaluateReference(
  cohorts: readonly ReferenceCohort[],
  events: readonly EngineEvent[],
  ctx: SegmentContext,
): ReferenceStep[] {
  const order = orderByDependencies(cohorts);
  const byCode = [...cohorts].sort((a, b) => a.code - b.code);
  /** membershipLog.get(code)[i] = member after event i. */
  const membershipLog = new Map<number, boolean[]>(cohorts.map((c) => [c.code, []]));
  const lookup = (code: number, index: number): boolean => {
    const value = membershipLog.get(code)?.[index];
    if (value === undefined) throw new Error(`reference: membership of ${code} at ${index} asked before it is known`);
    return value;
  };
  const steps: ReferenceStep[] = [];
  events.forEach((_, i) => {
    const history = describeHistory(events, i);
    for (const cohort of order) {
      const member = holdsQuery(cohort.query, (clause) => holdsClause(clause, history, ctx, lookup));
      membershipLog.get(cohort.code)?.push(member);
    }
    const transitions: Transition[] = [];
    const memberships: number[] = [];
    for (const cohort of byCode) {
      const after = lookup(cohort.code, i);
      const before = i > 0 && lookup(cohort.code, i - 1);
      if (after) memberships.push(cohort.code);
      if (after !== before) {
        transitions.push({ cohort: cohort.code, kind: after ? 'entered' : 'exited', time: history.now, eventIndex: i });
      }
    }
    steps.push({ memberships, transitions });
  });
  return steps;
}

/** A query is a clause, `{or: [clauses]}`, or `{and: [clause | {or: [clauses]}]}` (spec "Combining clauses"). */
export function holdsQuery(query: unknown, holds: (clause: unknown) => boolean): boolean {
  const q = query as Record<string, unknown>;
  if (Array.isArray(q['and'])) return (q['and'] as unknown[]).every((item) => holdsQuery(item, holds));
  if (Array.isArray(q['or'])) return (q['or'] as unknown[]).some((clause) => holds(clause));
  return holds(query);
}

/** Every cohort code named by a transition clause anywhere in a raw query. */
export function listReferencedCodes(query: unknown): number[] {
  const codes: number[] = [];
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'].includes(key)) {
          codes.push((inner as { segment: number }).segment);
        } else if (key === 'and' || key === 'or') visit(inner);
      }
    }
  };
  visit(query);
  return codes;
}

/** Cohorts in an order where every cohort comes after the cohorts its transition clauses name (E12). */
function orderByDependencies(cohorts: readonly ReferenceCohort[]): ReferenceCohort[] {
  const byCode = new Map(cohorts.map((c) => [c.code, c]));
  const ordered: ReferenceCohort[] = [];
  const state = new Map<number, 'visiting' | 'done'>();
  const visit = (cohort: ReferenceCohort): void => {
    const seen = state.get(cohort.code);
    if (seen === 'done') return;
    if (seen === 'visiting') throw new Error(`reference: cycle through cohort ${cohort.code}`);
    state.set(cohort.code, 'visiting');
    for (const code of listReferencedCodes(cohort.query)) {
      const dependency = byCode.get(code);
      if (dependency === undefined) throw new Error(`reference: cohort ${cohort.code} names unknown cohort ${code}`);
      visit(dependency);
    }
    state.set(cohort.code, 'done');
    ordered.push(cohort);
  };
  [...cohorts].sort((a, b) => b.code - a.code).forEach(visit); // highest first, so the order is not just "by code"
  return ordered;
}
