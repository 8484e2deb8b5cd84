// Integer, float and date conditions (D34, E15, E16): a finite number (integer/float) or an ISO 8601 instant string
// (date) compared numerically; anything else satisfies only `not_equal_to`.

import type { NumberComparison } from '../../query/ast.js';
import { parseTimestamp } from '../../query/validate/timestamps.js';
import { compileComparison } from '../comparison.js';
import type { ValueTest } from './types.js';

/** Integer and float conditions: both need a finite number (the family only changes how the query was written). */
export function compileNumberCondition(cmp: NumberComparison): ValueTest {
  const test = compileComparison(cmp);
  const absent = cmp.op === 'not_equal_to';
  return (v) => (typeof v === 'number' && Number.isFinite(v) ? test(v) : absent);
}

/** Parsed instants of recently seen date strings (property values repeat); bounded, pure. */
const instants = new Map<string, number | undefined>();
const INSTANT_CACHE_SIZE = 4096;

function parseInstant(text: string): number | undefined {
  const known = instants.get(text);
  if (known !== undefined || instants.has(text)) return known;
  const time = parseTimestamp(text);
  if (instants.size >= INSTANT_CACHE_SIZE) instants.clear();
  instants.set(text, time);
  return time;
}

/** Date conditions: the value must be a string that parses as an ISO 8601 date-time with an offset (D3). */
export function compileDateCondition(cmp: NumberComparison): ValueTest {
  const test = compileComparison(cmp);
  const absent = cmp.op === 'not_equal_to';
  return (v) => {
    if (typeof v !== 'string') return absent;
    const time = parseInstant(v);
    return time === undefined ? absent : test(time);
  };
}

/** The instant of a date item, or undefined (shared by list conditions on dates). */
export function instantOf(v: unknown): number | undefined {
  return typeof v === 'string' ? parseInstant(v) : undefined;
}
