// Cohort records: the registry (create/read/update/delete, codes, references, plan version, audience sizes) and
// the cohort's wire forms.
//
// Choices where the spec is silent:
// - D41: a transition clause may name only cohorts the cohort's workspace can see (its own and its ancestors'),
//   and a `provider` only such an import; anything else is 400 1002 as for an unknown code.
// - Codes are never reused after a delete (cn!{org} holds the next one).
// - The plan version (cv!{org}) is persisted and rises on every create, query change, state change and delete.
// - Sizes (cs!{org}!{code}) belong to the caller: disabling a cohort or changing its query does not reset them;
//   call setAudienceSize when a re-evaluation finishes, and write audienceSizeOps() in the ingest batches. (Live
//   sizes are the ingest pipeline's `sz!` counters; offline results are server/backfill's.)
// - `generation` (internal): the plan version at which the cohort was created, its query changed or it was enabled
//   again; the ingest pipeline's catch-ups and sweeps start its evaluation over history afresh from it (D19).
// - Records are frozen (query included); the AST is stored as given and not frozen.
// - A query update without its AST and references, or references that are not integers, is a 500 (caller bug).
export { CohortRegistry, generationOf } from './registry.js';
export { toCohortSummary, toCohortWire } from './wire.js';
export type { CohortSummaryWire, CohortWire } from './wire.js';
export { assertProvidersUsable, pathToTransition, providersOf } from './references.js';
export type { Cohort, CohortPatch, CohortState, CreateCohortInput, SegmentType } from './types.js';
