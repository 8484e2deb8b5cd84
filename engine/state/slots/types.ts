// The contract between the segment step and a slot: a small per-user aggregate laid out in the user's contiguous
// numeric store (plus a few objects for rings), and a definition shared by every user that knows how to create,
// update, age, read, encode and adopt it. Encoded, a slot is a tuple: its numbers (NaN as null), then its objects.

/** What slots read of the user's trackers at the event being processed (E1–E3). */
export interface Trackers {
  /** Effective time of the event being processed: "now" (E1). */
  readonly time: number;
  /** Effective time of the previous event (equal to `time` at the first event). */
  readonly prevTime: number;
  /** Ordinal of the event being processed in the user's history, from 0. */
  readonly index: number;
  readonly sessionStartIndex: number;
  readonly sessionStartTime: number;
  readonly viewStartIndex: number;
  readonly viewStartTime: number;
  /** E6: seconds of the event being processed when it is an engagement event. */
  readonly engagedSeconds: number;
  /** E6: completion of the event being processed, NaN when it has none. */
  readonly engagedCompletion: number;
}

/**
 * A user's slot storage: every slot's numbers in one buffer (cache-friendly), ring objects beside it. The buffer is
 * read through two views: `nums` for 64-bit fields (times, sums, anything fractional or NaN) and `ints` for 32-bit
 * ones (counts, flags, ordinals, bit words: unsigned, saturating at UINT_MAX), each slot's fields side by side.
 */
export interface SlotStore extends Trackers {
  readonly nums: Float64Array;
  readonly ints: Uint32Array;
  readonly objs: unknown[];
  /** No timed slot's value changes before this effective time (each slot's own bound is in `nums`). */
  nextExpiry: number;
}

/** A timed slot whose expiry bound sits at nums[expiryAt] took in a time that leaves its window at `at`. */
export function noteExpiry(s: SlotStore, expiryAt: number, at: number): void {
  if (at < (s.nums[expiryAt] as number)) s.nums[expiryAt] = at;
  if (at < s.nextExpiry) s.nextExpiry = at;
}

/** The largest value a 32-bit field holds: counts stop there (a user would need that many events). */
export const UINT_MAX = 0xffff_ffff;

function isUint32(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= UINT_MAX;
}

/** Adds 1 to the 32-bit field at `at`, holding at UINT_MAX instead of wrapping to 0. */
export function increment(ints: Uint32Array, at: number): void {
  if ((ints[at] as number) < UINT_MAX) ints[at] = (ints[at] as number) + 1;
}

/** How a stored slot fits the plan's definition: usable, usable but not up to date (backfill), or unusable. */
export type Adoption = 'current' | 'stale' | 'invalid';

export interface SlotDef {
  /** Canonical key (stable serialisation of what the slot depends on) and its 53-bit id used in encoded state. */
  readonly key: string;
  readonly id: number;
  /** The event name whose events update the slot, with the result of `where` (undefined: transition slots). */
  readonly event: string | undefined;
  /** Canonical text of the slot's `where` (slots sharing event and where share one evaluation per event). */
  readonly whereKey: string;
  /** Whether events of `event` that fail `where` still reach `onEvent` (`first N` / `last N` count them). */
  readonly needsUnmatched: boolean;
  readonly resetsOnSession: boolean;
  readonly resetsOnView: boolean;
  /** Whether the value can change as time passes with no matching event (`the_last` windows). */
  readonly timed: boolean;
  /**
   * 64-bit numbers, 32-bit numbers and objects the slot occupies, and where: `num` indexes `nums`, `int` indexes
   * `ints` (offsets set once by the compiler). Encoded, the tuple is the numbers, then the 32-bit ones, then the objects.
   */
  readonly numWidth: number;
  readonly intWidth: number;
  readonly objWidth: number;
  readonly num: number;
  readonly int: number;
  readonly obj: number;
  /** Timed slots: where in `nums` the slot's expiry bound sits (not part of its encoded tuple; -1 when not timed). */
  readonly expiryAt: number;
  place(num: number, int: number, obj: number, expiryAt: number): void;
  /** Writes the empty aggregate. */
  init(s: SlotStore): void;
  /** Reads an encoded tuple (possibly from another plan version) into the store, upgrading it when it can. */
  adopt(tuple: unknown, s: SlotStore): Adoption;
  /** The encoded tuple. */
  encode(s: SlotStore): unknown[];
  /** An event of `event`; `matched` is its `where` result. Returns whether the value may have changed. */
  onEvent(s: SlotStore, matched: boolean): boolean;
  /** The session run changed at this event (before `onEvent`). */
  onSessionStart(s: SlotStore): boolean;
  /** The view run changed at this event (before `onEvent`). */
  onViewStart(s: SlotStore): boolean;
  /** Time advanced to `s.time`: drop what left the window. */
  refresh(s: SlotStore): boolean;
  /** The earliest effective time at which `refresh` could change the value (Infinity: never). */
  expiry(s: SlotStore): number;
  /** The slot's value now (a count, a sum, a largest completion, or 0/1 for transitions). */
  value(s: SlotStore): number;
  /**
   * Generated code (state/generated.ts) in place of `onEvent`, for forms whose update is a few operations on the
   * user's numbers (slots/source.ts): statements that update the slot as `onEvent(s, matched)` would (`matched` is a
   * boolean expression) and run `changed` where it would return true; undefined: the generated code calls `onEvent`.
   */
  eventSource?(matched: string, changed: string, constants: number[]): string | undefined;
  /** Likewise in place of the run reset (`onSessionStart` / `onViewStart`, whichever the slot's form resets on). */
  resetSource?(changed: string): string | undefined;
  /** `value(s)` as an expression of `s`, or undefined. */
  valueSource?(): string | undefined;
}

