// Number comparisons compiled to closures (frequency, seconds, times, integer/float/date conditions), and the count
// cap: the smallest count from which a comparison's answer no longer changes (bounds `the_last` rings).

import type { NumberComparison } from '../query/ast.js';

export type NumberTest = (value: number) => boolean;

/** A closure for a number comparison: `between` inclusive, `equal_to` any listed, `not_equal_to` none listed. */
export function compileComparison(cmp: NumberComparison): NumberTest {
  switch (cmp.op) {
    case 'equal_to': {
      const values = cmp.values;
      if (values.length === 1) {
        const only = values[0] as number;
        return (n) => n === only;
      }
      return (n) => values.includes(n);
    }
    case 'not_equal_to': {
      const values = cmp.values;
      if (values.length === 1) {
        const only = values[0] as number;
        return (n) => n !== only;
      }
      return (n) => !values.includes(n);
    }
    case 'between': {
      const { start, end } = cmp;
      return (n) => n >= start && n <= end;
    }
    case 'greater_than': {
      const v = cmp.value;
      return (n) => n > v;
    }
    case 'less_than': {
      const v = cmp.value;
      return (n) => n < v;
    }
    case 'greater_than_or_equal_to': {
      const v = cmp.value;
      return (n) => n >= v;
    }
    case 'less_than_or_equal_to': {
      const v = cmp.value;
      return (n) => n <= v;
    }
  }
}

/** The constants a comparison mentions. */
export function comparisonConstants(cmp: NumberComparison): readonly number[] {
  switch (cmp.op) {
    case 'equal_to':
    case 'not_equal_to':
      return cmp.values;
    case 'between':
      return [cmp.start, cmp.end];
    default:
      return [cmp.value];
  }
}

/**
 * The smallest integer C >= 0 such that the comparison answers the same for every count n >= C, so counting can
 * stop at C: a ring of the most recent C match times decides the comparison exactly. `>= v` and `< v` are decided
 * from ceil(v) on; every other form once n is above every constant (floor + 1). Infinity for non-finite constants.
 */
export function countCap(cmp: NumberComparison): number {
  let cap = 0;
  for (const c of comparisonConstants(cmp)) {
    if (!Number.isFinite(c)) return Number.POSITIVE_INFINITY;
    const decidedFrom = cmp.op === 'greater_than_or_equal_to' || cmp.op === 'less_than' ? Math.ceil(c) : Math.floor(c) + 1;
    cap = Math.max(cap, decidedFrom);
  }
  return cap;
}
