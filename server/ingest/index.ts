// The ingest pipeline's public surface: open it over a store; the contract the routes code against is types.ts.

export type { AppendRequest, AppendResult, ContextSource, IngestPipeline, NewEvent, PlanSource } from './types.js';
export { DEFAULT_PARTITIONS, Pipeline, defaultStateCacheBytes, openIngestPipeline, type IngestOptions } from './pipeline.js';
export { workerFilename } from './worker/executor.js';
export type { PlanInfo } from './plan-info.js';
export type { ReplayPlan, ReplayedUser } from '../backfill/history.js';
