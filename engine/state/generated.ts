// Per-plan generated code for the segment step's hot paths (PERFORMANCE.md). For each event name, one function runs
// the name's `where` groups and updates their slots (written out when the slot's kind gives its code, slots/source.ts,
// else a call), with what a changed slot does to its readers unrolled (an inline comparison tested at once, its
// cohort dirty only when the answer changed; other readers marked stale); likewise the session / view run-change
// hooks and the slot changes outside them (`touch`). Each generated call site calls one closure or one slot object,
// so V8 sees monomorphic sites it can inline (the generic loops in segment.ts call every slot kind through one
// megamorphic site).
// Safety: the generated source holds only integers computed here and fixed identifiers; tests, slots and any
// user-controlled text (event names, `where` values) stay in arrays passed to the generated function. When code
// generation is unavailable (e.g. --disallow-code-generation-from-strings) or fails, `generateHotPaths` returns
// undefined and segment.ts keeps its generic loops.

import type { SegmentContext } from '../api.js';
import type { FilterGroup, Plan } from '../plan/plan.js';
import type { SlotDef } from './slots/types.js';
import { CLAUSE_FINAL, CLAUSE_STALE, type UserState } from './user-state.js';

/** Runs one event name's groups: `where` tests on the event's properties, slot updates, stale marks. */
export type EventHook = (state: UserState, properties: Readonly<Record<string, unknown>>) => void;
/** Runs every session (or view) run-change hook of the plan's slots, with the stale marks. */
export type RunHook = (state: UserState) => void;

/** Clause `k`'s test now (the same answer as `plan.clauseTests[k](state, ctx)`). */
export type ClauseEval = (k: number, state: UserState, ctx: SegmentContext) => boolean;
/** Slot `index` changed (a timed slot aged, a transition slot heard its cohort): its readers' marks (touchSource). */
export type SlotTouch = (index: number, state: UserState) => void;

export interface HotPaths {
  readonly byEvent: ReadonlyMap<string, EventHook>;
  readonly clause: ClauseEval;
  readonly onSession: RunHook;
  readonly onView: RunHook;
  readonly touch: SlotTouch;
}

/**
 * The slot-changed statements for slot `index`, after the slot reported a change. A reader clause with an inline
 * test (below) is decided again at once: its flag takes the new answer (final when it can no longer change,
 * plan/sticky.ts) and its cohort goes dirty only when the answer differs from the flag (a stale flag always
 * differs); most changes of a count leave its comparisons' answers as they were, and their cohorts need no new
 * decision. Other readers go stale (unless final) and their cohorts dirty, as segment.ts's `touch` does.
 */
function touchSource(plan: Plan, index: number, constants: number[]): string {
  const base = plan.cohorts.length;
  const lines: string[] = [];
  let readsValue = false;
  const end = plan.readerStart[index + 1] as number;
  for (let k = plan.readerStart[index] as number; k < end; k++) {
    const clause = (plan.readers[k] as number) | 0;
    const cohort = plan.clauseCohort[clause] as number;
    // The cohort's dirty bit (plan.ts dirtyBase).
    const dirty = `I[${(plan.dirtyBase + (cohort >>> 5)) | 0}] |= ${(1 << (cohort & 31)) | 0};`;
    const flag = (base + clause) | 0;
    const test = inlineTest(plan, clause, constants);
    if (test === undefined) {
      lines.push(`if (F[${flag}] < ${CLAUSE_FINAL}) { F[${flag}] = ${CLAUSE_STALE}; ${dirty} }`);
      continue;
    }
    readsValue = true;
    const final = finalSource(plan, clause, constants);
    lines.push(`if (F[${flag}] < ${CLAUSE_FINAL}) { r = ${test} ? 1 : 0; if (r !== F[${flag}]) { F[${flag}] = ${final}; ${dirty} } }`);
  }
  if (lines.length === 0) return '';
  return `{ ${readsValue ? `v = ${valueSource(plan, index)}; ` : ''}${lines.join(' ')} }`;
}

/** Slot `index`'s value as an expression: the slot's own source (slots/source.ts) or its `value` call. */
function valueSource(plan: Plan, index: number): string {
  return (plan.slots[index] as SlotDef).valueSource?.() ?? `D[${index | 0}].value(s)`;
}

