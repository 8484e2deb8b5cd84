// The naive reference evaluator (the oracle of the differential test): after every event (or re-evaluation, E20) it
// recomputes every cohort from the raw query JSON over the whole prefix (engine/SEMANTICS.md). Independent of engine.

import type { EngineEvent, SegmentContext, Transition } from '../../engine/api.js';
import { holdsClause } from './clauses.js';
import { describePoints, type HistoryPoint } from './history.js';

export interface ReferenceCohort {
  code: number;
  /** The raw JSON query of the spec's wire format, assumed valid (not read when the cohort is inactive). */
  query: unknown;
  /** E21: a cohort that exists but is not evaluated (disabled, or offline): never a member, never a transition. */
  inactive?: boolean;
}

export interface ReferenceStep {
  /** Codes of the cohorts the user is in after this step, ascending. */
  memberships: number[];
  /**
   * This step's transitions, by cohort code ascending (E19); `eventIndex` is the index of the step in the input
   * (of the event in `evaluateReference`), -1 for a re-evaluation (E20).
   */
  transitions: Transition[];
}

/** E20: re-evaluate the user at `evaluateAt` with new imported data `ctx` (also used by the events that follow). */
export interface ReferenceReevaluation {
  readonly evaluateAt: number;
  readonly ctx: SegmentContext;
}

/** One input step: an event, or a re-evaluation without an event. */
export type ReferenceInput = EngineEvent | ReferenceReevaluation;

export function isReevaluation(input: ReferenceInput): input is ReferenceReevaluation {
  return 'evaluateAt' in input;
}

/** One step per event: memberships and transitions after events[0..i] (E5, E10, E12). */
export function evaluateReference(
  cohorts: readonly ReferenceCohort[],
  events: readonly EngineEvent[],
  ctx: SegmentContext,
): ReferenceStep[] {
  return evaluateReferenceSteps(cohorts, events, ctx);
}

/** One step per input: events and re-evaluations (E20) in order, `ctx` until a re-evaluation brings another one. */
export function evaluateReferenceSteps(
  cohorts: readonly ReferenceCohort[],
  inputs: readonly ReferenceInput[],
  ctx: SegmentContext,
): ReferenceStep[] {
  const run = new ReferenceRun(cohorts, ctx);
  return inputs.map((input, i) => {
    const step = run.step(input);
    const index = isReevaluation(input) ? -1 : i;
    return { memberships: step.memberships, transitions: step.transitions.map((t) => ({ ...t, eventIndex: index })) };
  });
}

/**
 * A user's timeline evaluated step by step: every step recomputes every cohort over all the points so far (only
 * the memberships after each point are kept, for transition clauses). Transitions carry the point's index.
 */
export class ReferenceRun {
  private readonly order: ReferenceCohort[];
  private readonly byCode: ReferenceCohort[];
  private readonly points: HistoryPoint[] = [];
  /** membershipLog.get(code)[i] = member after point i. */
  private readonly membershipLog: Map<number, boolean[]>;
  private ctx: SegmentContext;

  constructor(cohorts: readonly ReferenceCohort[], ctx: SegmentContext) {
    this.order = orderByDependencies(cohorts);
    this.byCode = [...cohorts].sort((a, b) => a.code - b.code);
    this.membershipLog = new Map(cohorts.map((c) => [c.code, []]));
    this.ctx = ctx;
  }

  /** Points (events and re-evaluations after the first event) taken so far. */
  get length(): number {
    return this.points.length;
  }

  private readonly lookup = (code: number, index: number): boolean => {
    const value = this.membershipLog.get(code)?.[index];
    if (value === undefined) throw new Error(`reference: membership of ${code} at ${index} asked before it is known`);
    return value;
  };

  step(input: ReferenceInput): ReferenceStep {
    if (isReevaluation(input)) {
      this.ctx = input.ctx;
      // E5 / E20: a user with no events is not evaluated.
      if (this.points.length === 0) return { memberships: [], transitions: [] };
      this.points.push({ reevaluateAt: input.evaluateAt });
    } else {
      this.points.push({ event: input });
    }
    const i = this.points.length - 1;
    const history = describePoints(this.points, i);
    for (const cohort of this.order) {
      const member = cohort.inactive === true ? false : holdsQuery(cohort.query, (clause) => holdsClause(clause, history, this.ctx, this.lookup));
      this.membershipLog.get(cohort.code)?.push(member);
    }
    return this.outcome(i, history.now);
  }

  /**
   * The step `input` would make, without keeping it: the run is left as it was (D36: what a re-evaluation at some
   * instant would answer, e.g. just before an engine's deadline).
   */
  probe(input: ReferenceInput): ReferenceStep {
    const ctx = this.ctx;
    const length = this.points.length;
    try {
      return this.step(input);
    } finally {
      this.ctx = ctx;
      this.points.length = length;
      for (const log of this.membershipLog.values()) log.length = Math.min(log.length, length);
    }
  }

  /**
   * Appends a point whose memberships are already known (e.g. from a trusted run of the same cohorts), without
   * evaluating it: lets a benchmark measure steps at a long history without paying for every earlier step.
   */
  seed(input: ReferenceInput, memberships: readonly number[]): void {
    if (isReevaluation(input)) {
      this.ctx = input.ctx;
      if (this.points.length === 0) return;
      this.points.push({ reevaluateAt: input.evaluateAt });
    } else {
      this.points.push({ event: input });
    }
    const members = new Set(memberships);
    for (const cohort of this.order) this.membershipLog.get(cohort.code)?.push(members.has(cohort.code));
  }

  private outcome(i: number, now: number): ReferenceStep {
    const transitions: Transition[] = [];
    const memberships: number[] = [];
    for (const cohort of this.byCode) {
      const after = this.lookup(cohort.code, i);
      const before = i > 0 && this.lookup(cohort.code, i - 1);
      if (after) memberships.push(cohort.code);
      if (after !== before) transitions.push({ cohort: cohort.code, kind: after ? 'entered' : 'exited', time: now, eventIndex: i });
    }
    return { memberships, transitions };
  }
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
    // E21: an inactive cohort's query is not evaluated, so what it names does not matter.
    for (const code of cohort.inactive === true ? [] : listReferencedCodes(cohort.query)) {
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
