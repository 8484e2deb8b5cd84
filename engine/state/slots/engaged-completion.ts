// engaged_completion slots (E6, E8): the largest completion of matching engagement events in the current view run,
// 0 when there is none. Numbers: [has, largest]; reset when the view run changes.

import { areFlags } from './shape.js';
import { numSource, zeroSource } from './source.js';
import { BaseSlot, type Adoption, type SlotStore } from './types.js';
import { ENGAGEMENT_EVENT } from './engaged-time.js';

export class EngagedCompletionSlot extends BaseSlot {
  readonly event = ENGAGEMENT_EVENT;

  constructor(
    readonly key: string,
    readonly id: number,
    readonly whereKey: string,
  ) {
    super();
    this.resetsOnView = true;
    this.numWidth = 2;
  }

  init(s: SlotStore): void {
    s.nums[this.num] = 0;
    s.nums[this.num + 1] = 0;
  }

  protected check(s: SlotStore): Adoption {
    return areFlags(s.nums, this.num, 1) && !Number.isNaN(s.nums[this.num + 1] as number) ? 'current' : 'invalid';
  }

  onEvent(s: SlotStore, matched: boolean): boolean {
    const c = s.engagedCompletion;
    if (!matched || Number.isNaN(c)) return false;
    const nums = s.nums;
    if (nums[this.num] === 1 && c <= (nums[this.num + 1] as number)) return false;
    nums[this.num] = 1;
    nums[this.num + 1] = c;
    return true;
  }

  /** onEvent as generated code (state/generated.ts): `c === c` is onEvent's `!Number.isNaN(c)`. */
  eventSource(matched: string, changed: string): string {
    const has = numSource(this.num);
    const largest = numSource(this.num + 1);
    return `if (${matched}) { const c = s.engagedCompletion; if (c === c && !(${has} === 1 && c <= ${largest})) { ${has} = 1; ${largest} = c; ${changed} } }`;
  }

  resetSource(changed: string): string {
    return zeroSource('nums', this.num, 2, changed);
  }

  valueSource(): string {
    return `(${numSource(this.num)} === 1 ? ${numSource(this.num + 1)} : 0)`;
  }

  onViewStart(s: SlotStore): boolean {
    if (s.nums[this.num] === 0) return false;
    s.nums[this.num] = 0;
    s.nums[this.num + 1] = 0;
    return true;
  }

  value(s: SlotStore): number {
    return s.nums[this.num] === 1 ? (s.nums[this.num + 1] as number) : 0;
  }
}
