// D18 reference checks for a cohort's query: every transition clause names a known code of the organization, and
// no cohort reaches itself. The graph walk is engine/query/references.ts; this adds the JSON path of the clause.

import { badBody } from '../../errors.js';
import { findReferenceProblem } from '../../../engine/query/references.js';

const TRANSITION_KEYS = ['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'] as const;

/**
 * Throws 400 1002 when `references` name an unknown code or close a cycle through `code` (undefined for a new
 * cohort). `existing` maps every code of the organization to the codes its query names.
 */
export function assertReferencesValid(
  existing: ReadonlyMap<number, readonly number[]>,
  code: number | undefined,
  references: readonly number[],
  query: unknown,
): void {
  const problem = findReferenceProblem(existing, { code, references });
  if (problem === undefined) return;
  const culprit = references.find(
    (reference) => findReferenceProblem(existing, { code, references: [reference] }) !== undefined,
  );
  const path = (culprit === undefined ? undefined : pathToTransition(query, culprit, 'query')) ?? problem.path;
  throw badBody(`${path}: ${problem.message}`);
}

/** The JSON path of the first transition clause (document order) whose `segment` is `code`, e.g. `query.and[0].has_entered.segment`. */
export function pathToTransition(value: unknown, code: number, path: string): string | undefined {
  return pathToClauseField(value, TRANSITION_KEYS, 'segment', code, path);
}

/** The JSON path of the first clause of one of `kinds` (document order) whose `field` is `wanted`. */
function pathToClauseField(
  value: unknown,
  kinds: readonly string[],
  field: string,
  wanted: unknown,
  path: string,
): string | undefined {
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = pathToClauseField(value[index], kinds, field, wanted, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const record = value as Record<string, unknown>;
  for (const kind of kinds) {
    const clause = record[kind];
    if (typeof clause === 'object' && clause !== null && (clause as Record<string, unknown>)[field] === wanted) {
      return `${path}.${kind}.${field}`;
    }
  }
  for (const [name, child] of Object.entries(record)) {
    const found = pathToClauseField(child, kinds, field, wanted, `${path}.${name}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

const PROVIDER_KEYS = [
  'in_third_party_segment',
  'not_in_third_party_segment',
  'in_second_party_segment',
  'not_in_second_party_segment',
  'in_connections_import_segment',
  'not_in_connections_import_segment',
] as const;

/** The import codes (`provider`) a validated query AST names in membership and connections clauses, in order. */
export function providersOf(ast: unknown): string[] {
  const found = new Set<string>();
  const groups = (ast as { and?: readonly { or?: readonly { kind?: string; provider?: unknown }[] }[] } | undefined)?.and ?? [];
  for (const group of groups) {
    for (const clause of group.or ?? []) {
      if ((clause.kind === 'membership' || clause.kind === 'connections') && typeof clause.provider === 'string') {
        found.add(clause.provider);
      }
    }
  }
  return [...found];
}

/**
 * D41: throws 400 1002 for the first `provider` of the query that `usable` refuses (an unknown import, or one the
 * cohort's workspace cannot see: the same message for both, so existence never leaks).
 */
export async function assertProvidersUsable(
  ast: unknown,
  query: unknown,
  usable: (provider: string) => Promise<boolean>,
): Promise<void> {
  for (const provider of providersOf(ast)) {
    if (await usable(provider)) continue;
    const path = pathToProvider(query, provider, 'query') ?? 'query';
    throw badBody(`${path}: unknown import code ${JSON.stringify(provider)}`);
  }
}

/** The JSON path of the first clause (document order) whose `provider` is `provider`, e.g. `query.in_third_party_segment.provider`. */
export function pathToProvider(value: unknown, provider: string, path: string): string | undefined {
  return pathToClauseField(value, PROVIDER_KEYS, 'provider', provider, path);
}
