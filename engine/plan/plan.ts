// The compiled plan: every enabled cohort of an organization as slots (shared by canonical key), clause tests in
// conjunctive normal form, and the indexes the segment step walks. Immutable once built; reusable for any user.

import type { SegmentContext } from '../api.js';
import type { SlotDef, SlotStore } from '../state/slots/types.js';
import type { ValueTest, WhereParts } from './conditions/index.js';
import type { ContextMemo } from './context-memo.js';
import type { NumberComparison } from '../query/ast.js';
import { generateHotPaths, type HotPaths } from '../state/generated.js';

/**
 * A slot clause as data (the same test as its ClauseTest): its slot's value compared, or a transition flag (negated
 * for has_not_*). Undefined for context and constant clauses.
 */
export type ClauseShape = { readonly compare: NumberComparison } | { readonly negate: boolean } | undefined;

/** One clause compiled: reads slot data (or the context) and answers whether the clause holds now. */
export type ClauseTest = (u: SlotStore, ctx: SegmentContext) => boolean;

/**
 * A cohort in CNF over the plan's flattened clauses [start, end): group i is the clauses up to groupEnds[i]; every
 * group must hold, a group holds when any of its clauses does.
 */
export interface CompiledCohort {
  readonly code: number;
  readonly start: number;
  readonly end: number;
  readonly groupEnds: Int32Array;
  /** Has a clause reading the context (imported segments, connections rows): evaluated at every event. */
  readonly volatile: boolean;
  /**
   * Every context clause of it answers from the context alone, not from the user's clock, session or view (imported
   * segments; connections rows over all time, `first N`, `last N` or a fixed window): with the same constant
   * context (api.ts) and no stale clause, its last decision stands.
   */
  readonly timeless: boolean;
}

/** Slots that hear events of one name and share one `where` evaluation per event. */
export interface FilterGroup {
  /** The `where` test on the event's properties; undefined = every event of the name matches. */
  readonly test: ValueTest | undefined;
  /** The same test as its parts, for the generated hooks (undefined with `test`). */
  readonly parts: WhereParts | undefined;
  readonly slots: Int32Array;
}

export interface PlanParts {
  readonly version: number;
  readonly slots: readonly SlotDef[];
  readonly cohorts: readonly CompiledCohort[];
  readonly clauseTests: readonly ClauseTest[];
  readonly clauseCohort: Int32Array;
  readonly clauseVolatile: Uint8Array;
  /** Per clause: the answer it keeps once given (plan/sticky.ts), or NOT_STICKY. */
  readonly clauseSticky: Uint8Array;
  /** Per clause: its answer is final once its slot's value exceeds this (plan/sticky.ts); +Infinity: never. */
  readonly clauseFinalAbove: Float64Array;
  /** Per clause: the index of the slot it reads, or -1 (context and constant clauses). */
  readonly clauseSlot: Int32Array;
  /** Per clause: its test as data, for the generated code (state/generated.ts). */
  readonly clauseShapes?: readonly ClauseShape[];
  readonly byEvent: ReadonlyMap<string, readonly FilterGroup[]>;
  /** Per slot index: the clauses (indexes in `clauseTests`) that read the slot. */
  readonly dependents: readonly Int32Array[];
  /** Per cohort position: indexes of the transition slots hearing its entries / exits. */
  readonly entered: readonly Int32Array[];
  readonly exited: readonly Int32Array[];
  /** The memo the context clauses ask through. */
  readonly contextMemo: ContextMemo;
  /** Whether to generate the hot paths as code (state/generated.ts). */
  readonly generateCode?: boolean;
  /** The top-level keys of an event's properties the plan can read (property-keys.ts); undefined: any. */
  readonly eventPropertyKeys: ReadonlySet<string> | undefined;
}

