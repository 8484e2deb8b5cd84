// The benchmark's 100 cohorts in the spec's wire format: test/support/sample-cohorts.ts (the same seeded generator
// bench/engine.ts uses) converted from the validated AST back to the JSON a client POSTs to /cohorts-api/v2/cohorts.

import type { CohortDefinition } from '../../engine/api.js';
import type { Clause, Condition, During, NumberComparison, Query, Where } from '../../engine/query/ast.js';
import { SampleGenerator } from '../../test/support/sample-cohorts.js';

type Json = unknown;

/** Import codes the wire cohorts name: the generator's single provider `p` is split by relation (D25 codes are unique). */
export const PROVIDERS = { third: 'p3', second: 'p2', connections: 'crm' } as const;
/** Segment codes of the two segment imports, and the schema of the connections import (what the generator queries). */
export const SEGMENT_CODES = ['s1', 's2'] as const;
export const CONNECTIONS_SCHEMA = { plan: 'string' } as const;

export interface WireCohort {
  /** The generator's code; transition clauses name these (the server assigns its own, see `renumber`). */
  readonly code: number;
  readonly name: string;
  readonly query: Json;
}

/** `count` seeded cohorts (codes 1..count, transitions name lower codes) as wire JSON. */
export function generateWireCohorts(seed: number, count: number): { wire: WireCohort[]; definitions: CohortDefinition[] } {
  const definitions = new SampleGenerator(seed).cohorts(count);
  return { wire: definitions.map((c) => ({ code: c.code, name: `bench cohort ${c.code}`, query: toWireQuery(c.query) })), definitions };
}

/** Clause kinds of a set of cohorts (for the report): expression, engagement, transition, membership, connections. */
export function countClauseKinds(definitions: readonly CohortDefinition[]): Record<string, number> {
  const kinds: Record<string, number> = {};
  for (const c of definitions) for (const group of c.query.and) for (const clause of group.or) kinds[clause.kind] = (kinds[clause.kind] ?? 0) + 1;
  return kinds;
}

/** The wire query with transition clauses' `segment` mapped through `codes` (generator code -> server code). */
export function renumber(query: Json, codes: ReadonlyMap<number, number>): Json {
  if (Array.isArray(query)) return query.map((item) => renumber(item, codes));
  if (typeof query !== 'object' || query === null) return query;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(query)) {
    if (['has_entered', 'has_not_entered', 'has_exited', 'has_not_exited'].includes(key)) {
      const body = value as { segment: number };
      const mapped = codes.get(body.segment);
      if (mapped === undefined) throw new Error(`cohort code ${body.segment} was not created`);
      out[key] = { ...body, segment: mapped };
    } else out[key] = renumber(value, codes);
  }
  return out;
}

export function toWireQuery(query: Query): Json {
  return { and: query.and.map((group) => (group.or.length === 1 ? toWireClause(group.or[0] as Clause) : { or: group.or.map(toWireClause) })) };
}

function toWireClause(clause: Clause): Json {
  const opt = (during: During | undefined, where: Where | undefined): Record<string, Json> => ({
    ...(during && { during: toWireDuring(during) }),
    ...(where && { where: toWireWhere(where) }),
  });
  switch (clause.kind) {
    case 'expression':
      return { event: clause.event, frequency: toWireComparison(clause.frequency), ...opt(clause.during, clause.where) };
    case 'engaged_time':
      return { engaged_time: { seconds: toWireComparison(clause.seconds), ...opt(clause.during, clause.where) } };
    case 'engaged_completion':
      return { engaged_completion: { completion: toWireComparison(clause.completion), ...opt(undefined, clause.where) } };
    case 'engaged_views':
      return {
        engaged_views: {
          times: toWireComparison(clause.times),
          [clause.per_view.measure]: toWireComparison(clause.per_view.comparison),
          ...opt(clause.during, clause.where),
        },
      };
    case 'transition':
      return { [clause.op]: { segment: clause.segment, ...opt(clause.during, clause.where) } };
    case 'membership': {
      const provider = clause.op.includes('third') ? PROVIDERS.third : PROVIDERS.second;
      return { [clause.op]: { provider, segment: clause.segment } };
    }
    case 'connections':
      return {
        [clause.op]: {
          provider: PROVIDERS.connections,
          frequency: toWireComparison(clause.frequency),
          ...(clause.filters && { filters: toWireWhere(clause.filters) }),
          ...(clause.during && { during: toWireDuring(clause.during) }),
        },
      };
  }
}

const iso = (ms: number): string => new Date(ms).toISOString();

function toWireDuring(during: During): Json {
  switch (during.kind) {
    case 'this_session':
    case 'current_view':
      return during.kind;
    case 'the_last':
      return { the_last: { value: during.value, unit: during.unit } };
    case 'in_interval':
      return { in_interval: { start: iso(during.start), end: iso(during.end) } };
    case 'before':
      return { before: iso(during.time) };
    case 'after':
      return { after: iso(during.time) };
    case 'first':
      return { first: during.count };
    case 'last':
      return { last: during.count };
  }
}

function toWireComparison(comparison: NumberComparison, prefix = '', operand: (v: number) => Json = (v) => v): Json {
  switch (comparison.op) {
    case 'equal_to':
    case 'not_equal_to':
      return { [prefix + comparison.op]: comparison.values.length === 1 ? operand(comparison.values[0] as number) : comparison.values.map(operand) };
    case 'between':
      return { [prefix + 'between']: { start: operand(comparison.start), end: operand(comparison.end) } };
    default:
      return { [prefix + comparison.op]: operand(comparison.value) };
  }
}

function toWireWhere(where: Where): Json {
  if (where.kind === 'predicate') return { property: where.property, condition: toWireCondition(where.condition) };
  return { [where.kind]: where.items.map((item) => toWireWhere(item)) };
}

function toWireCondition(condition: Condition): Json {
  switch (condition.family) {
    case 'integer':
      return toWireComparison(condition.comparison);
    case 'float':
      return toWireComparison(condition.comparison, 'float_');
    case 'date':
      return toWireComparison(condition.comparison, 'date_', iso);
    case 'boolean':
      return { boolean_equal_to: condition.value };
    case 'string':
      if (!('values' in condition)) return condition.op;
      return { [condition.op]: condition.values.length === 1 ? condition.values[0] : condition.values };
    case 'list':
      switch (condition.op) {
        case 'list_is_empty':
        case 'list_is_not_empty':
          return condition.op;
        case 'list_contains':
        case 'list_does_not_contain':
          return { [condition.op]: condition.values.length === 1 ? condition.values[0] : condition.values };
        case 'list_contains_date':
        case 'list_does_not_contain_date':
          return { [condition.op]: iso(condition.value) };
        default:
          return { [condition.op]: condition.value };
      }
    case 'list_summary':
      return {
        property: condition.property,
        condition: toWireCondition(condition.condition),
        function: condition.function,
        ...(condition.where && { where: toWireWhere(condition.where) }),
      };
  }
}
