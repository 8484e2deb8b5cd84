// Cohort references across queries (D18, E12): a transition clause must name a known cohort code, and no cohort may
// reach itself through transition clauses.

import type { QueryProblem } from '../api.js';

/**
 * D18: given the existing cohorts' references and a candidate (new or changed) cohort, the first problem:
 * a transition clause naming an unknown code, or a cycle (a cohort reaching itself through transition clauses).
 * The candidate's own references replace any `existing` entry for its code; a new cohort (code undefined) cannot be
 * named by anyone yet, so it can only fail on unknown codes. Cycles not passing through the candidate are ignored.
 */
export function findReferenceProblem(
  existing: ReadonlyMap<number, readonly number[]>,
  candidate: { code: number | undefined; references: readonly number[] },
  root = 'query',
): QueryProblem | undefined {
  const self = candidate.code;
  for (const code of candidate.references) {
    if (code !== self && !existing.has(code)) return { path: root, message: `unknown cohort code ${code}` };
  }
  if (self === undefined) return undefined;
  const cycle = findCycle(existing, self, candidate.references);
  if (cycle === undefined) return undefined;
  return { path: root, message: `cohort ${self} reaches itself through transition clauses: ${cycle.join(' -> ')}` };
}

/** The shortest path self -> ... -> self (breadth first, iterative: chains of any length), or undefined. */
function findCycle(existing: ReadonlyMap<number, readonly number[]>, self: number, first: readonly number[]): number[] | undefined {
  const parent = new Map<number, number>();
  const queue: number[] = [];
  for (const code of first) {
    if (code === self) return [self, self];
    if (!parent.has(code)) {
      parent.set(code, self);
      queue.push(code);
    }
  }
  for (let head = 0; head < queue.length; head++) {
    const code = queue[head] as number;
    for (const next of existing.get(code) ?? []) {
      if (next === self) return traceBack(parent, code, self);
      if (!parent.has(next)) {
        parent.set(next, code);
        queue.push(next);
      }
    }
  }
  return undefined;
}

function traceBack(parent: ReadonlyMap<number, number>, last: number, self: number): number[] {
  const reversed = [self, last];
  for (let code = last; code !== self; ) {
    code = parent.get(code) ?? self;
    reversed.push(code);
  }
  return reversed.reverse();
}