export class Plan {
  readonly version: number;
  /** Cohort codes, ascending. */
  readonly codes: readonly number[];
  /** Canonical keys of the plan's slots (what `missingSlots` reports). */
  readonly slotKeys: readonly string[];
  /**
   * The top-level keys of an event's properties the plan can read (plan/property-keys.ts); undefined: it may read any.
   * Its answers for an event are the same with the other top-level properties left out.
   */
  readonly eventPropertyKeys: ReadonlySet<string> | undefined;
  /** @internal Slot definitions, placed in a user's numeric store (numCount 8-byte words, objCount objects). */
  readonly slots: readonly SlotDef[];
  readonly numCount: number;
  readonly objCount: number;
  /** Where the timed slots' expiry bounds start in a user's numbers. */
  readonly expiryBase: number;
  /**
   * @internal The cohorts' decision state in a user's `ints`: `cohortWords` words of dirty bits from `dirtyBase`, as
   * many of recheck bits from `recheckBase`; cohort position p is bit p % 32 of word p / 32 (bit 0 the lowest).
   */
  readonly cohortWords: number;
  readonly dirtyBase: number;
  readonly recheckBase: number;
  /**
   * @internal Then as many words of membership bits by rank, the cohort's place in `codes` (`rankOf`): bit r % 32 of
   * word `memberBase` + r / 32 is set exactly when `flags` holds the cohort of rank r as a member (user-state.ts
   * `setMembership`), so the memberships are read in code order from a few words (`membershipsOf`).
   */
  readonly memberBase: number;
  /**
   * @internal Per cohort word: the bits of the cohorts it holds, and of those whose context clauses do not all read
   * the context alone (not CompiledCohort.timeless: a constant context does not settle them).
   */
  readonly cohortMask: Int32Array;
  readonly changingMask: Int32Array;
  /** @internal Cohorts in evaluation (dependency) order (E12). */
  readonly cohorts: readonly CompiledCohort[];
  /** @internal Positions in `cohorts`, by ascending code (E19 output order). */
  readonly byCode: Int32Array;
  /** @internal Per position in `cohorts`, its rank in ascending code order (`byCode`'s inverse). */
  readonly rankOf: Int32Array;
  /** @internal */
  readonly positionOfCode: ReadonlyMap<number, number>;
  /** @internal */
  readonly slotIndexOfKey: ReadonlyMap<string, number>;
  /** @internal Every clause, cohorts in evaluation order; the cohort position of each; context-reading ones. */
  readonly clauseTests: readonly ClauseTest[];
  readonly clauseCohort: Int32Array;
  readonly clauseVolatile: Uint8Array;
  /** @internal Per clause: the answer it keeps once given, a bound above which its answer is final (plan/sticky.ts). */
  readonly clauseSticky: Uint8Array;
  readonly clauseFinalAbove: Float64Array;
  /** @internal Per clause: the slot it reads, or -1. */
  readonly clauseSlot: Int32Array;
  /** @internal Per clause: its test as data (or undefined: only its ClauseTest). */
  readonly clauseShapes: readonly ClauseShape[];
  /** @internal Event name -> the slot groups it can change. */
  readonly byEvent: ReadonlyMap<string, readonly FilterGroup[]>;
  /** @internal Slot indexes with run-change or time hooks. */
  readonly sessionSlots: Int32Array;
  readonly viewSlots: Int32Array;
  readonly timedSlots: Int32Array;
  /** @internal */
  readonly dependents: readonly Int32Array[];
  readonly entered: readonly Int32Array[];
  readonly exited: readonly Int32Array[];
  /** @internal Positions of cohorts evaluated at every event. */
  readonly volatile: Uint8Array;
  /** @internal Context answers shared by the clauses within one call (started by segment / evaluateAt). */
  readonly contextMemo: ContextMemo;
  /**
   * @internal The same CNF and reader lists flattened for the hot loops (one typed array each, no per-cohort
   * objects): cohort p's clauses start at cohortStart[p], its groups are groupEnds[cohortGroups[p] ..
   * cohortGroups[p + 1]); slot i's readers are readers[readerStart[i] .. readerStart[i + 1]).
   */
  readonly cohortStart: Int32Array;
  readonly cohortGroups: Int32Array;
  readonly groupEnds: Int32Array;
  readonly readerStart: Int32Array;
  readonly readers: Int32Array;
  /** @internal The generated hot paths (state/generated.ts), or undefined: the segment step's generic loops run. */
  readonly hot: HotPaths | undefined;

