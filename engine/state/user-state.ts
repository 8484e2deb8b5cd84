// A user's state: session/view trackers (E1–E3), slot data keyed by slot id, current memberships, and which slots
// were created after the user already had history (to be backfilled). Bound lazily to one plan at a time.

import type { SegmentContext } from '../api.js';
import type { Plan } from '../plan/plan.js';
import type { SlotStore } from './slots/types.js';

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
const NO_NUMS = new Float64Array(0);
const NO_INTS = new Uint32Array(0);
const NO_FLAGS = new Uint8Array(0);
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
   * `ints`, slots/types.ts), and its ring objects.
   */
  nums: Float64Array = NO_NUMS;
  ints: Uint32Array = NO_INTS;
  objs: unknown[] = [];
  /**
   * Bound: membership by plan cohort position [0, cohorts); then each clause's last result from `cohorts` on: 0 / 1
   * (plus CLAUSE_FINAL when it can no longer change), or CLAUSE_STALE when a slot it reads changed since (a context
   * clause's flag stays CLAUSE_STALE); then, from `cohorts + clauses`, per cohort its state: COHORT_RECHECK when its
   * last decision read a context clause, COHORT_DIRTY when a clause of it went stale since (0: its last decision
   * stands). Only membership is encoded.
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
   * Packed (`packState`): the numbers that differ from an empty state's and the flags (two to a byte), in one buffer,
   * while `nums` and `flags` are empty; every engine entry unpacks it first (`bindState`). Undefined: not packed.
   */
  packed: Uint8Array | undefined = undefined;
}

/** A clause flag whose slot changed since the clause was last evaluated (evaluated when its cohort needs it). */
export const CLAUSE_STALE = 2;
/**
 * Added to a clause flag (0 / 1) whose answer can no longer change (plan/sticky.ts): its slot's changes no longer
 * make it stale. Read a clause flag's answer as `flag & 1`.
 */
export const CLAUSE_FINAL = 4;
/** A cohort state bit: its last decision read a context clause, so it is decided again at every event (E13). */
export const COHORT_RECHECK = 1;
/** A cohort state bit: a clause of it went stale since its last decision. */
export const COHORT_DIRTY = 2;

