// Validation of the cohort query format: any JSON value in, every problem (JSON path + message, in document order)
// or the normalised AST (ast.ts) and the cohort codes it names out (spec "Cohort query format", D18, D33, D34).
//
// Choices made where the spec is silent (each has a test):
// - Document order: problems about an object itself (not an object, missing keys, several of the one-key keys)
//   come before the problems inside it; `unknown key` problems sit at the object's path, in key order.
// - A clause is an expression clause when it has `event`, or when it has none of the one-key clause keys but has
//   `frequency` / `during` / `where` (then `missing key "event"`). An object of only unknown keys reports each one.
// - Type messages read `expected <type>, got <type>`; tests assert paths, and the message prefixes D18 shows.
// - Integers are safe integers (|n| <= 2^53 - 1). `frequency`, engagement `seconds` / `completion` / `times` and the
//   per-view thresholds take any finite number; `completion` is not limited to 0..1 (out of range never holds).
// - `the_last.value`, `first`, `last` are integers >= 1; a transition `segment` is an integer >= 0.
// - Timestamps: see validate/timestamps.ts (extended or basic ISO 8601, seconds optional, offset required).
// - `equal_to` / `not_equal_to` in a `where` compare strings when the operand is a string or a list whose first item
//   is a string, and integers otherwise, so a mixed list is reported at its first odd item. Integer conditions need
//   integer operands (use `float_*` for fractions). Empty strings are valid string operands.
// - Property segments are split on dots and must be non-empty; characters are not restricted. Relative names (list
//   summary `property`, its nested `where`, connections `filters`) are read literally, with no prefix stripped.
// - A condition object with `function`, `property` or `condition` is a list summary. A list summary's `condition`
//   cannot be a list summary; its nested `where` may hold list summaries, at most 8 deep (MAX_SUMMARY_DEPTH).
// - Connections filters accept every condition family a `where` accepts, list summaries included.
// - `is_empty`, `is_not_empty`, `list_is_empty`, `list_is_not_empty` used as keys are problems (bare strings only).

import type { QueryProblem, ValidationResult } from '../api.js';
import { readQuery } from './validate/combine.js';
import { Findings } from './validate/findings.js';

/** Validates a query (any JSON value); problem paths start with `root`. Never throws. */
export function validateQuery(json: unknown, root = 'query'): ValidationResult {
  const findings = new Findings();
  const query = readQuery(findings, json, root);
  if (findings.count > 0 || query === undefined) {
    const problems = findings.count > 0 ? findings.problems : [{ path: root, message: 'invalid query' }];
    return { ok: false, problems };
  }
  return { ok: true, query, references: [...findings.references].sort((a, b) => a - b) };
}

/** One line for a 400 cause (D18): `query.and[1].or[0].where.condition: unknown key "contain"`. */
export function formatProblem(problem: QueryProblem): string {
  return `${problem.path}: ${problem.message}`;
}
