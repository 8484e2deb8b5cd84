// Test helpers for the validator's tests: run validateQuery and pull out the problem paths, the AST or one clause.

import type { Clause, Condition, Query, Where } from '../../engine/query/ast.js';
import type { QueryProblem } from '../../engine/api.js';
import { validateQuery } from '../../engine/query/validate.js';

export function problemsOf(json: unknown, root?: string): readonly QueryProblem[] {
  const result = validateQuery(json, root);
  return result.ok ? [] : result.problems;
}

/** The paths of all problems, in order (empty when the query is valid). */
export function pathsOf(json: unknown, root?: string): string[] {
  return problemsOf(json, root).map((problem) => problem.path);
}

export function queryOf(json: unknown): Query {
  const result = validateQuery(json);
  if (!result.ok) throw new Error(`expected a valid query, got ${JSON.stringify(result.problems)}`);
  return result.query;
}

/** The only clause of a valid single-clause query. */
export function clauseOf(json: unknown): Clause {
  const query = queryOf(json);
  const clause = query.and[0]?.or[0];
  if (query.and.length !== 1 || query.and[0]?.or.length !== 1 || clause === undefined) throw new Error('expected one clause');
  return clause;
}

/** An expression clause whose `where` is `where`; problems inside it are under `query.where`. */
export function withWhere(where: unknown): unknown {
  return { event: 'Pageview', where };
}

/** An expression clause with one predicate on `properties.p`; problems inside are under `query.where.condition`. */
export function withCondition(condition: unknown): unknown {
  return withWhere({ property: 'properties.p', condition });
}

export function whereOf(json: unknown): Where {
  const clause = clauseOf(json);
  if (clause.kind !== 'expression' || clause.where === undefined) throw new Error('expected an expression with a where');
  return clause.where;
}

export function conditionOf(condition: unknown): Condition {
  const where = whereOf(withCondition(condition));
  if (where.kind !== 'predicate') throw new Error('expected a predicate');
  return where.condition;
}

/** The paths of the problems of a condition in `withCondition`. */
export function conditionPaths(condition: unknown): string[] {
  return pathsOf(withCondition(condition));
}
