// Per-plan generated code for the segment step's hot paths (PERFORMANCE.md). For each event name, one function runs
// the name's `where` groups and updates their slots, with the readers' stale marks unrolled; likewise the session /
// view run-change hooks. Each generated call site calls one closure or one slot object, so V8 sees monomorphic sites
// it can inline (the generic loops in segment.ts call every slot kind through one megamorphic site).
// Safety: the generated source holds only integers computed here and fixed identifiers; tests, slots and any
// user-controlled text (event names, `where` values) stay in arrays passed to the generated function. When code
// generation is unavailable (e.g. --disallow-code-generation-from-strings) or fails, `generateHotPaths` returns
// undefined and segment.ts keeps its generic loops.

import type { SegmentContext } from '../api.js';
import type { FilterGroup, Plan } from '../plan/plan.js';
import type { SlotDef } from './slots/types.js';
import { CLAUSE_FINAL, CLAUSE_STALE, COHORT_DIRTY, type UserState } from './user-state.js';

/** Runs one event name's groups: `where` tests on the event's properties, slot updates, stale marks. */
export type EventHook = (state: UserState, properties: Readonly<Record<string, unknown>>) => void;
/** Runs every session (or view) run-change hook of the plan's slots, with the stale marks. */
export type RunHook = (state: UserState) => void;

/** Clause `k`'s test now (the same answer as `plan.clauseTests[k](state, ctx)`). */
export type ClauseEval = (k: number, state: UserState, ctx: SegmentContext) => boolean;

export interface HotPaths {
  readonly byEvent: ReadonlyMap<string, EventHook>;
  readonly clause: ClauseEval;
  readonly onSession: RunHook;
  readonly onView: RunHook;
}

/** The slot-changed statements for slot `index`: its readers' flags go stale (unless final), their cohorts dirty. */
function touchSource(plan: Plan, index: number): string {
  const base = plan.cohorts.length;
  const cohortBase = base + plan.clauseTests.length;
  const lines: string[] = [];
  const end = plan.readerStart[index + 1] as number;
  for (let k = plan.readerStart[index] as number; k < end; k++) {
    const clause = (plan.readers[k] as number) | 0;
    const at = (cohortBase + (plan.clauseCohort[clause] as number)) | 0;
    const flag = (base + clause) | 0;
    lines.push(`if (F[${flag}] < ${CLAUSE_FINAL}) { F[${flag}] = ${CLAUSE_STALE}; F[${at}] |= ${COHORT_DIRTY}; }`);
  }
  return lines.length === 0 ? '' : `{ const F = s.flags; ${lines.join(' ')} }`;
}

function eventSource(plan: Plan, groups: readonly FilterGroup[], tests: unknown[]): string {
  const lines: string[] = [];
  for (const group of groups) {
    let matched = 'true';
    if (group.test !== undefined) {
      lines.push(`m = T[${tests.length | 0}](p);`);
      tests.push(group.test);
      matched = 'm';
    }
    for (const raw of group.slots) {
      const index = raw | 0;
      const def = plan.slots[index] as SlotDef;
      const call = `D[${index}].onEvent(s, ${matched})`;
      const touch = touchSource(plan, index);
      const body = touch === '' ? `${call};` : `if (${call}) ${touch}`;
      lines.push(matched === 'true' || def.needsUnmatched ? body : `if (m) { ${body} }`);
    }
  }
  return `let m = true; ${lines.join('\n')}`;
}

function runSource(plan: Plan, list: Int32Array, method: 'onSessionStart' | 'onViewStart'): string {
  const lines: string[] = [];
  for (const raw of list) {
    const index = raw | 0;
    const touch = touchSource(plan, index);
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

/**
 * One `case` per clause: a slot clause reads its slot's value and compares it inline (constants from `V`, a
 * Float64Array, never written into the source); others call their compiled test `C[k]`.
 */
function clauseSource(plan: Plan, constants: number[]): string {
  const cases: string[] = [];
  for (let k = 0; k < plan.clauseTests.length; k++) {
    const shape = plan.clauseShapes[k];
    const slot = (plan.clauseSlot[k] as number) | 0;
    let body = `return C[${k | 0}](s, ctx);`;
    if (shape !== undefined && slot >= 0) {
      const value = `D[${slot}].value(s)`;
      if ('negate' in shape) body = `return (${value} >= 1) !== ${shape.negate ? 'true' : 'false'};`;
      else {
        const cmp = shape.compare;
        if (cmp.op in INLINE_OPS && 'value' in cmp) {
          body = `return ${value} ${INLINE_OPS[cmp.op] as string} V[${constants.length | 0}];`;
          constants.push(cmp.value);
        } else if (cmp.op === 'between') {
          body = `{ const v = ${value}; return v >= V[${constants.length | 0}] && v <= V[${(constants.length + 1) | 0}]; }`;
          constants.push(cmp.start, cmp.end);
        } else if ((cmp.op === 'equal_to' || cmp.op === 'not_equal_to') && cmp.values.length === 1) {
          body = `return ${value} ${cmp.op === 'equal_to' ? '===' : '!=='} V[${constants.length | 0}];`;
          constants.push(cmp.values[0] as number);
        }
      }
    }
    cases.push(`case ${k | 0}: ${body}`);
  }
  return `switch (k) {\n${cases.join('\n')}\n}\nreturn C[k](s, ctx);`;
}

/** The plan's generated hooks, or undefined when code cannot be generated here (the generic loops run instead). */
export function generateHotPaths(plan: Plan): HotPaths | undefined {
  try {
    const tests: unknown[] = [];
    const constants: number[] = [];
    const parts: string[] = [];
    const names: string[] = [];
    for (const [name, groups] of plan.byEvent) {
      parts.push(`function (s, p) { ${eventSource(plan, groups, tests)} }`);
      names.push(name);
    }
    const source = [
      '"use strict";',
      `const events = [${parts.join(',\n')}];`,
      `const onSession = function (s) { ${runSource(plan, plan.sessionSlots, 'onSessionStart')} };`,
      `const onView = function (s) { ${runSource(plan, plan.viewSlots, 'onViewStart')} };`,
      `const clause = function (k, s, ctx) { ${clauseSource(plan, constants)} };`,
      'return { events, onSession, onView, clause };',
    ].join('\n');
    // eslint-disable-next-line @typescript-eslint/no-implied-eval
    // D: slot definitions, T: `where` tests, C: clause tests, V: comparison constants.
    const factory = new Function('D', 'T', 'C', 'V', source) as (
      defs: readonly SlotDef[],
      tests: readonly unknown[],
      clauses: readonly unknown[],
      values: Float64Array,
    ) => { events: EventHook[]; onSession: RunHook; onView: RunHook; clause: ClauseEval };
    const built = factory(plan.slots, tests, plan.clauseTests, Float64Array.from(constants));
    const byEvent = new Map<string, EventHook>();
    names.forEach((name, i) => byEvent.set(name, built.events[i] as EventHook));
    return { byEvent, onSession: built.onSession, onView: built.onView, clause: built.clause };
  } catch {
    return undefined;
  }
}
