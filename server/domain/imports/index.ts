// Public surface of imports, imported segments, memberships and connections rows (D25–D27) and the engine's
// per-user lookups of them (E13, E14).

export { Imports } from './imports.js';
export { defaultContextCacheBytes } from './context.js';
export type { ImportsOptions, ListSegmentsOptions } from './imports.js';
export type { NewImport } from './import-body.js';
export type { NewSegment, SegmentPatch } from './segment-body.js';
export type { MembersBody } from './members-body.js';
export type { RowInput } from './row-body.js';
export { MAX_BATCH_OPERATIONS } from './batch-body.js';
export { MAX_MEMBER_REFS } from './members-body.js';
export { MAX_ROWS } from './row-body.js';
export type {
  BatchOperationName,
  BatchResult,
  ImportKind,
  ImportRecord,
  MembersResult,
  PropertyType,
  Relation,
  ResolveUser,
  RowsResult,
  SegmentPage,
  SegmentRecord,
  UserRef,
} from './types.js';
