// `where` objects and connections `filters`: one predicate `{property, condition}`, or a compound `{and: [...]}` /
// `{or: [...]}` of predicates, one level deep and non-empty (spec "Compound where", E18).

import type { Condition, Predicate, Where } from '../ast.js';
import { hasKey, isObject, visitObject, visitSoleKey, type Findings } from './findings.js';
import { readCondition } from './conditions.js';
import { readPropertyPath, type PathBase, type PropertyPath } from './paths.js';
import { readNonEmptyList } from './values.js';

const COMPOUND_KEYS = new Set(['and', 'or']);

/**
 * Reads a `where` (or a filter). `base` says how property names are written; `depth` is the number of list
 * summaries around it (their nested `where`s may hold list summaries again, up to a limit).
 */
export function readWhere(findings: Findings, value: unknown, path: string, base: PathBase, depth: number): Where | undefined {
  if (isObject(value) && (hasKey(value, 'and') || hasKey(value, 'or'))) {
    return visitSoleKey<Where>(findings, value, path, COMPOUND_KEYS, (key, items, at) => {
      const predicates = readPredicates(findings, items, at, base, depth);
      return predicates === undefined ? undefined : { kind: key as 'and' | 'or', items: predicates };
    });
  }
  return readPredicate(findings, value, path, base, depth);
}

function readPredicates(findings: Findings, value: unknown, path: string, base: PathBase, depth: number): Predicate[] | undefined {
  return readNonEmptyList(findings, value, path, (_, item, at) => {
    if (isObject(item) && (hasKey(item, 'and') || hasKey(item, 'or'))) {
      findings.problem(at, 'a compound where cannot be nested: "and" / "or" are one level deep (E18)');
      return undefined;
    }
    return readPredicate(findings, item, at, base, depth);
  });
}

function readPredicate(findings: Findings, value: unknown, path: string, base: PathBase, depth: number): Predicate | undefined {
  const before = findings.count;
  let property: PropertyPath | undefined;
  let condition: Condition | undefined;
  visitObject(findings, value, path, ['property', 'condition'], (key, field, at) => {
    if (key === 'property') property = readPropertyPath(findings, field, at, base);
    else if (key === 'condition') condition = readCondition(findings, field, at, depth);
    else return false;
    return true;
  });
  if (findings.count !== before || property === undefined || condition === undefined) return undefined;
  return { kind: 'predicate', property: property.property, path: property.path, condition };
}
