// Transition slots (E10, E11): whether an entry (or exit) of one cohort happened at an event matching `where` and
// within `during`. A has_/has_not_ pair shares the slot (value 1 or 0). Numbers by form: [flag] for all-time, fixed
// windows and runs; [latest time, NaN for none] for `the_last`; [seen, flag] for `first N`; [total, latest ordinal]
// for `last N` (ordinals of that cohort's transitions of this direction, from 1).

import type { During } from '../../query/ast.js';
import { areCounts, areFlags } from './shape.js';
import { numSource, zeroSource } from './source.js';
import { BaseSlot, noteExpiry, type Adoption, type SlotStore, type TransitionSlotDef } from './types.js';
import { formOf, inFixedWindow, windowCount, windowMs, type Form } from './window.js';

export class TransitionSlot extends BaseSlot implements TransitionSlotDef {
  readonly event = undefined;
  readonly form: Form;
  private readonly ms: number;
  private readonly n: number;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly whereKey: string,
    readonly cohort: number,
    readonly direction: 'entered' | 'exited',
    readonly matches: ((properties: unknown) => boolean) | undefined,
    private readonly during: During | undefined,
  ) {
    super();
    this.form = formOf(during);
    this.ms = windowMs(during);
    this.n = windowCount(during);
    this.resetsOnSession = this.form === 'this_session';
    this.resetsOnView = this.form === 'current_view';
    this.timed = this.form === 'the_last';
    this.numWidth = this.form === 'first' || this.form === 'last' ? 2 : 1;
  }

  init(s: SlotStore): void {
    s.nums.fill(0, this.num, this.num + this.numWidth);
    if (this.form === 'the_last') s.nums[this.num] = Number.NaN;
  }

  protected check(s: SlotStore): Adoption {
    const nums = s.nums;
    const at = this.num;
    switch (this.form) {
      case 'the_last':
        return 'current';
      case 'first':
        return areCounts(nums, at, 1) && (nums[at] as number) <= this.n && areFlags(nums, at + 1, 1) ? 'current' : 'invalid';
      case 'last':
        return areCounts(nums, at, 2) && (nums[at + 1] as number) <= (nums[at] as number) ? 'current' : 'invalid';
      default:
        return areFlags(nums, at, 1) ? 'current' : 'invalid';
    }
  }

  /** An entry or exit of `cohort` (per `direction`) at the event being processed; `matched` is its `where`. */
  onTransition(s: SlotStore, matched: boolean): boolean {
    const nums = s.nums;
    const at = this.num;
    switch (this.form) {
      case 'the_last':
        if (!matched) return false;
        nums[at] = s.time;
        noteExpiry(s, this.expiryAt, s.time + this.ms);
        return true;
      case 'first':
        if ((nums[at] as number) >= this.n) return false;
        nums[at] = (nums[at] as number) + 1;
        if (!matched || nums[at + 1] === 1) return false;
        nums[at + 1] = 1;
        return true;
      case 'last':
        nums[at] = (nums[at] as number) + 1;
        if (matched) nums[at + 1] = nums[at] as number;
        return true;
      default:
        if (!matched || nums[at] === 1 || !inFixedWindow(this.during, s.time)) return false;
        nums[at] = 1;
        return true;
    }
  }

  resetSource(changed: string): string {
    return zeroSource(this.num, 1, changed);
  }

  /** Flags and `first N` read as generated code (state/generated.ts); `the_last` and `last N` keep their calls. */
  valueSource(): string | undefined {
    switch (this.form) {
      case 'the_last':
      case 'last':
        return undefined;
      case 'first':
        return numSource(this.num + 1);
      default:
        return numSource(this.num);
    }
  }

  onSessionStart(s: SlotStore): boolean {
    return clearFlag(s.nums, this.num);
  }

  onViewStart(s: SlotStore): boolean {
    return clearFlag(s.nums, this.num);
  }

  /** `the_last`: the latest entry leaves the window when it falls to or before now - length (NaN never does). */
  refresh(s: SlotStore): boolean {
    const t = s.nums[this.num] as number;
    return t <= s.time - this.ms && t > s.prevTime - this.ms;
  }

  /** Infinity once the latest entry has left (refresh saw it leave): nothing changes until the next transition. */
  expiry(s: SlotStore): number {
    const t = s.nums[this.num] as number;
    return Number.isNaN(t) || t + this.ms <= s.time ? Number.POSITIVE_INFINITY : t + this.ms;
  }

  value(s: SlotStore): number {
    const nums = s.nums;
    const at = this.num;
    switch (this.form) {
      case 'the_last':
        return (nums[at] as number) > s.time - this.ms ? 1 : 0;
      case 'first':
        return nums[at + 1] as number;
      case 'last': {
        const latest = nums[at + 1] as number;
        return latest > 0 && latest > (nums[at] as number) - this.n ? 1 : 0;
      }
      default:
        return nums[at] as number;
    }
  }
}

function clearFlag(nums: Float64Array, at: number): boolean {
  if (nums[at] === 0) return false;
  nums[at] = 0;
  return true;
}
