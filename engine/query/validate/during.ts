// `during`: a bare string (`this_session`, `current_view`) or an object with exactly one of `the_last`,
// `in_interval`, `before`, `after`, `first`, `last` (spec "during", D33, E4).

import type { During, TimeUnit } from '../ast.js';
import { expected, isObject, quote, visitObject, visitSoleKey, type Findings } from './findings.js';
import { readOperand } from './comparison.js';
import { readTimestamp } from './timestamps.js';
import { readInteger } from './values.js';

/** Length of each unit in milliseconds (E4: a week is 7 days, a month 30 days). */
const UNIT_MS = new Map<string, number>([
  ['seconds', 1_000],
  ['minutes', 60_000],
  ['hours', 3_600_000],
  ['days', 86_400_000],
  ['weeks', 7 * 86_400_000],
  ['months', 30 * 86_400_000],
]);

const DURING_KEYS = new Set(['the_last', 'in_interval', 'before', 'after', 'first', 'last']);

export function readDuring(findings: Findings, value: unknown, path: string): During | undefined {
  if (typeof value === 'string') {
    if (value === 'this_session' || value === 'current_view') return { kind: value };
    findings.problem(path, `unknown during ${quote(value)}`);
    return undefined;
  }
  if (!isObject(value)) {
    findings.problem(path, expected('string or object', value));
    return undefined;
  }
  return visitSoleKey<During>(findings, value, path, DURING_KEYS, (key, operand, at) => {
    switch (key) {
      case 'the_last':
        return readTheLast(findings, operand, at);
      case 'in_interval': {
        const interval = readOperand(findings, 'between', operand, at, readTimestamp);
        return interval?.op === 'between' ? { kind: 'in_interval', start: interval.start, end: interval.end } : undefined;
      }
      case 'before':
      case 'after': {
        const time = readTimestamp(findings, operand, at);
        return time === undefined ? undefined : { kind: key, time };
      }
      default: {
        const count = readInteger(findings, operand, at, 1);
        return count === undefined ? undefined : { kind: key as 'first' | 'last', count };
      }
    }
  });
}

function readTheLast(findings: Findings, operand: unknown, path: string): During | undefined {
  const before = findings.count;
  let value: number | undefined;
  let unit: TimeUnit | undefined;
  visitObject(findings, operand, path, ['value', 'unit'], (key, field, at) => {
    if (key === 'value') value = readInteger(findings, field, at, 1);
    else if (key === 'unit') unit = readUnit(findings, field, at);
    else return false;
    return true;
  });
  if (findings.count !== before || value === undefined || unit === undefined) return undefined;
  return { kind: 'the_last', value, unit, ms: value * (UNIT_MS.get(unit) ?? 0) };
}

function readUnit(findings: Findings, value: unknown, path: string): TimeUnit | undefined {
  if (typeof value !== 'string') {
    findings.problem(path, expected('string', value));
    return undefined;
  }
  if (!UNIT_MS.has(value)) {
    findings.problem(path, `unknown unit ${quote(value)}, expected one of ${[...UNIT_MS.keys()].map(quote).join(', ')}`);
    return undefined;
  }
  return value as TimeUnit;
}
