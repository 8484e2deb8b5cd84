// A user's state: session/view trackers (E1–E3), slot data keyed by slot id, current memberships, and which slots
// were created after the user already had history (to be backfilled). Bound lazily to one plan at a time.

import type { SegmentContext } from '../api.js';
import type { Plan } from '../plan/plan.js';
import type { SlotStore } from './slots/types.js';
import { unpackState } from './pack.js';

/** View key kinds (E3): no view yet, a derived key (a Pageview without view_id), or a given `view_id`. */
export const VIEW_NONE = 0;
export const VIEW_DERIVED = 1;
export const VIEW_GIVEN = 2;

/**
 * The empty containers every state starts with and a bound state usually keeps: shared, never written (the fields are
 * read-only views; whoever fills one assigns a container of its own). With the single buffer per state, V8's heap in
 * use at 100,000 resident users fell 305 → 259 MB (`node --expose-gc dist/bench/memory-process.js 100000 1`).
 */
const NO_TUPLES: ReadonlyMap<number, unknown> = new Map();
export const NO_NUMS = new Float64Array(0);
export const NO_INTS = new Uint32Array(0);
export const NO_FLAGS = new Uint8Array(0);
const NO_CODES: readonly number[] = Object.freeze([]);
export const NO_SLOTS: ReadonlySet<number> = new Set();

export class UserState implements SlotStore {
  /** Events processed so far. */
  count = 0;
  /** Effective time of the latest event or re-evaluation (E1, E20): "now" of the latest evaluation. */
  time = 0;
  /** Effective time of the latest event: the E2 session gap is measured from it (D31: "without events", E20). */
  eventTime = 0;
  /** Scratch while segmenting: previous evaluation's effective time, ordinal of the current event, engagement figures (E6). */
  prevTime = 0;
  index = 0;
  engagedSeconds = 0;
  engagedCompletion = Number.NaN;
  /** E2: the current session key; null = a derived key (never equal to a given `session_id`). */
  sessionKey: string | null = null;
  sessionStartIndex = 0;
  sessionStartTime = 0;
  /** E3: the current view key. */
  viewKind = VIEW_NONE;
  viewKey: string | null = null;
  viewStartIndex = 0;
  viewStartTime = 0;

  /** The plan the slot data and membership flags are aligned with, if bound. */
  plan: Plan | undefined = undefined;
  /**
   * Bound: every slot's numbers at its offsets (one contiguous buffer per user, read as 64-bit `nums` and as 32-bit
   * `ints`, slots/types.ts), then the cohorts' dirty and recheck bits (plan.ts `dirtyBase`, `recheckBase`: a cohort is
   * recheck when its last decision read a context clause, dirty when a clause of it went stale since; neither: its
   * last decision stands), its membership bits in code order (`memberBase`: the membership flags again, both set
   * by `setMembership`), and its ring objects.
   */
  nums: Float64Array = NO_NUMS;
  ints: Uint32Array = NO_INTS;
  objs: unknown[] = [];
  /**
   * Bound: membership by plan cohort position [0, cohorts); then each clause's last result from `cohorts` on: 0 / 1
   * (plus CLAUSE_FINAL when it can no longer change), or CLAUSE_STALE when a slot it reads changed since (a context
   * clause's flag stays CLAUSE_STALE). Only membership is encoded.
   */
  flags: Uint8Array = NO_FLAGS;
  /** Unbound (decoded, not yet used): encoded slot tuples by slot id, and member codes (shared empties when bound). */
  stored: ReadonlyMap<number, unknown> = NO_TUPLES;
  storedMembers: readonly number[] = NO_CODES;
  /** Unbound, decoded from format 2 (codec.ts): `stored` as the plan being bound knows it. */
  storedSlots: StoredSlots | undefined = undefined;
  /** Ids of slots created empty (or from a smaller ring) after the user had history: not up to date (usually none). */
  fresh: ReadonlySet<number> = NO_SLOTS;
  /** Earliest effective time any timed slot can change; -Infinity = unknown (not encoded). */
  nextExpiry = Number.NEGATIVE_INFINITY;
  /** Evaluate every cohort at the next event (first event, or a new binding). */
  evaluateAll = true;
  /**
   * The constant context (api.ts) the cohorts were last decided with, or undefined (not constant, none yet, a new
   * binding, a failed call); not encoded. Passed again, the cohorts whose context clauses read it alone keep their
   * decisions (segment.ts).
   */
  context: SegmentContext | undefined = undefined;
  /**
   * Packed (pack.ts `packState`): the words of its numbers that differ from an empty state's (through a dictionary of
   * their values) and the flags (two to a byte), as the bytes of a one-byte string, while `nums` and `flags` are
   * empty; every engine entry unpacks it first (`bindState`). Undefined: not packed.
   */
  packed: string | undefined = undefined;
}

