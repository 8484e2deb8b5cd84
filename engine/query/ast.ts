// The normalised form of a validated cohort query: what `validateQuery` produces and `compilePlan` consumes.
// Every JSON form of the spec's query format maps to exactly one shape here (semantics: engine/SEMANTICS.md).

/** A query in conjunctive normal form: every group must hold; a group holds when any of its clauses holds. */
export interface Query {
  readonly and: readonly ClauseGroup[];
}
export interface ClauseGroup {
  readonly or: readonly Clause[];
}

export type Clause =
  | ExpressionClause
  | EngagedTimeClause
  | EngagedCompletionClause
  | EngagedViewsClause
  | TransitionClause
  | MembershipClause
  | ConnectionsClause;

// ---- number comparisons (frequency, seconds, times, integer/float conditions, aggregates)
export type NumberComparison =
  | { readonly op: 'equal_to'; readonly values: readonly number[] } // holds when equal to any
  | { readonly op: 'not_equal_to'; readonly values: readonly number[] } // holds when equal to none
  | { readonly op: 'between'; readonly start: number; readonly end: number } // inclusive
  | { readonly op: 'greater_than' | 'less_than' | 'greater_than_or_equal_to' | 'less_than_or_equal_to'; readonly value: number };

// ---- during
export type TimeUnit = 'seconds' | 'minutes' | 'hours' | 'days' | 'weeks' | 'months';
export type During =
  | { readonly kind: 'this_session' }
  | { readonly kind: 'current_view' }
  | { readonly kind: 'the_last'; readonly value: number; readonly unit: TimeUnit; readonly ms: number }
  | { readonly kind: 'in_interval'; readonly start: number; readonly end: number } // epoch ms, inclusive
  | { readonly kind: 'before'; readonly time: number } // epoch ms, strict
  | { readonly kind: 'after'; readonly time: number } // epoch ms, strict
  | { readonly kind: 'first'; readonly count: number }
  | { readonly kind: 'last'; readonly count: number };

// ---- where
/** A `where`: one predicate, or a one-level `and` / `or` of predicates (E18). */
export type Where =
  | Predicate
  | { readonly kind: 'and'; readonly items: readonly Predicate[] }
  | { readonly kind: 'or'; readonly items: readonly Predicate[] };

export interface Predicate {
  readonly kind: 'predicate';
  /** The property path as written, e.g. `properties.client.url` (or `key` inside a list summary / filter). */
  readonly property: string;
  /** The path split into segments, without the leading `properties` for top-level `where`s. */
  readonly path: readonly string[];
  readonly condition: Condition;
}

export type Condition =
  | { readonly family: 'integer'; readonly comparison: NumberComparison }
  | { readonly family: 'float'; readonly comparison: NumberComparison }
  | { readonly family: 'date'; readonly comparison: NumberComparison } // values are epoch ms
  | StringCondition
  | ListCondition
  | ListSummaryCondition
  | { readonly family: 'boolean'; readonly value: boolean };

export type StringCondition =
  | { readonly family: 'string'; readonly op: 'equal_to' | 'not_equal_to' | 'contains' | 'does_not_contain'; readonly values: readonly string[] }
  | { readonly family: 'string'; readonly op: 'is_empty' | 'is_not_empty' };

export type ListCondition =
  | { readonly family: 'list'; readonly op: 'list_contains' | 'list_does_not_contain'; readonly values: readonly string[] }
  | { readonly family: 'list'; readonly op: 'list_contains_date' | 'list_does_not_contain_date'; readonly value: number } // epoch ms
  | { readonly family: 'list'; readonly op: 'list_contains_float' | 'list_does_not_contain_float'; readonly value: number }
  | { readonly family: 'list'; readonly op: 'list_contains_integer' | 'list_does_not_contain_integer'; readonly value: number }
  | { readonly family: 'list'; readonly op: 'list_is_empty' | 'list_is_not_empty' };

export type SummaryFunction = 'any' | 'all' | 'sum' | 'product' | 'max' | 'min' | 'count' | 'mean';

export interface ListSummaryCondition {
  readonly family: 'list_summary';
  /** Sub-property of the list's items, relative to the item. */
  readonly property: string;
  readonly path: readonly string[];
  /** Applied to the item's sub-property (`any`/`all`) or to the aggregate (a number condition for the others). */
  readonly condition: Condition;
  readonly function: SummaryFunction;
  /** Filter on the list's items; paths relative to the item. */
  readonly where?: Where;
}

// ---- clauses
export interface ExpressionClause {
  readonly kind: 'expression';
  readonly event: string;
  readonly frequency: NumberComparison; // default {greater_than_or_equal_to: 1}
  readonly during?: During;
  readonly where?: Where;
}

export interface EngagedTimeClause {
  readonly kind: 'engaged_time';
  readonly seconds: NumberComparison;
  readonly during?: During;
  readonly where?: Where;
}

export interface EngagedCompletionClause {
  readonly kind: 'engaged_completion';
  readonly completion: NumberComparison;
  readonly where?: Where;
}

export interface EngagedViewsClause {
  readonly kind: 'engaged_views';
  readonly times: NumberComparison;
  readonly during?: During;
  readonly where?: Where;
  /** Exactly one of the two per-view thresholds. */
  readonly per_view: { readonly measure: 'engaged_time' | 'completion'; readonly comparison: NumberComparison };
}

export interface TransitionClause {
  readonly kind: 'transition';
  readonly op: 'has_entered' | 'has_not_entered' | 'has_exited' | 'has_not_exited';
  readonly segment: number; // cohort code
  readonly during?: During;
  readonly where?: Where;
}

export interface MembershipClause {
  readonly kind: 'membership';
  readonly op: 'in_third_party_segment' | 'not_in_third_party_segment' | 'in_second_party_segment' | 'not_in_second_party_segment';
  readonly provider: string;
  readonly segment: string;
}

/** A connections filter: one predicate or a one-level and/or (same shape as a where; paths have no prefix). */
export type ConnectionsFilter = Where;

export interface ConnectionsClause {
  readonly kind: 'connections';
  readonly op: 'in_connections_import_segment' | 'not_in_connections_import_segment';
  readonly provider: string;
  readonly filters?: ConnectionsFilter;
  readonly during?: During;
  readonly frequency: NumberComparison; // default {greater_than_or_equal_to: 1}
}