/** Marks every clause result unknown and every cohort for evaluation at the next event (new binding, adoption). */
export function forgetClauseResults(state: UserState, plan: Plan): void {
  const cohortBase = plan.cohorts.length + plan.clauseTests.length;
  state.flags.fill(CLAUSE_STALE, plan.cohorts.length, cohortBase);
  state.flags.fill(0, cohortBase);
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
 * Sorted codes of the cohorts the user is in: read from the membership flags in code order (a scan of one byte per
 * cohort; a cached list per state cost a splice per transition and 259 → 224 MB of heap at 100,000 resident users in
 * `memory-process.js`).
 */
export function membershipsOf(state: UserState): number[] {
  if (state.packed !== undefined) unpackState(state);
  const plan = state.plan;
  if (plan === undefined) return [...state.storedMembers].sort((a, b) => a - b);
  const out: number[] = [];
  const byCode = plan.byCode;
  const codes = plan.codes;
  const member = state.flags;
  for (let i = 0; i < byCode.length; i++) {
    if (member[byCode[i] as number] === 1) out.push(codes[i] as number);
  }
  return out;
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
    if (position !== undefined) flags[position] = 1;
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

/**
 * One allocation per state: the numbers, then the flags (membership, clause results, cohort states); `reuse` (a
 * buffer `packState` released, every byte of which the caller overwrites) when it has the size.
 */
export function allocate(plan: Plan, reuse?: ArrayBuffer): { nums: Float64Array; ints: Uint32Array; flags: Uint8Array } {
  const flagCount = 2 * plan.cohorts.length + plan.clauseTests.length;
  const numBytes = plan.numCount * Float64Array.BYTES_PER_ELEMENT;
  const buffer = reuse !== undefined && reuse.byteLength === numBytes + flagCount ? reuse : new ArrayBuffer(numBytes + flagCount);
  return {
    nums: new Float64Array(buffer, 0, plan.numCount),
    ints: new Uint32Array(buffer, 0, 2 * plan.numCount),
    flags: new Uint8Array(buffer, numBytes, flagCount),
  };
}

/** Per plan: the numbers of an empty state bound to it, as 32-bit words (what packed states are stored against): the 32-bit fields are already words. */
const emptyWords = new WeakMap<Plan, Int32Array>();

function emptyWordsOf(plan: Plan): Int32Array {
  let words = emptyWords.get(plan);
  if (words === undefined) {
    const empty = new UserState();
    bindState(empty, plan);
    words = new Int32Array(empty.nums.buffer, empty.nums.byteOffset, 2 * empty.nums.length).slice();
    emptyWords.set(plan, words);
  }
  return words;
}

/**
 * Holds a bound state compactly (an owner's resident tier): only the numbers that differ, bit for bit, from those of
 * an empty state bound to the same plan (their 64-bit patterns and positions; all of them when most differ) and the
 * flags, two to a byte when every one fits in 4 bits (they hold 0-5), in one buffer; the rest of the state (trackers,
 * rings, plan) stays. `unpackState` (or any engine entry) restores it bit for bit, still bound, so its next step
 * neither binds nor decides every cohort again. An unbound or packed state is left as it is.
 *
 * Layout: two Int32 (the count of differing numbers, -1 when all are kept; 1 when the flags are in nibbles, else 0),
 * the kept numbers' words (two Int32 each), their positions (Uint16 when the plan has at most 65,536 numbers, else
 * Int32; none when all are kept), the flags.
 */
export function packState(state: UserState): ArrayBuffer | undefined {
  const plan = state.plan;
  if (plan === undefined || state.packed !== undefined) return undefined;
  // The state's own buffer (numbers and flags), free once packed: `unpackState` may take it for another state.
  const released = state.nums.byteOffset === 0 && state.flags.buffer === state.nums.buffer ? state.nums.buffer : undefined;
  const empty = emptyWordsOf(plan);
  const count = state.nums.length;
  const words = new Int32Array(state.nums.buffer, state.nums.byteOffset, 2 * count);
  const flags = state.flags;
  let differing = 0;
  for (let i = 0; i < count; i++) if (words[2 * i] !== empty[2 * i] || words[2 * i + 1] !== empty[2 * i + 1]) differing++;
  const positionBytes = count <= 0x10000 ? 2 : 4;
  const dense = (8 + positionBytes) * differing >= 8 * count;
  const kept = dense ? count : differing;
  const positionsAt = 8 + 8 * kept;
  const flagsAt = positionsAt + (dense ? 0 : positionBytes * kept);
  const nibbles = fitsNibbles(flags);
  const buffer = new ArrayBuffer(flagsAt + (nibbles ? (flags.length + 1) >> 1 : flags.length));
  const header = new Int32Array(buffer, 0, 2 + 2 * kept);
  header[0] = dense ? -1 : differing;
  header[1] = nibbles ? 1 : 0;
  if (dense) header.set(words, 2);
  else {
    const positions = positionBytes === 2 ? new Uint16Array(buffer, positionsAt, kept) : new Int32Array(buffer, positionsAt, kept);
    let k = 0;
    for (let i = 0; i < count; i++) {
      if (words[2 * i] === empty[2 * i] && words[2 * i + 1] === empty[2 * i + 1]) continue;
      positions[k] = i;
      header[2 + 2 * k] = words[2 * i] as number;
      header[3 + 2 * k] = words[2 * i + 1] as number;
      k++;
    }
  }
  const packed = new Uint8Array(buffer);
  if (nibbles) {
    for (let i = 0, at = flagsAt; i < flags.length; i += 2, at++) packed[at] = (flags[i] as number) | ((flags[i + 1] ?? 0) << 4);
  } else packed.set(flags, flagsAt);
  state.packed = packed;
  state.nums = NO_NUMS;
  state.ints = NO_INTS;
  state.flags = NO_FLAGS;
  return released as ArrayBuffer | undefined;
}

function fitsNibbles(flags: Uint8Array): boolean {
  for (let i = 0; i < flags.length; i++) if ((flags[i] as number) > 15) return false;
  return true;
}

/**
 * Restores a packed state as it was packed (bound to the same plan), into `reuse` when it has the size (a buffer
 * `packState` released: no state may use it any more); a state not packed is left as it is.
 */
export function unpackState(state: UserState, reuse?: ArrayBuffer): void {
  const packed = state.packed;
  const plan = state.plan;
  if (packed === undefined || plan === undefined) return;
  const { nums, ints, flags } = allocate(plan, reuse);
  const count = nums.length;
  const words = new Int32Array(nums.buffer, nums.byteOffset, 2 * count);
  const head = new Int32Array(packed.buffer, packed.byteOffset, 2);
  const dense = head[0] === -1;
  const kept = dense ? count : (head[0] as number);
  const stored = new Int32Array(packed.buffer, packed.byteOffset + 8, 2 * kept);
  const positionsAt = 8 + 8 * kept;
  let flagsAt = positionsAt;
  if (dense) words.set(stored);
  else {
    words.set(emptyWordsOf(plan));
    const positionBytes = count <= 0x10000 ? 2 : 4;
    const positions = positionBytes === 2 ? new Uint16Array(packed.buffer, packed.byteOffset + positionsAt, kept) : new Int32Array(packed.buffer, packed.byteOffset + positionsAt, kept);
    for (let k = 0; k < kept; k++) {
      const i = positions[k] as number;
      words[2 * i] = stored[2 * k] as number;
      words[2 * i + 1] = stored[2 * k + 1] as number;
    }
    flagsAt += positionBytes * kept;
  }
  if (head[1] === 1) {
    for (let i = 0, at = flagsAt; i < flags.length; i += 2, at++) {
      const byte = packed[at] as number;
      flags[i] = byte & 15;
      if (i + 1 < flags.length) flags[i + 1] = byte >> 4;
    }
  } else flags.set(packed.subarray(flagsAt));
  state.nums = nums;
  state.ints = ints;
  state.flags = flags;
  state.packed = undefined;
}
