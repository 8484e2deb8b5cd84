// Copies of a user state (engine/state/SLOTS.md "Shape"): for a caller that starts from one state more than once.

import { decodeState, encodeState } from './codec.js';
import { NO_SLOTS, UserState, allocate } from './user-state.js';

/**
 * An independent copy of `state`: the same trackers, slot data, memberships, clause results and plan binding, so the
 * copy's next step does exactly what the original's would (it neither binds nor decides every cohort again), and
 * neither one's later steps touch the other. Numbers and flags are copied into one new buffer, rings and bit arrays
 * copied deeply; the plan, the shared empty containers and the last constant context are shared (never written). An
 * unbound state (decoded, not used yet) is copied through its encoding. For a caller that keeps a state to start
 * from more than once (the stateless route's recently sealed states).
 */
export function cloneState(state: UserState): UserState {
  // Unbound (decoded, not yet used): its stored tuples become the bound state's rings, so copy it through its bytes.
  if (state.plan === undefined) return decodeState(encodeState(state));
  const copy = new UserState();
  copy.count = state.count;
  copy.time = state.time;
  copy.eventTime = state.eventTime;
  copy.prevTime = state.prevTime;
  copy.index = state.index;
  copy.engagedSeconds = state.engagedSeconds;
  copy.engagedCompletion = state.engagedCompletion;
  copy.sessionKey = state.sessionKey;
  copy.sessionStartIndex = state.sessionStartIndex;
  copy.sessionStartTime = state.sessionStartTime;
  copy.viewKind = state.viewKind;
  copy.viewKey = state.viewKey;
  copy.viewStartIndex = state.viewStartIndex;
  copy.viewStartTime = state.viewStartTime;
  copy.plan = state.plan;
  copy.nextExpiry = state.nextExpiry;
  copy.evaluateAll = state.evaluateAll;
  copy.context = state.context;
  copy.fresh = state.fresh.size === 0 ? NO_SLOTS : new Set(state.fresh);
  // A string: immutable, so the copy shares it.
  if (state.packed !== undefined) copy.packed = state.packed;
  else {
    const { nums, ints, flags } = allocate(state.plan);
    nums.set(state.nums);
    flags.set(state.flags);
    copy.nums = nums;
    copy.ints = ints;
    copy.flags = flags;
  }
  copy.objs = state.objs.map(copyObject);
  return copy;
}

/** A deep copy of what a state's rings hold: arrays (of numbers, or of arrays), byte arrays, numbers. */
function copyObject(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(copyObject);
  if (value instanceof Uint8Array) return value.slice();
  return value;
}
