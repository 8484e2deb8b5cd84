// engaged_time slots (E6, E7): the sum of engaged seconds of matching PageviewEngagement events within `during`.
// Plain sums for all-time, fixed windows and runs (reset on a run change); `first N` sums among the first N
// engagement events; `last N` and `the_last` keep their values in an exact sliding sum (sums.ts).
// Numbers: [sum] | first [seen, sum] | last [sum, unsafe] + values | the_last [sum, unsafe] + values + times.

import type { During } from '../../query/ast.js';
import { isCount, isNumberList } from './shape.js';
import { numSource, tallySource, zeroSource } from './source.js';
import { addValue, isSumWindow, removeOldest } from './sums.js';
import { BaseSlot, noteExpiry, type Adoption, type SlotStore } from './types.js';
import { formOf, inFixedWindow, windowCount, windowMs, type Form } from './window.js';

export const ENGAGEMENT_EVENT = 'PageviewEngagement';

/**
 * The values and times every `last N` / `the_last` sum starts with: one frozen empty array for all of them (five
 * arrays a user with the bench's cohorts, ~160 bytes, most never filled); a slot's first value gives it arrays of
 * its own (`own`).
 */
const NO_VALUES = Object.freeze([]) as unknown as number[];

export class EngagedTimeSlot extends BaseSlot {
  readonly event = ENGAGEMENT_EVENT;
  readonly form: Form;
  private readonly ms: number;
  private readonly n: number;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly whereKey: string,
    private readonly during: During | undefined,
  ) {
    super();
    this.form = formOf(during);
    this.ms = windowMs(during);
    this.n = windowCount(during);
    this.needsUnmatched = this.form === 'first' || this.form === 'last';
    this.resetsOnSession = this.form === 'this_session';
    this.resetsOnView = this.form === 'current_view';
    this.timed = this.form === 'the_last';
    this.numWidth = this.form === 'first' || this.form === 'last' || this.form === 'the_last' ? 2 : 1;
    this.objWidth = this.form === 'last' ? 1 : this.form === 'the_last' ? 2 : 0;
  }

  init(s: SlotStore): void {
    s.nums.fill(0, this.num, this.num + this.numWidth);
    for (let j = 0; j < this.objWidth; j++) s.objs[this.obj + j] = NO_VALUES;
  }

  /** The slot's `j`th array, its own to change (the shared empty one replaced). */
  private own(s: SlotStore, j: number): number[] {
    let list = s.objs[this.obj + j] as number[];
    if (list === NO_VALUES) s.objs[this.obj + j] = list = [];
    return list;
  }

  protected check(s: SlotStore): Adoption {
    const nums = s.nums;
    const at = this.num;
    switch (this.form) {
      case 'first':
        return isCount(nums[at]) && (nums[at] as number) <= this.n && !Number.isNaN(nums[at + 1] as number) ? 'current' : 'invalid';
      case 'last': {
        const values = s.objs[this.obj];
        return isSumWindow(nums, at, values) && values.length <= this.n ? 'current' : 'invalid';
      }
      case 'the_last': {
        const values = s.objs[this.obj];
        const times = s.objs[this.obj + 1];
        return isSumWindow(nums, at, values) && isNumberList(times) && times.length === values.length ? 'current' : 'invalid';
      }
      default:
        return Number.isNaN(nums[at] as number) ? 'invalid' : 'current';
    }
  }

  onEvent(s: SlotStore, matched: boolean): boolean {
    const nums = s.nums;
    const at = this.num;
    const seconds = s.engagedSeconds;
    switch (this.form) {
      case 'first':
        if ((nums[at] as number) >= this.n) return false;
        nums[at] = (nums[at] as number) + 1;
        if (matched) nums[at + 1] = (nums[at + 1] as number) + seconds;
        return matched;
      case 'last': {
        const values = this.own(s, 0);
        addValue(nums, at, values, matched ? seconds : 0);
        removeOldest(nums, at, values, values.length - this.n);
        return true;
      }
      case 'the_last':
        if (!matched) return false;
        addValue(nums, at, this.own(s, 0), seconds);
        this.own(s, 1).push(s.time);
        noteExpiry(s, this.expiryAt, s.time + this.ms);
        return true;
      case 'in_interval':
      case 'before':
      case 'after':
        if (!matched || !inFixedWindow(this.during, s.time)) return false;
        nums[at] = (nums[at] as number) + seconds;
        return true;
      default:
        if (!matched) return false;
        nums[at] = (nums[at] as number) + seconds;
        return true;
    }
  }

  /** Plain sums and `first N` as generated code (state/generated.ts); sliding sums keep their calls. */
  eventSource(matched: string, changed: string, constants: number[]): string | undefined {
    return tallySource('nums', this.form, this.during, this.n, this.num, 's.engagedSeconds', matched, changed, constants);
  }

  resetSource(changed: string): string {
    return zeroSource('nums', this.num, 1, changed);
  }

  valueSource(): string {
    return numSource(this.form === 'first' ? this.num + 1 : this.num);
  }

  onSessionStart(s: SlotStore): boolean {
    return resetSum(s.nums, this.num);
  }

  onViewStart(s: SlotStore): boolean {
    return resetSum(s.nums, this.num);
  }

  refresh(s: SlotStore): boolean {
    const times = s.objs[this.obj + 1] as number[];
    const cutoff = s.time - this.ms;
    if (times.length === 0 || (times[0] as number) > cutoff) return false;
    let k = 1;
    while (k < times.length && (times[k] as number) <= cutoff) k++;
    times.splice(0, k);
    removeOldest(s.nums, this.num, s.objs[this.obj] as number[], k);
    return true;
  }

  expiry(s: SlotStore): number {
    const times = s.objs[this.obj + 1] as number[];
    return times.length === 0 ? Number.POSITIVE_INFINITY : (times[0] as number) + this.ms;
  }

  value(s: SlotStore): number {
    return s.nums[this.form === 'first' ? this.num + 1 : this.num] as number;
  }
}

function resetSum(nums: Float64Array, at: number): boolean {
  if (nums[at] === 0) return false;
  nums[at] = 0;
  return true;
}