/** A clause flag whose slot changed since the clause was last evaluated (evaluated when its cohort needs it). */
export const CLAUSE_STALE = 2;
/**
 * Added to a clause flag (0 / 1) whose answer can no longer change (plan/sticky.ts): its slot's changes no longer
 * make it stale. Read a clause flag's answer as `flag & 1`.
 */
export const CLAUSE_FINAL = 4;
/** Marks every clause result unknown and every cohort for evaluation at the next event (new binding, adoption). */
export function forgetClauseResults(state: UserState, plan: Plan): void {
  state.flags.fill(CLAUSE_STALE, plan.cohorts.length);
  state.ints.fill(0, plan.dirtyBase, plan.recheckBase + plan.cohortWords);
  state.evaluateAll = true;
  state.context = undefined;
}

/**
 * Stored slots of a format that keys them by short ids and leaves out slots at their initial value (codec.ts): the
 * tuples by the plan's slot ids, and whether a slot absent from them was left out for being initial (bound empty, not
 * fresh) rather than unknown to the encoding plan.
 */
export interface StoredSlots {
  resolve(plan: Plan): { readonly tuples: ReadonlyMap<number, unknown>; initial(slotId: number): boolean };
}

export function newUserState(): UserState {
  return new UserState();
}

/**
 * Sorted codes of the cohorts the user is in: read from the membership bits by rank (plan.ts `memberBase`), a few words
 * in code order, into an array of the right length. It runs at every segment call (and once more per user in an
 * owner's task), and the engine bench's users are in ~46 of its 100 cohorts: the scan of a flag byte per cohort with a
 * growing array took 776–805 ns a call against 357–367 (`node dist/bench/helpers.js 1000000`). A cached list per state
 * cost a splice per transition and 259 → 224 MB of heap at 100,000 resident users in `memory-process.js`.
 */
export function membershipsOf(state: UserState): number[] {
  if (state.packed !== undefined) unpackState(state);
  const plan = state.plan;
  if (plan === undefined) return [...state.storedMembers].sort((a, b) => a - b);
  const codes = plan.codes;
  const ints = state.ints;
  const base = plan.memberBase;
  let count = 0;
  for (let w = 0; w < plan.cohortWords; w++) count += bitCount(ints[base + w] as number);
  // Sized once (users are often in many cohorts: pushing grew the array several times).
  const out = new Array<number>(count);
  let at = 0;
  for (let w = 0; w < plan.cohortWords; w++) {
    let word = ints[base + w] as number;
    while (word !== 0) {
      const low = word & -word;
      out[at++] = codes[w * 32 + 31 - Math.clz32(low)] as number;
      word ^= low;
    }
  }
  return out;
}

