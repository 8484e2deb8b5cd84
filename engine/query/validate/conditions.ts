// `where` conditions: detects the family (integer, float, date, string, list, boolean, list summary) from the bare
// string or the one key, then reads its operand (spec "where", D34, E15, E16).

import type { Condition, ListCondition, StringCondition } from '../ast.js';
import { expected, hasKey, isObject, quote, visitSoleKey, type Findings } from './findings.js';
import { COMPARISON_OPS, isComparisonOp, readOperand } from './comparison.js';
import { readSummary, SUMMARY_KEYS } from './summary.js';
import { readTimestamp } from './timestamps.js';
import { readAnyInteger, readNumber, readOneOrList, readString, type ValueReader } from './values.js';

const BARE_STRING_CONDITIONS = new Set(['is_empty', 'is_not_empty']);
const BARE_LIST_CONDITIONS = new Set(['list_is_empty', 'list_is_not_empty']);
const STRING_KEYS = ['contains', 'does_not_contain'] as const;
const LIST_STRING_KEYS = ['list_contains', 'list_does_not_contain'] as const;
const LIST_VALUE_KEYS = ['date', 'float', 'integer'].flatMap((type) => [`list_contains_${type}`, `list_does_not_contain_${type}`]);

/** Every key a one-key condition object may have (bare-string conditions too, to say they must be bare). */
const CONDITION_KEYS = new Set<string>([
  ...COMPARISON_OPS,
  ...COMPARISON_OPS.map((op) => `float_${op}`),
  ...COMPARISON_OPS.map((op) => `date_${op}`),
  ...STRING_KEYS,
  ...LIST_STRING_KEYS,
  ...LIST_VALUE_KEYS,
  ...BARE_STRING_CONDITIONS,
  ...BARE_LIST_CONDITIONS,
  'boolean_equal_to',
]);

/**
 * Reads a condition. `depth` is the number of list summaries around it; `allowSummary` is false for the condition
 * of a list summary itself (its sub-property is compared directly).
 */
export function readCondition(findings: Findings, value: unknown, path: string, depth: number, allowSummary = true): Condition | undefined {
  if (typeof value === 'string') return readBareCondition(findings, value, path);
  if (!isObject(value)) {
    findings.problem(path, expected('string or object', value));
    return undefined;
  }
  if (SUMMARY_KEYS.some((key) => hasKey(value, key))) {
    if (allowSummary) return readSummary(findings, value, path, depth);
    findings.problem(path, 'a list summary cannot be the condition of a list summary');
    return undefined;
  }
  return visitSoleKey(findings, value, path, CONDITION_KEYS, (key, operand, at) => readKeyedCondition(findings, key, operand, path, at));
}

function readBareCondition(findings: Findings, value: string, path: string): Condition | undefined {
  if (BARE_STRING_CONDITIONS.has(value)) return { family: 'string', op: value as 'is_empty' | 'is_not_empty' };
  if (BARE_LIST_CONDITIONS.has(value)) return { family: 'list', op: value as 'list_is_empty' | 'list_is_not_empty' };
  findings.problem(path, `unknown condition ${quote(value)}`);
  return undefined;
}

/** `objectPath` is the condition's path (problems about the key itself), `at` the operand's. */
function readKeyedCondition(findings: Findings, key: string, operand: unknown, objectPath: string, at: string): Condition | undefined {
  if (BARE_STRING_CONDITIONS.has(key) || BARE_LIST_CONDITIONS.has(key)) {
    findings.problem(objectPath, `${quote(key)} is written as a bare string, not as a key`);
    return undefined;
  }
  if (key === 'boolean_equal_to') return readBoolean(findings, operand, at);
  if (key.startsWith('float_')) return family('float', readComparisonOperand(findings, key.slice(6), operand, at, readNumber));
  if (key.startsWith('date_')) return family('date', readComparisonOperand(findings, key.slice(5), operand, at, readTimestamp));
  if (key.startsWith('list_')) return readListCondition(findings, key, operand, at);
  if (key === 'contains' || key === 'does_not_contain') return readStringCondition(findings, key, operand, at);
  if ((key === 'equal_to' || key === 'not_equal_to') && isStringOperand(operand)) return readStringCondition(findings, key, operand, at);
  return family('integer', readComparisonOperand(findings, key, operand, at, readAnyInteger));
}

/** `equal_to` / `not_equal_to` compare strings when given a string or a list starting with a string. */
function isStringOperand(operand: unknown): boolean {
  return typeof operand === 'string' || (Array.isArray(operand) && typeof operand[0] === 'string');
}

function readComparisonOperand(findings: Findings, op: string, operand: unknown, at: string, read: ValueReader<number>) {
  return isComparisonOp(op) ? readOperand(findings, op, operand, at, read) : undefined;
}

function family<F extends 'integer' | 'float' | 'date'>(
  name: F,
  comparison: ReturnType<typeof readOperand>,
): { family: F; comparison: NonNullable<ReturnType<typeof readOperand>> } | undefined {
  return comparison === undefined ? undefined : { family: name, comparison };
}

function readStringCondition(
  findings: Findings,
  op: 'equal_to' | 'not_equal_to' | 'contains' | 'does_not_contain',
  operand: unknown,
  at: string,
): StringCondition | undefined {
  const values = readOneOrList(findings, operand, at, readString);
  return values === undefined ? undefined : { family: 'string', op, values };
}

function readListCondition(findings: Findings, key: string, operand: unknown, at: string): ListCondition | undefined {
  if (key === 'list_contains' || key === 'list_does_not_contain') {
    const values = readOneOrList(findings, operand, at, readString);
    return values === undefined ? undefined : { family: 'list', op: key, values };
  }
  if (key.endsWith('_date')) {
    const value = readTimestamp(findings, operand, at);
    return value === undefined ? undefined : { family: 'list', op: key as 'list_contains_date' | 'list_does_not_contain_date', value };
  }
  if (key.endsWith('_float')) {
    const value = readNumber(findings, operand, at);
    return value === undefined ? undefined : { family: 'list', op: key as 'list_contains_float' | 'list_does_not_contain_float', value };
  }
  const value = readAnyInteger(findings, operand, at);
  return value === undefined ? undefined : { family: 'list', op: key as 'list_contains_integer' | 'list_does_not_contain_integer', value };
}

/** `boolean_equal_to`: true / false, or the text "true" / "false" (spec: "written as the text true or false"). */
function readBoolean(findings: Findings, operand: unknown, at: string): Condition | undefined {
  if (operand === true || operand === 'true') return { family: 'boolean', value: true };
  if (operand === false || operand === 'false') return { family: 'boolean', value: false };
  findings.problem(at, typeof operand === 'string' ? `expected true or false, got ${quote(operand)}` : expected('true or false', operand));
  return undefined;
}
