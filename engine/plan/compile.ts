// compilePlan: cohorts -> one immutable Plan. Each slot-backed clause gets a canonical slot key (identical clauses
// across cohorts share one slot), slots sharing an event name and `where` share one evaluation per event, and
// cohorts are ordered so that the cohorts a transition clause names come first (D18, E12).

import type { CohortDefinition } from '../api.js';
import { EngineError } from '../errors.js';
import type { Clause, During, Query, Where } from '../query/ast.js';
import { EngagedCompletionSlot } from '../state/slots/engaged-completion.js';
import { ENGAGEMENT_EVENT, EngagedTimeSlot } from '../state/slots/engaged-time.js';
import { EngagedViewsSlot } from '../state/slots/engaged-views.js';
import { ExpressionSlot } from '../state/slots/expression.js';
import { TransitionSlot } from '../state/slots/transition.js';
import { isTransitionSlot, type SlotDef } from '../state/slots/types.js';
import { canonicalJson, digestOf, slotIdOf } from './canonical.js';
import { compileComparison, countCap } from './comparison.js';
import { compileWhere, whereParts, whereTest } from './conditions/index.js';
import { compileConnections } from './connections.js';
import { ContextMemo } from './context-memo.js';
import { orderCohorts } from './order.js';
import { eventPropertyKeysOf } from './property-keys.js';
import { NOT_STICKY, finalAboveOf, stickyAnswerOf } from './sticky.js';
import { Plan, type ClauseShape, type ClauseTest, type CompiledCohort, type FilterGroup } from './plan.js';

/** A slot-backed clause before slots are built: its key, the count cap it needs, and how to build the slot. */
interface SlotRequest {
  readonly key: string;
  /** The event name whose events update the slot (undefined: transition slots). */
  readonly event: string | undefined;
  readonly cap: number;
  readonly build: (key: string, id: number, cap: number) => SlotDef;
  readonly where: Where | undefined;
}

export interface CompileOptions {
  /**
   * E21: codes of cohorts that exist but are not evaluated (disabled or offline, D19, D20). A transition clause
   * naming one sees no entries or exits, ever. A code named by a transition clause that is neither in the plan nor
   * here is ENGINE_UNKNOWN_COHORT.
   */
  readonly inactive?: readonly number[];
  /**
   * Generate the plan's hot paths as code (state/generated.ts; default true). False keeps the generic loops: same
   * answers, slower; the tests compare both.
   */
  readonly generateCode?: boolean;
}