  constructor(parts: PlanParts) {
    this.version = parts.version;
    this.slots = Object.freeze([...parts.slots]);
    // A user's numbers: every slot's fields in plan order, in bytes: a slot's 64-bit fields on the next 8-byte
    // boundary, then its 32-bit ones (consecutive 32-bit-only slots share 8-byte words), then one 64-bit expiry
    // bound per timed slot. numCount counts 8-byte words; `int` offsets index the same bytes 4 at a time.
    let bytes = 0;
    let obj = 0;
    const places: { num: number; int: number; obj: number }[] = [];
    for (const slot of this.slots) {
      if (slot.numWidth > 0) bytes = Math.ceil(bytes / 8) * 8;
      const num = bytes / 8;
      bytes += 8 * slot.numWidth;
      const int = bytes / 4;
      bytes += 4 * slot.intWidth;
      places.push({ num, int, obj });
      obj += slot.objWidth;
    }
    // Then the cohorts' decision state, one bit per cohort position in 32-bit words (segment.ts evaluateCohorts):
    // dirty (a clause of it went stale since its last decision), then recheck (its last decision read a context
    // clause); then the memberships, one bit per cohort by rank in code order.
    this.cohortWords = Math.ceil(parts.cohorts.length / 32);
    bytes = Math.ceil(bytes / 4) * 4;
    this.dirtyBase = bytes / 4;
    this.recheckBase = this.dirtyBase + this.cohortWords;
    this.memberBase = this.recheckBase + this.cohortWords;
    bytes += 12 * this.cohortWords;
    this.expiryBase = Math.ceil(bytes / 8);
    let timed = 0;
    this.slots.forEach((slot, i) => {
      const at = places[i]!;
      slot.place(at.num, at.int, at.obj, slot.timed ? this.expiryBase + timed++ : -1);
    });
    this.numCount = this.expiryBase + timed;
    this.objCount = obj;
    this.cohorts = Object.freeze([...parts.cohorts]);
    this.clauseTests = Object.freeze([...parts.clauseTests]);
    this.clauseCohort = parts.clauseCohort;
    this.clauseVolatile = parts.clauseVolatile;
    this.clauseSticky = parts.clauseSticky;
    this.clauseFinalAbove = parts.clauseFinalAbove;
    this.clauseSlot = parts.clauseSlot;
    this.clauseShapes = Object.freeze([...(parts.clauseShapes ?? [])]);
    this.byEvent = parts.byEvent;
    this.dependents = parts.dependents;
    this.entered = parts.entered;
    this.exited = parts.exited;
    this.contextMemo = parts.contextMemo;
    this.eventPropertyKeys = parts.eventPropertyKeys;
    const positions = this.cohorts.map((cohort, position) => ({ code: cohort.code, position }));
    positions.sort((a, b) => a.code - b.code);
    this.byCode = Int32Array.from(positions.map((p) => p.position));
    this.rankOf = new Int32Array(positions.length);
    positions.forEach((p, rank) => (this.rankOf[p.position] = rank));
    this.codes = Object.freeze(positions.map((p) => p.code));
    this.positionOfCode = new Map(positions.map((p) => [p.code, p.position]));
    this.slotKeys = Object.freeze(this.slots.map((slot) => slot.key));
    this.slotIndexOfKey = new Map(this.slots.map((slot, index) => [slot.key, index]));
    this.sessionSlots = indexesWhere(this.slots, (slot) => slot.resetsOnSession);
    this.viewSlots = indexesWhere(this.slots, (slot) => slot.resetsOnView);
    this.timedSlots = indexesWhere(this.slots, (slot) => slot.timed);
    this.volatile = Uint8Array.from(this.cohorts.map((cohort) => (cohort.volatile ? 1 : 0)));
    const cohortMask = new Int32Array(this.cohortWords);
    const changingMask = new Int32Array(this.cohortWords);
    this.cohorts.forEach((cohort, p) => {
      const w = p >>> 5;
      cohortMask[w] = (cohortMask[w] as number) | (1 << (p & 31));
      if (!cohort.timeless) changingMask[w] = (changingMask[w] as number) | (1 << (p & 31));
    });
    this.cohortMask = cohortMask;
    this.changingMask = changingMask;
    this.cohortStart = Int32Array.from(this.cohorts.map((cohort) => cohort.start));
    this.cohortGroups = Int32Array.from(offsetsOf(this.cohorts.map((cohort) => cohort.groupEnds.length)));
    this.groupEnds = Int32Array.from(this.cohorts.flatMap((cohort) => Array.from(cohort.groupEnds)));
    this.readerStart = Int32Array.from(offsetsOf(this.dependents.map((list) => list.length)));
    this.readers = Int32Array.from(this.dependents.flatMap((list) => Array.from(list)));
    this.hot = parts.generateCode === false ? undefined : generateHotPaths(this);
    Object.freeze(this);
  }

}

/** [0, a, a + b, ...]: where each run of the given lengths starts, and the total. */
function offsetsOf(lengths: readonly number[]): number[] {
  const out = [0];
  for (const length of lengths) out.push((out[out.length - 1] as number) + length);
  return out;
}

function indexesWhere(slots: readonly SlotDef[], keep: (slot: SlotDef) => boolean): Int32Array {
  const out: number[] = [];
  slots.forEach((slot, index) => {
    if (keep(slot)) out.push(index);
  });
  return Int32Array.from(out);
}
