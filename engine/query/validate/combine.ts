// Combining clauses into conjunctive normal form: a bare clause, `{or: [clauses]}`, or `{and: [clause | {or}]}`,
// always normalised to `{and: [{or: [...]}, ...]}` (spec "Combining clauses").

import type { Clause, ClauseGroup, Query } from '../ast.js';
import { expected, hasKey, isObject, visitObject, type Findings } from './findings.js';
import { readClause } from './clauses.js';
import { readNonEmptyList } from './values.js';

export function readQuery(findings: Findings, value: unknown, path: string): Query | undefined {
  if (!isObject(value)) {
    findings.problem(path, expected('object', value));
    return undefined;
  }
  const hasAnd = hasKey(value, 'and');
  const hasOr = hasKey(value, 'or');
  if (hasAnd && hasOr) {
    findings.problem(path, 'expected "and" or "or", not both');
    return undefined;
  }
  if (hasAnd) {
    let groups: ClauseGroup[] | undefined;
    visitObject(findings, value, path, [], (key, items, at) => {
      if (key !== 'and') return false;
      groups = readAndItems(findings, items, at);
      return true;
    });
    return groups === undefined ? undefined : { and: groups };
  }
  const group = hasOr ? readOrObject(findings, value, path) : readSingle(findings, value, path);
  return group === undefined ? undefined : { and: [group] };
}

function readSingle(findings: Findings, value: unknown, path: string): ClauseGroup | undefined {
  const clause = readClause(findings, value, path);
  return clause === undefined ? undefined : { or: [clause] };
}

/** `{or: [...]}` with nothing else. */
function readOrObject(findings: Findings, value: unknown, path: string): ClauseGroup | undefined {
  let clauses: Clause[] | undefined;
  visitObject(findings, value, path, [], (key, items, at) => {
    if (key !== 'or') return false;
    clauses = readOrItems(findings, items, at);
    return true;
  });
  return clauses === undefined ? undefined : { or: clauses };
}

/** The items of an `and`: clauses (an `or` of one) or `or` objects; an `and` inside an `and` is not CNF. */
function readAndItems(findings: Findings, value: unknown, path: string): ClauseGroup[] | undefined {
  return readNonEmptyList(findings, value, path, (_, item, at) => {
    if (isObject(item) && hasKey(item, 'and')) {
      findings.problem(at, '"and" cannot appear inside "and"');
      return undefined;
    }
    return isObject(item) && hasKey(item, 'or') ? readOrObject(findings, item, at) : readSingle(findings, item, at);
  });
}

/** The items of an `or`: clauses only. */
function readOrItems(findings: Findings, value: unknown, path: string): Clause[] | undefined {
  return readNonEmptyList(findings, value, path, (_, item, at) => {
    for (const key of ['or', 'and']) {
      if (isObject(item) && hasKey(item, key)) {
        findings.problem(at, `"${key}" cannot appear inside "or"`);
        return undefined;
      }
    }
    return readClause(findings, item, at);
  });
}
