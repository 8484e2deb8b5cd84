// Types of the engine's public surface: events in, transitions and memberships out, the caller-provided context.
// The engine is pure: time, ids and imported data all come in through these values (engine/SEMANTICS.md).

import type { Query } from './query/ast.js';

/** An event as the engine sees it. `time` is epoch milliseconds (the shell parses ISO strings). */
export interface EngineEvent {
  readonly name: string;
  readonly time: number;
  readonly properties: Readonly<Record<string, unknown>>;
  readonly session_id?: string | null;
  readonly view_id?: string | null;
}

/** A row of a connections import (D27): its time (epoch ms) and its properties (schema names, no prefix). */
export interface ConnectionRow {
  readonly time: number;
  readonly properties: Readonly<Record<string, unknown>>;
}

/**
 * Read-only lookups of one user's imported data, provided by the caller (E13, E14). Answers are taken as constant for
 * the duration of one `segment` / `evaluateAt` call (each question may be asked once, or not at all when its answer
 * cannot matter); a rows list must not be changed once returned. New data comes with the next call, or in a new
 * object for a `constant` one.
 */
export interface SegmentContext {
  inImportedSegment(relation: '2nd' | '3rd', provider: string, segment: string): boolean;
  connectionRows(provider: string): readonly ConnectionRow[];
  /**
   * True when this object's answers never change (a snapshot of the user's data, or none): while the same object
   * comes with a user's next call, a cohort whose last decision read only such answers (imported segments,
   * connections rows counted over a fixed window, E13, E14) and none of whose slot clauses changed keeps that
   * decision instead of asking again. Absent or false: asked again at every event (E13).
   */
  readonly constant?: boolean;
}

/** A context for users with no imported data. */
export const EMPTY_CONTEXT: SegmentContext = {
  inImportedSegment: () => false,
  connectionRows: () => [],
  constant: true,
};

/** A cohort handed to the compiler: its short code and its validated query. */
export interface CohortDefinition {
  readonly code: number;
  readonly query: Query;
}

/** A change of membership: which cohort, which way, and the event (index in the `events` given) that caused it. */
export interface Transition {
  readonly cohort: number;
  readonly kind: 'entered' | 'exited';
  /** Effective time of the causing event (E1), epoch ms. */
  readonly time: number;
  readonly eventIndex: number;
}

/** One problem found while validating a query: a JSON path such as `query.and[1].or[0].where.condition`. */
export interface QueryProblem {
  readonly path: string;
  readonly message: string;
}

export type ValidationResult =
  | { readonly ok: true; readonly query: Query; readonly references: readonly number[] }
  | { readonly ok: false; readonly problems: readonly QueryProblem[] };