export function compilePlan(cohorts: readonly CohortDefinition[], version: number, options: CompileOptions = {}): Plan {
  const inactive = new Set(options.inactive ?? []);
  const references = new Map<number, number[]>();
  for (const cohort of cohorts) {
    if (references.has(cohort.code)) {
      throw new EngineError('ENGINE_INVALID_QUERY', `cohort code ${cohort.code} appears twice`, String(cohort.code));
    }
    if (inactive.has(cohort.code)) {
      throw new EngineError('ENGINE_INVALID_QUERY', `cohort code ${cohort.code} is both in the plan and inactive`, String(cohort.code));
    }
    // Inactive cohorts are not evaluated, so they impose no order (and cannot be part of a cycle).
    references.set(cohort.code, referencesOf(cohort.query).filter((code) => !inactive.has(code)));
  }
  const order = orderCohorts(references);
  const byCode = new Map(cohorts.map((cohort) => [cohort.code, cohort]));
  const fingerprints = fingerprintCohorts(order, byCode, references, inactive);

  // Pass 1: every slot request, merged by key (the largest count cap wins, so one ring serves every cohort).
  const requests = new Map<string, SlotRequest>();
  const requestOf = (clause: Clause): SlotRequest | undefined => {
    if (namesInactive(clause, inactive)) return undefined;
    const request = slotRequestOf(clause, fingerprints);
    if (request === undefined) return undefined;
    const known = requests.get(request.key);
    if (known === undefined || known.cap < request.cap) requests.set(request.key, request);
    return request;
  };
  for (const code of order) for (const group of (byCode.get(code) as CohortDefinition).query.and) group.or.forEach(requestOf);

  // Slots an event updates together sit together in a user's numeric store (locality): order by event name and
  // `where`, then key.
  const built = [...requests.keys()].map((key) => {
    const request = requests.get(key) as SlotRequest;
    return { key, request, order: `${request.event ?? '\uffff'}\u0000${canonicalJson(request.where ?? null)}\u0000${key}` };
  });
  built.sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
  const keys = built.map((entry) => entry.key);
  const slots: SlotDef[] = [];
  const seenIds = new Map<number, string>();
  for (const key of keys) {
    const request = requests.get(key) as SlotRequest;
    const id = slotIdOf(key);
    const clash = seenIds.get(id);
    if (clash !== undefined) throw new Error(`slot id collision between ${clash} and ${key}`);
    seenIds.set(id, key);
    slots.push(request.build(key, id, request.cap));
  }
  const indexOfKey = new Map(keys.map((key, index) => [key, index]));

  // Pass 2: clause tests (flattened in evaluation order), and which clauses read which slots.
  const clauseTests: ClauseTest[] = [];
  const contextMemo = new ContextMemo();
  const clauseCohort: number[] = [];
  const clauseVolatile: number[] = [];
  const clauseSticky: number[] = [];
  const clauseFinalAbove: number[] = [];
  const clauseSlot: number[] = [];
  const clauseShapes: ClauseShape[] = [];
  const dependents: number[][] = slots.map(() => []);
  const compiled: CompiledCohort[] = order.map((code, position) => {
    let volatile = false;
    let timeless = true;
    const start = clauseTests.length;
    const groupEnds: number[] = [];
    for (const group of (byCode.get(code) as CohortDefinition).query.and) {
      for (const clause of group.or) {
        clauseCohort.push(position);
        if (namesInactive(clause, inactive)) {
          // E21: no entry or exit ever happens; the answer is constant (has_not_* holds, has_* does not).
          const holds = clause.kind === 'transition' && (clause.op === 'has_not_entered' || clause.op === 'has_not_exited');
          clauseVolatile.push(0);
          clauseSticky.push(NOT_STICKY);
          clauseFinalAbove.push(Number.POSITIVE_INFINITY);
          clauseSlot.push(-1);
          clauseShapes.push(undefined);
          clauseTests.push(() => holds);
          continue;
        }
        const request = slotRequestOf(clause, fingerprints);
        if (request === undefined) {
          volatile = true;
          if (!readsContextAlone(clause)) timeless = false;
          clauseVolatile.push(1);
          clauseSticky.push(NOT_STICKY);
          clauseFinalAbove.push(Number.POSITIVE_INFINITY);
          clauseSlot.push(-1);
          clauseShapes.push(undefined);
          clauseTests.push(compileContextClause(clause, contextMemo));
          continue;
        }
        const index = indexOfKey.get(request.key) as number;
        (dependents[index] as number[]).push(clauseTests.length);
        clauseVolatile.push(0);
        clauseSticky.push(stickyAnswerOf(clause));
        clauseFinalAbove.push(finalAboveOf(clause));
        clauseSlot.push(index);
        clauseShapes.push(slotClauseShape(clause));
        clauseTests.push(compileSlotClause(clause, slots[index] as SlotDef));
      }
      groupEnds.push(clauseTests.length);
    }
    return { code, start, end: clauseTests.length, groupEnds: Int32Array.from(groupEnds), volatile, timeless };
  });

  // Event index: event name -> groups of slots sharing one `where` evaluation.
  const groups = new Map<string, Map<string, number[]>>();
  const whereOfGroup = new Map<string, Pick<FilterGroup, 'test' | 'parts'>>();
  slots.forEach((slot, index) => {
    if (slot.event === undefined) return;
    const byWhere = groups.get(slot.event) ?? new Map<string, number[]>();
    groups.set(slot.event, byWhere);
    const list = byWhere.get(slot.whereKey) ?? [];
    byWhere.set(slot.whereKey, list);
    list.push(index);
    const groupKey = `${slot.event}\u0000${slot.whereKey}`;
    if (!whereOfGroup.has(groupKey)) {
      const where = (requests.get(slot.key) as SlotRequest).where;
      if (where === undefined) whereOfGroup.set(groupKey, { test: undefined, parts: undefined });
      else {
        // One compilation: the generic loops' test and the generated hooks' parts share their readers and tests.
        const parts = whereParts(where);
        whereOfGroup.set(groupKey, { test: whereTest(parts), parts });
      }
    }
  });
  const byEvent = new Map<string, readonly FilterGroup[]>();
  for (const [event, byWhere] of groups) {
    byEvent.set(
      event,
      [...byWhere].map(([whereKey, list]) => ({ ...(whereOfGroup.get(`${event}\u0000${whereKey}`) as Pick<FilterGroup, 'test' | 'parts'>), slots: Int32Array.from(list) })),
    );
  }

  // Transition slots hear the entries / exits of the cohort they name.
  const positionOf = new Map(order.map((code, position) => [code, position]));
  const entered: number[][] = order.map(() => []);
  const exited: number[][] = order.map(() => []);
  slots.forEach((slot, index) => {
    if (!isTransitionSlot(slot)) return;
    const position = positionOf.get(slot.cohort) as number;
    (slot.direction === 'entered' ? entered : exited)[position]?.push(index);
  });

  return new Plan({
    version,
    slots,
    cohorts: compiled,
    clauseTests,
    clauseCohort: Int32Array.from(clauseCohort),
    clauseVolatile: Uint8Array.from(clauseVolatile),
    clauseSticky: Uint8Array.from(clauseSticky),
    clauseFinalAbove: Float64Array.from(clauseFinalAbove),
    clauseSlot: Int32Array.from(clauseSlot),
    clauseShapes,
    byEvent,
    dependents: dependents.map((list) => Int32Array.from(list)),
    entered: entered.map((list) => Int32Array.from(list)),
    exited: exited.map((list) => Int32Array.from(list)),
    contextMemo,
    generateCode: options.generateCode ?? true,
    eventPropertyKeys: eventPropertyKeysOf(cohorts.map((cohort) => cohort.query)),
  });
}