/** The set bits of a 32-bit word. */
function bitCount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Sets whether the user is in the cohort at `position` (0 or 1): its flag and its membership bit by rank. */
export function setMembership(plan: Plan, state: UserState, position: number, holds: number): void {
  state.flags[position] = holds;
  const rank = plan.rankOf[position] as number;
  const at = plan.memberBase + (rank >>> 5);
  const bit = 1 << (rank & 31);
  const ints = state.ints;
  ints[at] = holds === 1 ? (ints[at] as number) | bit : (ints[at] as number) & ~bit;
}

/** Encoded slot tuples by slot id, whatever the binding (bound tuples share the state's ring objects). */
export function slotTuplesById(state: UserState): Map<number, unknown> {
  const plan = state.plan;
  if (plan === undefined) return new Map(state.stored);
  return new Map(plan.slots.map((slot) => [slot.id, slot.encode(state)]));
}

/**
 * Aligns the state with `plan`: slots found by id are adopted (checked, rings upgraded), missing ones start empty,
 * slots the plan does not have are dropped, memberships of cohorts the plan lacks are dropped. A packed state is
 * unpacked first.
 */
export function bindState(state: UserState, plan: Plan): void {
  if (state.packed !== undefined) unpackState(state);
  if (state.plan === plan) return;
  const resolved = state.plan === undefined ? state.storedSlots?.resolve(plan) : undefined;
  const tuples = resolved?.tuples ?? slotTuplesById(state);
  const members = membershipsOf(state);
  const fresh = new Set<number>();
  const hasHistory = state.count > 0;
  const { nums, ints, flags } = allocate(plan);
  state.nums = nums;
  state.ints = ints;
  state.objs = new Array<unknown>(plan.objCount).fill(undefined);
  for (const slot of plan.slots) {
    const tuple = tuples.get(slot.id);
    if (tuple === undefined && resolved !== undefined && resolved.initial(slot.id)) {
      // Left out by the encoder because it was untouched: exactly its initial value, up to date unless it was fresh.
      slot.init(state);
      if (state.fresh.has(slot.id)) fresh.add(slot.id);
      continue;
    }
    const adoption = tuple === undefined ? 'invalid' : slot.adopt(tuple, state);
    if (adoption === 'invalid') {
      slot.init(state);
      if (hasHistory) fresh.add(slot.id);
    } else if (adoption === 'stale' || state.fresh.has(slot.id)) {
      fresh.add(slot.id);
    }
  }
  state.flags = flags;
  for (const code of members) {
    const position = plan.positionOfCode.get(code);
    if (position !== undefined) setMembership(plan, state, position, 1);
  }
  state.fresh = fresh.size === 0 ? NO_SLOTS : fresh;
  state.stored = NO_TUPLES;
  state.storedMembers = NO_CODES;
  state.storedSlots = undefined;
  state.plan = plan;
  state.nums.fill(Number.NEGATIVE_INFINITY, plan.expiryBase);
  state.nextExpiry = Number.NEGATIVE_INFINITY;
  forgetClauseResults(state, plan);
}

/** A bound state's numbers and flags views, all over one buffer (`allocate`). */
export interface StateBuffers {
  readonly nums: Float64Array;
  readonly ints: Uint32Array;
  readonly flags: Uint8Array;
}

/**
 * One allocation per state: the numbers (the cohorts' decision bits among them), then the flags (membership, clause
 * results); `reuse` (the views `packState` released, every byte of which the caller overwrites) when they have the
 * plan's sizes.
 */
export function allocate(plan: Plan, reuse?: StateBuffers): StateBuffers {
  const flagCount = plan.cohorts.length + plan.clauseTests.length;
  if (reuse !== undefined && reuse.nums.length === plan.numCount && reuse.flags.length === flagCount) return reuse;
  const numBytes = plan.numCount * Float64Array.BYTES_PER_ELEMENT;
  const buffer = new ArrayBuffer(numBytes + flagCount);
  return {
    nums: new Float64Array(buffer, 0, plan.numCount),
    ints: new Uint32Array(buffer, 0, 2 * plan.numCount),
    flags: new Uint8Array(buffer, numBytes, flagCount),
  };
}