/** Clause `k`'s new flag from its answer `r` and its slot's value `v`: with CLAUSE_FINAL when final (segment.ts's isFinal). */
function finalSource(plan: Plan, k: number, constants: number[]): string {
  const finals: string[] = [];
  const sticky = plan.clauseSticky[k] as number;
  if (sticky === 0 || sticky === 1) finals.push(`r === ${sticky | 0}`);
  const above = plan.clauseFinalAbove[k] as number;
  if (above !== Number.POSITIVE_INFINITY) {
    finals.push(`v > V[${constants.length | 0}]`);
    constants.push(above);
  }
  return finals.length === 0 ? 'r' : `(${finals.join(' || ')} ? r | ${CLAUSE_FINAL} : r)`;
}

/**
 * One event name's hook. A group's `where` test runs when a slot of the group first needs its answer, and at most
 * once: `m` is 2 (not tested yet) at the group's start, then 1 or 0, and every slot reads the group's answer through
 * the expression `lazyMatch` makes. A slot that cannot use the event (a `first N` that has seen N events, a fixed
 * window the event's time is outside of) then never runs the test; the tests read only the event's properties, so
 * running fewer of them changes no answer.
 */
function eventSource(plan: Plan, groups: readonly FilterGroup[], tests: unknown[], constants: number[]): string {
  const lines: string[] = [];
  for (const group of groups) {
    let matched = 'true';
    if (group.parts !== undefined) {
      // Each predicate's reader and test called from a site of its own (monomorphic), not through compileWhere's
      // shared closure; the same answers, in the same order, short-circuiting alike.
      const { combine, reads, tests: valueTests } = group.parts;
      const terms = reads.map((read, i) => {
        const at = tests.length | 0;
        tests.push(read, valueTests[i]);
        return `T[${(at + 1) | 0}](T[${at}](p))`;
      });
      // An empty `and` holds and an empty `or` fails, as compileWhere's loops answer.
      const empty = combine === 'or' ? 'false' : 'true';
      matched = terms.length === 0 ? empty : lazyMatch(terms.join(combine === 'or' ? ' || ' : ' && '));
    } else if (group.test !== undefined) {
      matched = lazyMatch(`T[${tests.length | 0}](p)`);
      tests.push(group.test);
    }
    if (matched !== 'true' && matched !== 'false') lines.push('m = 2;');
    for (const raw of group.slots) {
      const index = raw | 0;
      const def = plan.slots[index] as SlotDef;
      const touch = touchSource(plan, index, constants);
      // The slot's update written out (it tests `matched` itself) when its form has a source, else its call.
      const inline = def.eventSource?.(matched, touch, constants);
      if (inline !== undefined) {
        lines.push(inline);
        continue;
      }
      const call = `D[${index}].onEvent(s, ${matched})`;
      const body = touch === '' ? `${call};` : `if (${call}) ${touch}`;
      lines.push(matched === 'true' || def.needsUnmatched ? body : `if (${matched}) { ${body} }`);
    }
  }
  return `let m = 2; ${lines.join('\n')}`;
}

/** The group's answer as an expression: `test` run the first time it is read in the group, its answer after. */
function lazyMatch(test: string): string {
  return `(m !== 2 ? m === 1 : (m = (${test}) ? 1 : 0) === 1)`;
}

function runSource(plan: Plan, list: Int32Array, method: 'onSessionStart' | 'onViewStart', constants: number[]): string {
  const lines: string[] = [];
  for (const raw of list) {
    const index = raw | 0;
    const touch = touchSource(plan, index, constants);
    const inline = (plan.slots[index] as SlotDef).resetSource?.(touch);
    if (inline !== undefined) {
      lines.push(inline);
      continue;
    }
    const call = `D[${index}].${method}(s)`;
    lines.push(touch === '' ? `${call};` : `if (${call}) ${touch}`);
  }
  return lines.join('\n');
}

/** Comparison operators written inline against a constant in `V` (the rest call the clause's own test). */
const INLINE_OPS: Readonly<Record<string, string>> = {
  greater_than: '>',
  less_than: '<',
  greater_than_or_equal_to: '>=',
  less_than_or_equal_to: '<=',
};

/** `equal_to` / `not_equal_to` lists up to this long are written inline. */
const INLINE_VALUES_MAX = 4;

/**
 * Clause `k`'s test of its slot's value `v` written inline (a boolean expression; constants appended to `V`, a
 * Float64Array, never written into the source), or undefined: not a slot clause, or a comparison not inlined.
 */