/** A transition slot also hears the entries or exits of one cohort (E10, E11). */
export interface TransitionSlotDef extends SlotDef {
  readonly cohort: number;
  readonly direction: 'entered' | 'exited';
  /** Where on the event causing the transition, undefined for none. */
  readonly matches: ((properties: unknown) => boolean) | undefined;
  onTransition(s: SlotStore, matched: boolean): boolean;
}

export function isTransitionSlot(def: SlotDef): def is TransitionSlotDef {
  return 'onTransition' in def;
}

/** Base with no-op hooks and the generic tuple codec; kinds override what they need. */
export abstract class BaseSlot implements SlotDef {
  abstract readonly key: string;
  abstract readonly id: number;
  abstract readonly event: string | undefined;
  abstract readonly whereKey: string;
  needsUnmatched = false;
  resetsOnSession = false;
  resetsOnView = false;
  timed = false;
  numWidth = 1;
  intWidth = 0;
  objWidth = 0;
  num = 0;
  int = 0;
  obj = 0;
  expiryAt = -1;

  place(num: number, int: number, obj: number, expiryAt: number): void {
    this.num = num;
    this.int = int;
    this.obj = obj;
    this.expiryAt = expiryAt;
  }

  abstract init(s: SlotStore): void;
  /** Checks the numbers and objects just read (kind-specific ranges, ring shapes, cap upgrades). */
  protected abstract check(s: SlotStore): Adoption;

  /** A 32-bit field takes only what it can hold exactly: an integer in [0, UINT_MAX]. */
  adopt(tuple: unknown, s: SlotStore): Adoption {
    const numbers = this.numWidth + this.intWidth;
    if (!Array.isArray(tuple) || tuple.length !== numbers + this.objWidth) return 'invalid';
    for (let i = 0; i < this.numWidth; i++) {
      const v: unknown = tuple[i];
      if (v === null) s.nums[this.num + i] = Number.NaN;
      else if (typeof v === 'number') s.nums[this.num + i] = v;
      else return 'invalid';
    }
    for (let i = 0; i < this.intWidth; i++) {
      const v: unknown = tuple[this.numWidth + i];
      if (!isUint32(v)) return 'invalid';
      s.ints[this.int + i] = v;
    }
    for (let j = 0; j < this.objWidth; j++) s.objs[this.obj + j] = tuple[numbers + j];
    return this.check(s);
  }

  encode(s: SlotStore): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < this.numWidth; i++) {
      const v = s.nums[this.num + i] as number;
      out.push(Number.isNaN(v) ? null : v);
    }
    for (let i = 0; i < this.intWidth; i++) out.push(s.ints[this.int + i] as number);
    for (let j = 0; j < this.objWidth; j++) out.push(s.objs[this.obj + j]);
    return out;
  }

  onEvent(_s: SlotStore, _matched: boolean): boolean {
    return false;
  }
  onSessionStart(_s: SlotStore): boolean {
    return false;
  }
  onViewStart(_s: SlotStore): boolean {
    return false;
  }
  refresh(_s: SlotStore): boolean {
    return false;
  }
  expiry(_s: SlotStore): number {
    return Number.POSITIVE_INFINITY;
  }
  abstract value(s: SlotStore): number;
}
