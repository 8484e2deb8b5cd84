// Number comparisons: an object with exactly one of the seven operators (optionally prefixed `float_` / `date_`),
// read into the AST's NumberComparison with a value reader (number, integer or timestamp).

import type { NumberComparison } from '../ast.js';
import { visitObject, visitSoleKey, type Findings } from './findings.js';
import { readOneOrList, type ValueReader } from './values.js';

export const COMPARISON_OPS = [
  'equal_to',
  'not_equal_to',
  'between',
  'greater_than',
  'less_than',
  'greater_than_or_equal_to',
  'less_than_or_equal_to',
] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];

const OPS = new Set<string>(COMPARISON_OPS);
const KEYS_BY_PREFIX = new Map<string, ReadonlySet<string>>();

export function isComparisonOp(key: string): key is ComparisonOp {
  return OPS.has(key);
}

/** The default `frequency` of expression and connections clauses (D33, E4, E14). */
export function atLeastOnce(): NumberComparison {
  return { op: 'greater_than_or_equal_to', value: 1 };
}

/** `{<prefix><op>: operand}` with exactly one key. */
export function readComparison(
  findings: Findings,
  value: unknown,
  path: string,
  read: ValueReader<number>,
  prefix = '',
): NumberComparison | undefined {
  let keys = KEYS_BY_PREFIX.get(prefix);
  if (keys === undefined) {
    keys = new Set(COMPARISON_OPS.map((op) => prefix + op));
    KEYS_BY_PREFIX.set(prefix, keys);
  }
  return visitSoleKey(findings, value, path, keys, (key, operand, at) =>
    readOperand(findings, key.slice(prefix.length) as ComparisonOp, operand, at, read),
  );
}

/** The operand of one operator: a value or non-empty list (equal_to, not_equal_to), `{start, end}` (between), a value. */
export function readOperand(
  findings: Findings,
  op: ComparisonOp,
  operand: unknown,
  path: string,
  read: ValueReader<number>,
): NumberComparison | undefined {
  switch (op) {
    case 'equal_to':
    case 'not_equal_to': {
      const values = readOneOrList(findings, operand, path, read);
      return values === undefined ? undefined : { op, values };
    }
    case 'between':
      return readBetween(findings, operand, path, read);
    default: {
      const value = read(findings, operand, path);
      return value === undefined ? undefined : { op, value };
    }
  }
}

function readBetween(findings: Findings, operand: unknown, path: string, read: ValueReader<number>): NumberComparison | undefined {
  const before = findings.count;
  let start: number | undefined;
  let end: number | undefined;
  visitObject(findings, operand, path, ['start', 'end'], (key, value, at) => {
    if (key === 'start') start = read(findings, value, at);
    else if (key === 'end') end = read(findings, value, at);
    else return false;
    return true;
  });
  if (findings.count !== before || start === undefined || end === undefined) return undefined;
  if (start > end) {
    findings.problem(path, '"start" is after "end"');
    return undefined;
  }
  return { op: 'between', start, end };
}
