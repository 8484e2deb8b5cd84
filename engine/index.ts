// The engine's public surface: validate queries, compile plans, and run users' events through the segment step.

export { validateQuery, formatProblem } from './query/validate.js';
export { findReferenceProblem } from './query/references.js';
export * from './api.js';
export * from './errors.js';
export type * from './query/ast.js';
export { compilePlan, Plan } from './plan/index.js';
export type { CompileOptions } from './plan/index.js';
export { newUserState, cloneState, segment, evaluateAt, nextDeadline, encodeState, decodeState, slotSetOf, membershipsOf, missingSlots, adoptSlots, packState, unpackState, STATE_FORMAT } from './state/index.js';
export type { EncodeOptions, DecodeOptions } from './state/index.js';
export type { UserState, SegmentResult, StateBuffers } from './state/index.js';
