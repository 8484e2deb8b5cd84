// engaged_views slots (E9): the number of view runs whose matching engagement meets a per-view threshold, within
// `during`. The current view is an accumulator; views are closed into a counter / ring / bits when the view run
// changes. Numbers: [has, total, hasCompletion, time, firstIndex, ordinal, ...closed part by form].

import type { During } from '../../query/ast.js';
import type { NumberTest } from '../../plan/comparison.js';
import { bitRingWidths, initBitRing, isBitRing, onesAmongNewest, pushBit } from './bits.js';
import { ENGAGEMENT_EVENT } from './engaged-time.js';
import { areCounts, areFlags } from './shape.js';
import { BaseSlot, noteExpiry, type Adoption, type SlotStore } from './types.js';
import { TimeRingLayout, formOf, inFixedWindow, windowCount, windowMs, type Form } from './window.js';

const HAS = 0;
const TOTAL = 1;
const HAS_COMPLETION = 2;
const TIME = 3;
const FIRST_INDEX = 4;
const ORDINAL = 5;
const CLOSED = 6;
const SEEN = 7;

export class EngagedViewsSlot extends BaseSlot {
  readonly event = ENGAGEMENT_EVENT;
  readonly form: Form;
  private readonly ms: number;
  private readonly n: number;
  private readonly ring: TimeRingLayout;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly whereKey: string,
    private readonly during: During | undefined,
    private readonly measure: 'engaged_time' | 'completion',
    private readonly perView: NumberTest,
    /** For `the_last`: the count from which every sharing `times` comparison is decided (countCap). */
    readonly cap: number,
  ) {
    super();
    this.form = formOf(during);
    this.ms = windowMs(during);
    this.n = windowCount(during);
    this.resetsOnView = true;
    this.resetsOnSession = this.form === 'this_session';
    this.timed = this.form === 'the_last';
    this.ring = new TimeRingLayout(cap);
    this.numWidth =
      this.form === 'current_view' ? CLOSED
      : this.form === 'first' ? CLOSED + 2
      : this.form === 'last' ? CLOSED + bitRingWidths(this.n).numWidth
      : this.form === 'the_last' ? CLOSED + this.ring.numWidth
      : CLOSED + 1;
    this.objWidth = this.form === 'last' ? bitRingWidths(this.n).objWidth : this.form === 'the_last' ? this.ring.objWidth : 0;
  }

  init(s: SlotStore): void {
    s.nums.fill(0, this.num, this.num + this.numWidth);
    if (this.form === 'last') initBitRing(s.nums, this.num + CLOSED, s.objs, this.obj, this.n);
    if (this.form === 'the_last') this.ring.init(s.nums, this.num + CLOSED, s.objs, this.obj);
  }

  /** `the_last`: the current view's numbers, then the closed ring as [cap, times] whatever the layout. */
  encode(s: SlotStore): unknown[] {
    if (this.form !== 'the_last') return super.encode(s);
    return [...Array.from(s.nums.subarray(this.num, this.num + CLOSED)), ...this.ring.encode(s.nums, this.num + CLOSED, s.objs, this.obj)];
  }

  adopt(tuple: unknown, s: SlotStore): Adoption {
    if (this.form !== 'the_last') return super.adopt(tuple, s);
    if (!Array.isArray(tuple) || tuple.length !== CLOSED + 2) return 'invalid';
    for (let i = 0; i < CLOSED; i++) {
      const v: unknown = tuple[i];
      if (typeof v !== 'number') return 'invalid';
      s.nums[this.num + i] = v;
    }
    if (this.checkCurrent(s.nums) === 'invalid') return 'invalid';
    return this.ring.adopt(tuple[CLOSED], tuple[CLOSED + 1], s.nums, this.num + CLOSED, s.objs, this.obj);
  }

  private checkCurrent(nums: Float64Array): Adoption {
    const at = this.num;
    if (!areFlags(nums, at + HAS, 1) || !areFlags(nums, at + HAS_COMPLETION, 1)) return 'invalid';
    if (Number.isNaN(nums[at + TOTAL] as number) || Number.isNaN(nums[at + TIME] as number)) return 'invalid';
    return areCounts(nums, at + FIRST_INDEX, 2) ? 'current' : 'invalid';
  }

  protected check(s: SlotStore): Adoption {
    const nums = s.nums;
    const at = this.num;
    if (this.checkCurrent(nums) === 'invalid') return 'invalid';
    switch (this.form) {
      case 'current_view':
        return 'current';
      case 'first':
        return areCounts(nums, at + CLOSED, 2) ? 'current' : 'invalid';
      case 'last':
        return isBitRing(nums, at + CLOSED, s.objs, this.obj, this.n) ? 'current' : 'invalid';
      default:
        return areCounts(nums, at + CLOSED, 1) ? 'current' : 'invalid';
    }
  }

  onEvent(s: SlotStore, matched: boolean): boolean {
    if (!matched) return false;
    const nums = s.nums;
    const at = this.num;
    if (nums[at + HAS] === 0) {
      nums[at + HAS] = 1;
      nums[at + FIRST_INDEX] = s.index;
      if (this.form === 'first') {
        nums[at + SEEN] = (nums[at + SEEN] as number) + 1;
        nums[at + ORDINAL] = nums[at + SEEN] as number;
      }
    }
    if (this.measure === 'engaged_time') {
      nums[at + TOTAL] = (nums[at + TOTAL] as number) + s.engagedSeconds;
    } else {
      const c = s.engagedCompletion;
      if (!Number.isNaN(c) && (nums[at + HAS_COMPLETION] === 0 || c > (nums[at + TOTAL] as number))) {
        nums[at + TOTAL] = c;
        nums[at + HAS_COMPLETION] = 1;
      }
    }
    nums[at + TIME] = s.time;
    if (this.timed) noteExpiry(s, this.expiryAt, s.time + this.ms);
    return true;
  }

  /** Closes the previous view run into the closed part, then starts an empty current view. */
  onViewStart(s: SlotStore): boolean {
    const nums = s.nums;
    const at = this.num;
    if (nums[at + HAS] === 0) return false;
    const q = this.qualifies(nums);
    switch (this.form) {
      case 'first':
        if (q && (nums[at + ORDINAL] as number) <= this.n) nums[at + CLOSED] = (nums[at + CLOSED] as number) + 1;
        break;
      case 'last':
        pushBit(nums, at + CLOSED, s.objs, this.obj, this.n, q);
        break;
      case 'the_last':
        if (q) {
          this.ring.push(nums, at + CLOSED, s.objs, this.obj, nums[at + TIME] as number);
          noteExpiry(s, this.expiryAt, (nums[at + TIME] as number) + this.ms);
        }
        break;
      case 'this_session':
        if (q && (nums[at + FIRST_INDEX] as number) >= s.sessionStartIndex) nums[at + CLOSED] = (nums[at + CLOSED] as number) + 1;
        break;
      case 'current_view':
        break;
      default:
        if (q && inFixedWindow(this.during, nums[at + TIME] as number)) nums[at + CLOSED] = (nums[at + CLOSED] as number) + 1;
    }
    nums.fill(0, at, at + CLOSED);
    return true;
  }

  onSessionStart(s: SlotStore): boolean {
    const at = this.num;
    const had = s.nums[at + CLOSED] !== 0 || s.nums[at + HAS] === 1;
    s.nums[at + CLOSED] = 0;
    return had;
  }

  refresh(s: SlotStore): boolean {
    const cutoff = s.time - this.ms;
    const evicted = this.ring.evict(s.nums, this.num + CLOSED, s.objs, this.obj, cutoff);
    const t = s.nums[this.num + TIME] as number;
    const currentLeft = s.nums[this.num + HAS] === 1 && t <= cutoff && t > s.prevTime - this.ms;
    return evicted || currentLeft;
  }

  expiry(s: SlotStore): number {
    const closed = this.ring.oldest(s.nums, this.num + CLOSED, s.objs, this.obj) + this.ms;
    // The current view, once it has left the window (refresh saw it leave), changes only at its next event.
    const leaves = (s.nums[this.num + TIME] as number) + this.ms;
    const current = s.nums[this.num + HAS] === 1 && leaves > s.time ? leaves : Number.POSITIVE_INFINITY;
    return Math.min(closed, current);
  }

  value(s: SlotStore): number {
    const nums = s.nums;
    const at = this.num;
    const q = this.qualifies(nums) ? 1 : 0;
    switch (this.form) {
      case 'current_view':
        return q;
      case 'first':
        return (nums[at + CLOSED] as number) + (q && (nums[at + ORDINAL] as number) <= this.n ? 1 : 0);
      case 'last':
        if (this.n <= 0) return 0;
        return onesAmongNewest(nums, at + CLOSED, s.objs, this.obj, this.n, nums[at + HAS] === 1 ? this.n - 1 : this.n) + q;
      case 'the_last':
        return this.ring.length(nums, at + CLOSED, s.objs, this.obj) + (q && (nums[at + TIME] as number) > s.time - this.ms ? 1 : 0);
      case 'this_session':
        return (nums[at + CLOSED] as number) + (q && (nums[at + FIRST_INDEX] as number) >= s.sessionStartIndex ? 1 : 0);
      default:
        return (nums[at + CLOSED] as number) + (q && inFixedWindow(this.during, nums[at + TIME] as number) ? 1 : 0);
    }
  }

  /** E9: a view qualifies when it has a matching engagement event and its total meets the per-view comparison. */
  private qualifies(nums: Float64Array): boolean {
    return nums[this.num + HAS] === 1 && this.perView(nums[this.num + TOTAL] as number);
  }
}
