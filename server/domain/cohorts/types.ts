// The cohort record kept by the registry (wire field names, plus the internal organization, AST and references),
// and the inputs of create and update (D14, D16).

export type CohortState = 'Enabled' | 'Disabled';
/** `offline` is the wire string of the offline kind (D20). */
export type SegmentType = 'real_time' | 'offline';

export interface Cohort {
  readonly id: string;
  /** D17: unique within the organization, assigned in creation order from 1; never reused. */
  readonly code: number;
  readonly name: string;
  readonly description?: string;
  readonly tags: readonly string[];
  readonly state: CohortState;
  readonly workspace_id: string;
  readonly segment_type: SegmentType;
  /** The query as the client sent it (raw JSON), returned on reads. */
  readonly query: unknown;
  readonly created_at: string;
  readonly last_updated_at: string;
  /** Created by the admin CLI only; the Cohorts API may not update or delete it (D16). */
  readonly lookalike: boolean;
  // Internal fields: never on the wire (see wire.ts).
  readonly organization_id: string;
  /** The validated query AST (engine/query/ast.ts `Query`), opaque here. */
  readonly ast: unknown;
  /** Cohort codes the query names in transition clauses (D18). */
  readonly references: readonly number[];
  /**
   * The plan version at which the cohort's evaluation last started over: its creation, a query change, or being
   * enabled (D19; server/backfill/README.md). Records written before backfill lack it (read as 1).
   */
  readonly generation?: number;
}

export interface CreateCohortInput {
  readonly workspaceId: string;
  readonly name: string;
  readonly description?: string | null;
  readonly tags?: readonly string[];
  readonly segment_type?: SegmentType;
  readonly query: unknown;
  readonly ast: unknown;
  readonly references: readonly number[];
  readonly lookalike?: boolean;
  readonly now: Date;
  readonly newId: () => string;
}

/** D16: an absent field stays unchanged; `description: null` deletes it; query, ast and references go together. */
export interface CohortPatch {
  readonly name?: string;
  readonly description?: string | null;
  readonly tags?: readonly string[];
  readonly query?: unknown;
  readonly ast?: unknown;
  readonly references?: readonly number[];
  readonly state?: CohortState;
}