/** The cohort codes a query's transition clauses name. */
function referencesOf(query: Query): number[] {
  const out: number[] = [];
  for (const group of query.and) for (const clause of group.or) if (clause.kind === 'transition') out.push(clause.segment);
  return out;
}

/**
 * A cohort's fingerprint: its query and, recursively, the fingerprints of the cohorts it names. A transition slot's
 * key carries the named cohort's fingerprint, so changing a cohort makes every slot hearing it new (backfill).
 */
function fingerprintCohorts(
  order: readonly number[],
  byCode: ReadonlyMap<number, CohortDefinition>,
  references: ReadonlyMap<number, readonly number[]>,
  inactive: ReadonlySet<number>,
): Map<number, string> {
  const out = new Map<number, string>();
  for (const code of order) {
    const query = (byCode.get(code) as CohortDefinition).query;
    // Named inactive cohorts count as 'inactive' (E21): enabling one changes the fingerprint of every cohort naming
    // it, so the transition slots hearing those cohorts start fresh and are backfilled (D19).
    const refs = [...new Set([...(references.get(code) ?? []), ...referencesOf(query).filter((ref) => inactive.has(ref))])].sort((a, b) => a - b);
    const text = canonicalJson({ query, refs: refs.map((ref) => [ref, inactive.has(ref) ? 'inactive' : out.get(ref)]) });
    out.set(code, digestOf(text));
  }
  return out;
}

/** E21: a transition clause naming a cohort that exists but is not evaluated. */
function namesInactive(clause: Clause, inactive: ReadonlySet<number>): boolean {
  return clause.kind === 'transition' && inactive.has(clause.segment);
}

/** Normalised `during` for keys: `the_last` by its length only (10 minutes and 600 seconds share a slot). */
function duringKey(during: During | undefined): unknown {
  if (during === undefined) return null;
  return during.kind === 'the_last' ? { kind: 'the_last', ms: during.ms } : during;
}

