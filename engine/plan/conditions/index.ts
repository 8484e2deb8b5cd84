// Conditions compiled per family into value tests (D34, E15–E17); `compileWhere` applies them along property paths.

import type { Condition, Where } from '../../query/ast.js';
import { compilePath } from '../path.js';
import { compileBooleanCondition } from './boolean.js';
import { compileListCondition } from './list.js';
import { compileListSummary } from './list-summary.js';
import { compileDateCondition, compileNumberCondition } from './number.js';
import { compileStringCondition } from './string.js';
import type { ValueTest } from './types.js';

export type { ValueTest } from './types.js';

/** A test of one property value (undefined = missing) for any condition family. */
export function compileCondition(cond: Condition): ValueTest {
  switch (cond.family) {
    case 'integer':
    case 'float':
      return compileNumberCondition(cond.comparison);
    case 'date':
      return compileDateCondition(cond.comparison);
    case 'string':
      return compileStringCondition(cond);
    case 'list':
      return compileListCondition(cond);
    case 'list_summary':
      return compileListSummary(cond, { condition: compileCondition, where: compileWhere });
    case 'boolean':
      return compileBooleanCondition(cond.value);
  }
}

/**
 * A `where` as its parts: each predicate's path reader and value test, in order, and how they combine (one
 * predicate, or all / any of them). The generated event hooks (state/generated.ts) call each part from a call site
 * of its own; `compileWhere` (the generic loops' test) is built from the same parts.
 */
export interface WhereParts {
  readonly combine: 'predicate' | 'and' | 'or';
  readonly reads: readonly ((obj: unknown) => unknown)[];
  readonly tests: readonly ValueTest[];
}

export function whereParts(where: Where): WhereParts {
  const predicates = where.kind === 'predicate' ? [where] : where.items;
  return {
    combine: where.kind,
    reads: predicates.map((predicate) => compilePath(predicate.path)),
    tests: predicates.map((predicate) => compileCondition(predicate.condition)),
  };
}

/**
 * A test of an object (an event's properties, a list item, an import row's properties) against a `where`: paths are
 * relative to that object (E15, E18). Compound forms are one level deep; `and` / `or` short-circuit in order.
 */
export function compileWhere(where: Where): ValueTest {
  return whereTest(whereParts(where));
}

/** The test of a `where` made of `parts` (an empty `and` holds, an empty `or` fails). */
export function whereTest(parts: WhereParts): ValueTest {
  const { reads, tests } = parts;
  if (parts.combine === 'predicate') {
    const read = reads[0] as (obj: unknown) => unknown;
    const test = tests[0] as ValueTest;
    return (obj) => test(read(obj));
  }
  if (parts.combine === 'and') {
    return (obj) => {
      for (let i = 0; i < tests.length; i++) if (!(tests[i] as ValueTest)((reads[i] as (obj: unknown) => unknown)(obj))) return false;
      return true;
    };
  }
  return (obj) => {
    for (let i = 0; i < tests.length; i++) if ((tests[i] as ValueTest)((reads[i] as (obj: unknown) => unknown)(obj))) return true;
    return false;
  };
}