function inlineTest(plan: Plan, k: number, constants: number[]): string | undefined {
  const shape = plan.clauseShapes[k];
  if (shape === undefined || (plan.clauseSlot[k] as number) < 0 || plan.clauseVolatile[k] === 1) return undefined;
  if ('negate' in shape) return `((v >= 1) !== ${shape.negate ? 'true' : 'false'})`;
  const cmp = shape.compare;
  const at = constants.length | 0;
  if (cmp.op in INLINE_OPS && 'value' in cmp) {
    constants.push(cmp.value);
    return `(v ${INLINE_OPS[cmp.op] as string} V[${at}])`;
  }
  if (cmp.op === 'between') {
    constants.push(cmp.start, cmp.end);
    return `(v >= V[${at}] && v <= V[${(at + 1) | 0}])`;
  }
  // A few listed values (compileComparison: `includes`; the values are JSON numbers, never NaN).
  if ((cmp.op === 'equal_to' || cmp.op === 'not_equal_to') && cmp.values.length >= 1 && cmp.values.length <= INLINE_VALUES_MAX) {
    const equal = cmp.op === 'equal_to';
    const terms = cmp.values.map((value, i) => `v ${equal ? '===' : '!=='} V[${(at + i) | 0}]`);
    constants.push(...cmp.values);
    return `(${terms.join(equal ? ' || ' : ' && ')})`;
  }
  return undefined;
}

/** One `case` per slot with readers: its touchSource. */
function slotTouchSource(plan: Plan, constants: number[]): string {
  const cases: string[] = [];
  for (let index = 0; index < plan.slots.length; index++) {
    const touch = touchSource(plan, index, constants);
    if (touch !== '') cases.push(`case ${index | 0}: ${touch} return;`);
  }
  return `switch (i) {\n${cases.join('\n')}\n}`;
}

/** One `case` per clause: a slot clause with an inline test reads its slot's value; others call their test `C[k]`. */
function clauseSource(plan: Plan, constants: number[]): string {
  const cases: string[] = [];
  for (let k = 0; k < plan.clauseTests.length; k++) {
    const test = inlineTest(plan, k, constants);
    const body = test === undefined ? `return C[${k | 0}](s, ctx);` : `{ v = ${valueSource(plan, plan.clauseSlot[k] as number)}; return ${test}; }`;
    cases.push(`case ${k | 0}: ${body}`);
  }
  return `switch (k) {\n${cases.join('\n')}\n}\nreturn C[k](s, ctx);`;
}

/**
 * What every generated function starts with: the state's numbers (64-bit and 32-bit views) and flags, and the value
 * `v` and answer `r` the inline tests use. One `v` and `r` per function, not one per test: V8 gives every local of a
 * function's blocks a slot of its own in the function's frame, and a plan of ~21,000 cohorts gave `touch` a frame
 * larger than the stack (a RangeError at its first call).
 */
const PROLOGUE = 'const N = s.nums; const I = s.ints; const F = s.flags; let v = 0; let r = 0;';

/** The plan's generated hooks, or undefined when code cannot be generated here (the generic loops run instead). */
export function generateHotPaths(plan: Plan): HotPaths | undefined {
  try {
    const tests: unknown[] = [];
    const constants: number[] = [];
    const parts: string[] = [];
    const names: string[] = [];
    for (const [name, groups] of plan.byEvent) {
      parts.push(`function (s, p) { ${PROLOGUE} ${eventSource(plan, groups, tests, constants)} }`);
      names.push(name);
    }
    const source = [
      '"use strict";',
      `const events = [${parts.join(',\n')}];`,
      `const onSession = function (s) { ${PROLOGUE} ${runSource(plan, plan.sessionSlots, 'onSessionStart', constants)} };`,
      `const onView = function (s) { ${PROLOGUE} ${runSource(plan, plan.viewSlots, 'onViewStart', constants)} };`,
      `const clause = function (k, s, ctx) { ${PROLOGUE} ${clauseSource(plan, constants)} };`,
      `const touch = function (i, s) { ${PROLOGUE} ${slotTouchSource(plan, constants)} };`,
      'return { events, onSession, onView, clause, touch };',
    ].join('\n');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    // D: slot definitions, T: `where` tests, C: clause tests, V: comparison constants.
    const factory = new Function('D', 'T', 'C', 'V', source) as (
      defs: readonly SlotDef[],
      tests: readonly unknown[],
      clauses: readonly unknown[],
      values: Float64Array,
    ) => { events: EventHook[]; onSession: RunHook; onView: RunHook; clause: ClauseEval; touch: SlotTouch };
    const built = factory(plan.slots, tests, plan.clauseTests, Float64Array.from(constants));
    const byEvent = new Map<string, EventHook>();
    names.forEach((name, i) => byEvent.set(name, built.events[i] as EventHook));
    return { byEvent, onSession: built.onSession, onView: built.onView, clause: built.clause, touch: built.touch };
  } catch {
    return undefined;
  }
}