function slotRequestOf(clause: Clause, fingerprints: ReadonlyMap<number, string>): SlotRequest | undefined {
  switch (clause.kind) {
    case 'expression': {
      const { event, where, during } = clause;
      const whereKey = canonicalJson(where ?? null);
      return {
        key: canonicalJson({ slot: 'expression', event, where: where ?? null, during: duringKey(during) }),
        event,
        cap: during?.kind === 'the_last' ? countCap(clause.frequency) : 0,
        where,
        build: (key, id, cap) => new ExpressionSlot(key, id, event, whereKey, during, cap),
      };
    }
    case 'engaged_time': {
      const { where, during } = clause;
      const whereKey = canonicalJson(where ?? null);
      return {
        event: ENGAGEMENT_EVENT,
        key: canonicalJson({ slot: 'engaged_time', where: where ?? null, during: duringKey(during) }),
        cap: 0,
        where,
        build: (key, id) => new EngagedTimeSlot(key, id, whereKey, during),
      };
    }
    case 'engaged_completion': {
      const { where } = clause;
      const whereKey = canonicalJson(where ?? null);
      return {
        event: ENGAGEMENT_EVENT,
        key: canonicalJson({ slot: 'engaged_completion', where: where ?? null }),
        cap: 0,
        where,
        build: (key, id) => new EngagedCompletionSlot(key, id, whereKey),
      };
    }
    case 'engaged_views': {
      const { where, during, per_view } = clause;
      const whereKey = canonicalJson(where ?? null);
      const perView = compileComparison(per_view.comparison);
      return {
        event: ENGAGEMENT_EVENT,
        key: canonicalJson({ slot: 'engaged_views', where: where ?? null, during: duringKey(during), per_view }),
        cap: during?.kind === 'the_last' ? countCap(clause.times) : 0,
        where,
        build: (key, id, cap) => new EngagedViewsSlot(key, id, whereKey, during, per_view.measure, perView, cap),
      };
    }
    case 'transition': {
      const { where, during, segment } = clause;
      const direction = clause.op === 'has_entered' || clause.op === 'has_not_entered' ? 'entered' : 'exited';
      const whereKey = canonicalJson(where ?? null);
      const matches = where === undefined ? undefined : compileWhere(where);
      return {
        event: undefined,
        key: canonicalJson({
          slot: 'transition',
          direction,
          cohort: segment,
          definition: fingerprints.get(segment) ?? null,
          where: where ?? null,
          during: duringKey(during),
        }),
        cap: 0,
        where: undefined,
        build: (key, id) => new TransitionSlot(key, id, whereKey, segment, direction, matches, during),
      };
    }
    default:
      return undefined;
  }
}

/** What compileSlotClause compiles, as data for the generated clause evaluation (state/generated.ts). */
function slotClauseShape(clause: Clause): ClauseShape {
  switch (clause.kind) {
    case 'expression':
      return { compare: clause.frequency };
    case 'engaged_time':
      return { compare: clause.seconds };
    case 'engaged_completion':
      return { compare: clause.completion };
    case 'engaged_views':
      return { compare: clause.times };
    case 'transition':
      return { negate: clause.op === 'has_not_entered' || clause.op === 'has_not_exited' };
    default:
      return undefined;
  }
}

/** A slot-backed clause: the slot's value compared per clause kind (E4, E7–E9, E11). */
function compileSlotClause(clause: Clause, slot: SlotDef): ClauseTest {
  switch (clause.kind) {
    case 'expression': {
      const test = compileComparison(clause.frequency);
      return (u) => test(slot.value(u));
    }
    case 'engaged_time': {
      const test = compileComparison(clause.seconds);
      return (u) => test(slot.value(u));
    }
    case 'engaged_completion': {
      const test = compileComparison(clause.completion);
      return (u) => test(slot.value(u));
    }
    case 'engaged_views': {
      const test = compileComparison(clause.times);
      return (u) => test(slot.value(u));
    }
    case 'transition': {
      const negate = clause.op === 'has_not_entered' || clause.op === 'has_not_exited';
      return (u) => (slot.value(u) >= 1) !== negate;
    }
    default:
      throw new Error(`clause kind ${clause.kind} has no slot`);
  }
}

/**
 * Whether a context clause's answer depends on the context alone: imported segments (E13), and connections rows
 * counted over all time, `first N`, `last N` or a fixed window (E14). Rows judged against now, the session or the view
 * (`the_last`, `this_session`, `current_view`) also depend on the user's clock.
 */
function readsContextAlone(clause: Clause): boolean {
  if (clause.kind !== 'connections') return true;
  const kind = clause.during?.kind;
  return kind !== 'the_last' && kind !== 'this_session' && kind !== 'current_view';
}

/** Clauses answered by the context at each event (E13, E14). */
function compileContextClause(clause: Clause, memo: ContextMemo): ClauseTest {
  switch (clause.kind) {
    case 'membership': {
      const relation = clause.op === 'in_third_party_segment' || clause.op === 'not_in_third_party_segment' ? '3rd' : '2nd';
      const negate = clause.op.startsWith('not_');
      const { provider, segment } = clause;
      const index = memo.segmentIndex(relation, provider, segment);
      return (_u, ctx) => memo.inImportedSegment(ctx, index, relation, provider, segment) !== negate;
    }
    case 'connections':
      return compileConnections(clause, memo);
    default:
      throw new Error(`clause kind ${clause.kind} needs a slot`);
  }
}
