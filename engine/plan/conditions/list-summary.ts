// List summary conditions (D34, E17): filter a list's object items with a nested `where`, then `any` / `all` on an
// item property, `count` of the filtered items, or `sum`/`product`/`max`/`min`/`mean` of their finite numbers.

import type { Condition, ListSummaryCondition, Where } from '../../query/ast.js';
import { compilePath } from '../path.js';
import type { ValueTest } from './types.js';

/** The compilers a list summary needs for its parts (passed in to keep the module graph acyclic). */
export interface SummaryCompilers {
  readonly condition: (cond: Condition) => ValueTest;
  readonly where: (where: Where) => ValueTest;
}

export function compileListSummary(cond: ListSummaryCondition, compilers: SummaryCompilers): ValueTest {
  const read = compilePath(cond.path);
  const test = compilers.condition(cond.condition);
  const keep = cond.where === undefined ? isPlainObject : compileItemFilter(compilers.where(cond.where));
  switch (cond.function) {
    case 'any':
      return (v) => {
        if (!Array.isArray(v)) return false;
        for (let i = 0; i < v.length; i++) {
          const item: unknown = v[i];
          if (keep(item) && test(read(item))) return true;
        }
        return false;
      };
    case 'all':
      return (v) => {
        if (!Array.isArray(v)) return false;
        let kept = 0;
        for (let i = 0; i < v.length; i++) {
          const item: unknown = v[i];
          if (!keep(item)) continue;
          kept++;
          if (!test(read(item))) return false;
        }
        return kept > 0;
      };
    case 'count':
      return (v) => {
        if (!Array.isArray(v)) return false;
        let kept = 0;
        for (let i = 0; i < v.length; i++) if (keep(v[i])) kept++;
        return test(kept);
      };
    default:
      return compileAggregate(cond.function, read, keep, test);
  }
}

type Aggregate = 'sum' | 'product' | 'max' | 'min' | 'mean';

/** Aggregates over the finite numbers of the filtered items, in list order; false when there is none. */
function compileAggregate(fn: Aggregate, read: (item: unknown) => unknown, keep: ValueTest, test: ValueTest): ValueTest {
  return (v) => {
    if (!Array.isArray(v)) return false;
    let found = 0;
    let acc = fn === 'product' ? 1 : 0;
    for (let i = 0; i < v.length; i++) {
      const item: unknown = v[i];
      if (!keep(item)) continue;
      const x = read(item);
      if (typeof x !== 'number' || !Number.isFinite(x)) continue;
      if (fn === 'sum' || fn === 'mean') acc += x;
      else if (fn === 'product') acc *= x;
      else if (found === 0) acc = x;
      else if (fn === 'max') acc = Math.max(acc, x);
      else acc = Math.min(acc, x);
      found++;
    }
    if (found === 0) return false;
    return test(fn === 'mean' ? acc / found : acc);
  };
}

function isPlainObject(item: unknown): boolean {
  return typeof item === 'object' && item !== null && !Array.isArray(item);
}

function compileItemFilter(where: ValueTest): ValueTest {
  return (item) => isPlainObject(item) && where(item);
}
