// The records and results of imports (D25), imported segments (D26), memberships and connections rows (D27).
// Records are stored as-is (JSON-like values) and returned to callers as copies.

import type { BatchOp } from '../../store/contract.js';

export type Relation = '2nd' | '3rd';
export type ImportKind = 'segments' | 'connections';
/** Property types of a connections import's schema (D25). */
export type PropertyType = 'string' | 'number' | 'boolean' | 'date' | 'list';

export interface ImportRecord {
  readonly id: string;
  readonly name: string;
  /** Unique in the organization; the `provider` that queries name (D25, D27). */
  readonly code: string;
  readonly relation: Relation;
  readonly kind: ImportKind;
  /** Alias tags the import matches users by. */
  readonly identifiers: readonly string[];
  /** Only for `connections` imports: property name -> type. */
  readonly schema?: Readonly<Record<string, PropertyType>>;
  readonly workspace_id: string;
  readonly organization_id: string;
  /** ISO 8601. */
  readonly created_at: string;
  /** D45; absent on imports created before it (read as null). */
  readonly description?: string | null;
}

export interface SegmentRecord {
  readonly id: string;
  readonly code: string;
  readonly name: string;
  readonly import_id: string;
  /** null when never given. */
  readonly description: string | null;
  /** null when never given; otherwise a number >= 0. */
  readonly cpm: number | null;
  readonly categories: readonly string[];
  /** ISO 8601. */
  readonly updated_at: string;
}

/** A user named by its id or by one of its aliases (D27); the caller's resolver turns it into a user id. */
export type UserRef = { readonly user_id: string } | { readonly alias: { readonly tag: string; readonly id: string } };
/**
 * Turns every reference of one request into its user id (same order), all at once, and hands them to `write` with
 * the store ops of any alias binding that needs: `write` commits those together with the request's own writes in
 * ONE batch, so a request that fails binds nothing (D41). The resolver keeps its bindings from changing under
 * `write` (it holds its own lock around the call) and learns that they were committed when `write` resolves.
 */
export type ResolveUser = <R>(
  refs: readonly UserRef[],
  write: (users: string[], bindings: readonly BatchOp[]) => Promise<R>,
) => Promise<R>;

export interface SegmentPage {
  /** With how many users each holds (the dashboard's member counts). */
  readonly elements: readonly (SegmentRecord & { readonly member_count: number })[];
  readonly pagination: { readonly next_token?: string; readonly total_count: number };
}

/** One operation's outcome in a batch: its index in `operations`, the segment, or the error it would have thrown. */
export type BatchResult =
  | { readonly index: number; readonly operation: BatchOperationName; readonly status: 200; readonly segment: SegmentRecord }
  | {
      readonly index: number;
      readonly operation: BatchOperationName | null;
      readonly status: number;
      readonly error: { readonly code: number; readonly detail: string | undefined };
    };
export type BatchOperationName = 'Create' | 'Update' | 'Delete';

export interface MembersResult {
  /** Users that were not members before and are now. */
  readonly added: number;
  /** Users that were members before and are not now. */
  readonly removed: number;
  /** Users whose membership changed: they need re-evaluation (D27). */
  readonly affectedUsers: readonly string[];
}

export interface RowsResult {
  readonly loaded: number;
  /** Users with a new, replaced or moved row: they need re-evaluation (D27). */
  readonly affectedUsers: readonly string[];
}

/** The stored value of a membership key: enough to answer the engine without reading the import. */
export interface StoredMembership {
  readonly relation: Relation;
  readonly provider: string;
  readonly segment: string;
}

/** The stored value of a connections row key. */
export interface StoredRow {
  readonly provider: string;
  /** Epoch ms. */
  readonly time: number;
  readonly properties: Readonly<Record<string, unknown>>;
}
