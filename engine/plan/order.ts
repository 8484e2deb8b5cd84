// Dependency order of cohorts (D18, E12): a cohort is evaluated after every cohort its transition clauses name.
// Unknown codes and cycles are rejected with stable engine error codes.

import { EngineError } from '../errors.js';

/**
 * Codes in evaluation order: dependencies first, otherwise ascending code (deterministic). `references` maps each
 * cohort code to the codes its transition clauses name.
 */
export function orderCohorts(references: ReadonlyMap<number, readonly number[]>): number[] {
  for (const [code, refs] of references) {
    for (const ref of refs) {
      if (!references.has(ref)) {
        throw new EngineError('ENGINE_UNKNOWN_COHORT', `cohort ${code} names unknown cohort ${ref}`, String(ref));
      }
    }
  }
  const order: number[] = [];
  const state = new Map<number, 'visiting' | 'done'>();
  const codes = [...references.keys()].sort((a, b) => a - b);
  for (const root of codes) {
    if (state.has(root)) continue;
    // Iterative depth-first search: chains of any length, no recursion limit.
    const stack: { code: number; next: number; refs: number[] }[] = [];
    const enter = (code: number): void => {
      state.set(code, 'visiting');
      stack.push({ code, next: 0, refs: [...new Set(references.get(code) ?? [])].sort((a, b) => a - b) });
    };
    enter(root);
    while (stack.length > 0) {
      const top = stack[stack.length - 1] as (typeof stack)[number];
      if (top.next < top.refs.length) {
        const ref = top.refs[top.next++] as number;
        const seen = state.get(ref);
        if (seen === 'visiting') {
          const from = stack.findIndex((frame) => frame.code === ref);
          const cycle = [...stack.slice(from).map((frame) => frame.code), ref];
          throw new EngineError('ENGINE_COHORT_CYCLE', `cohorts form a cycle: ${cycle.join(' -> ')}`, cycle.join(','));
        }
        if (seen === undefined) enter(ref);
      } else {
        stack.pop();
        state.set(top.code, 'done');
        order.push(top.code);
      }
    }
  }
  return order;
}
