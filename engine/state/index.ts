// The incremental state: user state, the segment step, its codec and backfill coverage.

export { UserState, newUserState, membershipsOf, type StateBuffers } from './user-state.js';
export { packState, unpackState } from './pack.js';
export { cloneState } from './clone.js';
export { segment, evaluateAt, nextDeadline, type SegmentResult } from './segment.js';
export { encodeState, decodeState, slotSetOf, STATE_FORMAT, type EncodeOptions, type DecodeOptions } from './codec.js';
export { missingSlots, adoptSlots } from './coverage.js';
