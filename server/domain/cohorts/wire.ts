// The wire forms of a cohort (spec "Resources and fields", D15): the full form with `query`, and the summary form
// of the list (no `query`). Internal fields (organization, AST, references, lookalike) never leave the server.

import type { Cohort } from './types.js';

export interface CohortSummaryWire {
  id: string;
  code: number;
  name: string;
  description?: string;
  tags: string[];
  state: string;
  workspace_id: string;
  segment_type: string;
  live_audience_size?: number;
  created_at: string;
  last_updated_at: string;
}

export interface CohortWire extends CohortSummaryWire {
  query: unknown;
}

/** The list form: every field but `query`; `live_audience_size` when given. */
export function toCohortSummary(cohort: Cohort, liveAudienceSize?: number): CohortSummaryWire {
  return {
    id: cohort.id,
    code: cohort.code,
    name: cohort.name,
    ...(cohort.description !== undefined ? { description: cohort.description } : {}),
    tags: [...cohort.tags],
    state: cohort.state,
    workspace_id: cohort.workspace_id,
    segment_type: cohort.segment_type,
    ...(liveAudienceSize !== undefined ? { live_audience_size: liveAudienceSize } : {}),
    created_at: cohort.created_at,
    last_updated_at: cohort.last_updated_at,
  };
}

/** The full form (create, read one, update): the summary plus `query`. */
export function toCohortWire(cohort: Cohort, liveAudienceSize?: number): CohortWire {
  return { ...toCohortSummary(cohort, liveAudienceSize), query: cohort.query };
}
