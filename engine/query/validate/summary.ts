// List summary conditions `{property, condition, function, where?}` on a list of objects: the function, the
// condition families each function accepts, relative paths, and the nesting limit (spec "where", D34, E17).

import type { Condition, SummaryFunction, Where, ListSummaryCondition } from '../ast.js';
import { expected, keyPath, quote, visitObject, type Findings, type JsonObject } from './findings.js';
import { readCondition } from './conditions.js';
import { readPropertyPath, type PropertyPath } from './paths.js';
import { readWhere } from './where.js';

/** Any of these keys makes a condition object a list summary (so a missing `function` is reported as such). */
export const SUMMARY_KEYS = ['function', 'property', 'condition'] as const;

const FUNCTIONS = new Set<string>(['any', 'all', 'sum', 'product', 'max', 'min', 'count', 'mean']);
const NUMERIC_FUNCTIONS = new Set<string>(['sum', 'product', 'max', 'min', 'mean']);

/** List summaries may hold list summaries in their nested `where`, at most this many deep (keeps recursion bounded). */
export const MAX_SUMMARY_DEPTH = 8;

export function readSummary(findings: Findings, value: JsonObject, path: string, depth: number): ListSummaryCondition | undefined {
  if (depth >= MAX_SUMMARY_DEPTH) {
    findings.problem(path, `list summaries nest at most ${MAX_SUMMARY_DEPTH} deep`);
    return undefined;
  }
  const before = findings.count;
  let property: PropertyPath | undefined;
  let condition: Condition | undefined;
  let fn: SummaryFunction | undefined;
  let where: Where | undefined;
  visitObject(findings, value, path, ['property', 'condition', 'function'], (key, field, at) => {
    if (key === 'property') property = readPropertyPath(findings, field, at, 'relative');
    else if (key === 'condition') condition = readCondition(findings, field, at, depth + 1, false);
    else if (key === 'function') fn = readFunction(findings, field, at);
    else if (key === 'where') where = readWhere(findings, field, at, 'relative', depth + 1);
    else return false;
    return true;
  });
  if (findings.count !== before || property === undefined || condition === undefined || fn === undefined) return undefined;
  if (!acceptsFamily(fn, condition.family)) {
    const needs = fn === 'count' ? 'an integer comparison' : 'an integer or float comparison';
    findings.problem(keyPath(path, 'condition'), `function ${quote(fn)} needs ${needs}, got a ${condition.family} condition`);
    return undefined;
  }
  return { family: 'list_summary', property: property.property, path: property.path, condition, function: fn, ...(where && { where }) };
}

/** `count` compares the number of items (integer); the aggregates compare numbers; `any` / `all` take any family. */
function acceptsFamily(fn: SummaryFunction, family: Condition['family']): boolean {
  if (fn === 'count') return family === 'integer';
  if (NUMERIC_FUNCTIONS.has(fn)) return family === 'integer' || family === 'float';
  return true;
}

function readFunction(findings: Findings, value: unknown, path: string): SummaryFunction | undefined {
  if (typeof value !== 'string') {
    findings.problem(path, expected('string', value));
    return undefined;
  }
  if (!FUNCTIONS.has(value)) {
    findings.problem(path, `unknown function ${quote(value)}, expected one of ${[...FUNCTIONS].map(quote).join(', ')}`);
    return undefined;
  }
  return value as SummaryFunction;
}
